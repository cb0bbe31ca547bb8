"""The concurrency phase of the analytics workload: Q1-Q5 from many clients at once.

After the cold/hot queries, for each number of clients (``--clients 1,4,16,64``) the driver
spawns client processes (concurrent_clients.py), waits until every session is open, gives
them one start time and lets them query for ``--duration`` seconds after a warm-up. The
engine's processes (a server's whole process tree; for an embedded engine the client
processes, which are the engine) are sampled for CPU time and resident memory meanwhile.
Then the same levels run against :class:`~concurrent_clients.OracleEcho`, which answers at
once: the driver's own ceiling on this machine, printed beside the engine's figures.

Clients spread round-robin over at most ``--client-processes`` processes, each client with
its own session on a thread of its own (the engines' calls release the GIL while they
work). A system whose engine is one per process (chDB) or is built to share one database
among connections (DuckDB) sets ``AnalyticsAdapter.concurrent_clients = "threads"``: its
clients are threads of one process, as its users run it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import queue as queue_module
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from docbench import procstats
from docbench.contracts.analytics import AnalyticsAdapter
from docbench.core import histograms
from docbench.workloads.analytics.concurrent_clients import (
    OUTCOMES,
    QUERY_NUMBERS,
    ClientsConfig,
    process_main,
)

READY_TIMEOUT_S = 300.0
START_DELAY_S = 0.2
FINISH_GRACE_S = 60.0


@dataclass
class ConcurrencyRequest:
    clients: list[int]
    duration_s: float = 60.0
    warmup_s: float = 5.0
    # Target queries per second over all clients (open loop); None: closed loop.
    rate: float | None = None
    seed: int = 1
    max_processes: int = 16
    timeout_s: float = 600.0
    # Also measure the driver's ceiling (the same levels against OracleEcho).
    ceiling: bool = True
    # A live bar per level on stderr (the run's --quiet turns it off).
    progress: bool = True


@dataclass
class Level:
    """One number of clients: who runs where, and what came back."""

    clients: int
    processes: int
    finals: dict[int, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    engine: dict[str, Any] = field(default_factory=dict)


def spread(clients: int, processes: int) -> list[list[int]]:
    """Client ids round-robin over the processes (no empty process)."""
    processes = max(1, min(processes, clients))
    return [list(range(p, clients, processes)) for p in range(processes)]


def process_count(system: AnalyticsAdapter | None, clients: int, request: ConcurrencyRequest) -> int:
    if system is not None and system.concurrent_clients == "threads":
        return 1
    return max(1, min(clients, request.max_processes))


def run_concurrency(
    system: AnalyticsAdapter, expected: dict[str, Any], request: ConcurrencyRequest, say: Any = print
) -> dict[str, Any]:
    """Every level on the engine, then (when asked) on the echo: the result's ``concurrency``."""
    texts = system.queries()
    system.release()  # an embedded engine's file is opened by the client processes
    spec = {**system.session_spec(), "timeout": request.timeout_s}
    record: dict[str, Any] = {
        "mode": "open loop" if request.rate else "closed loop",
        "rate": request.rate,
        "duration_s": request.duration_s,
        "warmup_s": request.warmup_s,
        "seed": request.seed,
        "timeout_s": request.timeout_s,
        "clients_in": "one process (threads)" if system.concurrent_clients == "threads" else "processes",
        "engine_measured": "server process tree" if system.engine.server_pids() else "client processes",
        "levels": [],
        "ceiling": [],
    }
    for clients in request.clients:
        level = run_level(system, spec, texts, expected, clients, request)
        record["levels"].append(summarize(level, request))
        say(level_line(f"{system.name}/{system.variant.name}", record["levels"][-1]))
    if request.ceiling:
        for clients in request.clients:
            level = run_level(None, {}, texts, expected, clients, request)
            record["ceiling"].append(summarize(level, request))
            say(level_line("driver ceiling (no engine)", record["ceiling"][-1]))
    return record


def run_level(
    system: AnalyticsAdapter | None,
    spec: dict[str, Any],
    texts: list[str],
    expected: dict[str, Any],
    clients: int,
    request: ConcurrencyRequest,
) -> Level:
    """Spawn the processes, start them together, collect their finals (or the reason not)."""
    groups = spread(clients, process_count(system, clients, request))
    level = Level(clients=clients, processes=len(groups))
    ctx = multiprocessing.get_context("spawn")
    events = ctx.Queue()
    go = ctx.Event()
    start_at = ctx.Value("q", 0)
    configs = [
        ClientsConfig(
            process_id=i,
            client_ids=ids,
            system_name=system.name if system else None,
            spec=spec,
            texts=texts,
            expected=expected,
            seed=request.seed,
            warmup_s=request.warmup_s,
            duration_s=request.duration_s,
            timeout_s=request.timeout_s,
            total_clients=clients,
            rate=request.rate,
            time_precision_us=system.time_precision_us if system else 1,
            approximate=frozenset(system.approximate_queries) if system else frozenset(),
        )
        for i, ids in enumerate(groups)
    ]
    processes = [
        ctx.Process(target=process_main, args=(c, events, go, start_at), daemon=True) for c in configs
    ]
    try:
        for process in processes:
            process.start()
        level.error = wait_ready(events, len(processes))
        if level.error:
            return level
        roots = (system.engine.server_pids() if system else []) or [p.pid for p in processes if p.pid]
        with procstats.TreeMonitor(roots) as monitor:
            start_at.value = time.monotonic_ns() + int(START_DELAY_S * 1e9)
            go.set()
            run_s = request.warmup_s + request.duration_s
            label = f"{system.name if system else 'driver ceiling'}: {clients} clients"
            with level_progress(label, run_s, request.progress) as tick:
                level.finals, level.error = collect_finals(
                    events, len(processes), run_s + request.timeout_s, tick
                )
        level.engine = monitor.record()
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
            process.join(10)
    return level


def wait_ready(events: Any, count: int) -> str | None:
    """None when every process has opened its sessions, else the first reason it did not."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    ready = 0
    while ready < count:
        try:
            _, process_id, error = events.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue_module.Empty:
            return f"the client sessions did not open within {READY_TIMEOUT_S:g} s"
        if error:
            return f"client process {process_id} could not open its sessions: {error}"
        ready += 1
    return None


@contextlib.contextmanager
def level_progress(label: str, run_s: float, shown: bool) -> Iterator[Callable[[], None]]:
    """A transient bar of the level's time (warm-up included) on stderr; yields the function
    that moves it to the time elapsed."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    began = time.monotonic()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not shown,
    ) as progress:
        task = progress.add_task(label, total=run_s)
        yield lambda: progress.update(task, completed=min(run_s, time.monotonic() - began))


def collect_finals(
    events: Any, count: int, within_s: float, tick: Callable[[], None] = lambda: None
) -> tuple[dict[int, dict[str, Any]], str | None]:
    deadline = time.monotonic() + within_s + FINISH_GRACE_S
    finals: dict[int, dict[str, Any]] = {}
    while len(finals) < count:
        if time.monotonic() >= deadline:
            missing = count - len(finals)
            return finals, f"{missing} client process(es) did not finish (killed; their queries are lost)"
        tick()
        try:
            _, process_id, message = events.get(timeout=0.5)
        except queue_module.Empty:
            continue
        finals[process_id] = message
    return finals, None


def summarize(level: Level, request: ConcurrencyRequest) -> dict[str, Any]:
    """The level's figures: QPS, latency percentiles, outcome counts, overall and per query."""
    per_query = []
    overall = histograms.new_histogram()
    totals = dict.fromkeys(OUTCOMES, 0)
    for number in QUERY_NUMBERS:
        parts = [f["queries"][number] for f in level.finals.values()]
        merged = histograms.merge([p["histogram"] for p in parts])
        overall.add(merged)
        counts = {o: sum(p["counts"][o] for p in parts) for o in OUTCOMES}
        for outcome, count in counts.items():
            totals[outcome] += count
        sent = sum(counts.values())
        per_query.append(
            {
                "query": number,
                "queries": sent,
                "qps": round(counts["ok"] / request.duration_s, 3),
                "outcomes": counts,
                "error_ratio": round((sent - counts["ok"]) / sent, 4) if sent else None,
                "latency_ms": _rounded(histograms.latency_summary(merged)),
                "first_problem": next((p["first_problem"] for p in parts if p["first_problem"]), None),
            }
        )
    sent = sum(totals.values())
    return {
        "clients": level.clients,
        "processes": level.processes,
        "error": level.error,
        "queries": sent,
        "qps": round(totals["ok"] / request.duration_s, 3),
        "outcomes": totals,
        "error_ratio": round((sent - totals["ok"]) / sent, 4) if sent else None,
        "latency_ms": _rounded(histograms.latency_summary(overall)),
        "histogram": overall.encode().decode() if overall.get_total_count() else "",
        "warmup_queries": sum(f["warmup_queries"] for f in level.finals.values()),
        "client_cpu_seconds": round(sum(f["cpu_seconds"] for f in level.finals.values()), 3),
        "engine": level.engine,
        "per_query": per_query,
    }


def _rounded(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in summary.items()}


def level_line(name: str, level: dict[str, Any]) -> str:
    if level["error"] and not level["queries"]:
        return f"{name}: {level['clients']} clients: not measured: {level['error']}"
    latency = level["latency_ms"]
    p99 = "-" if latency["p99_ms"] is None else f"{latency['p99_ms']:.1f} ms"
    problems = level["queries"] - level["outcomes"]["ok"]
    return (
        f"{name}: {level['clients']} clients: {level['qps']:.2f} qps, p99 {p99}, "
        f"{problems} of {level['queries']} not ok" + (f" ({level['error']})" if level["error"] else "")
    )
