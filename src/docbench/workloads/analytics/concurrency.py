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
import dataclasses
import queue as queue_module
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from docbench.contracts.analytics import AnalyticsAdapter
from docbench.contracts.capabilities import BlueskyQueries, capability
from docbench.contracts.portable import CompiledQuery
from docbench.core import histograms, procstats
from docbench.core.jsontypes import JsonObject
from docbench.queries.spec import Query
from docbench.workloads import fresh_process
from docbench.workloads.analytics.concurrent_clients import (
    OUTCOMES,
    QUERY_NUMBERS,
    ClientsConfig,
    FinalMessage,
    process_main,
)

READY_TIMEOUT_S = 300.0
# The driver's ceiling needs no long window: against the echo every client answers thousands
# of times a second, and a window of the engine's length (minutes at 64 clients on a slow
# engine) would double the run for nothing.
CEILING_WINDOW_S = 10.0
CEILING_WARMUP_S = 2.0
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


# Latency figures in ms (histograms.latency_summary's, rounded): count, avg_ms, p50_ms...
Latency = dict[str, float | None]
# The engine's processes over the window (procstats.TreeMonitor.record): CPU seconds, cores...
EngineFigures = dict[str, float | int | None]


class QuerySummary(TypedDict):
    """One query's figures at a level (the result's ``per_query``)."""

    query: int
    queries: int
    qps: float | None
    outcomes: dict[str, int]
    error_ratio: float | None
    latency_ms: Latency
    first_problem: str | None


class LevelSummary(TypedDict):
    """A level's figures as the result keeps them (``levels`` and ``ceiling``)."""

    clients: int
    processes: int
    error: str | None
    warning: str | None
    partial: bool
    queries: int
    qps: float | None
    missed: int
    outcomes: dict[str, int]
    error_ratio: float | None
    latency_ms: Latency
    histogram: str
    warmup_queries: int
    client_cpu_seconds: float
    engine: EngineFigures | None
    per_query: list[QuerySummary]


class ConcurrencyRecord(TypedDict):
    """The result's ``concurrency``."""

    mode: str
    rate: float | None
    duration_s: float
    warmup_s: float
    seed: int
    timeout_s: float
    clients_in: str
    engine_measured: str
    levels: list[LevelSummary]
    ceiling: list[LevelSummary]
    queries: NotRequired[list[str]]  # a portable query set's names
    ceiling_duration_s: NotRequired[float]
    ceiling_warmup_s: NotRequired[float]


@dataclass
class Level:
    """One number of clients: who runs where, and what came back."""

    clients: int
    processes: int
    finals: dict[int, FinalMessage] = field(default_factory=dict)
    error: str | None = None
    engine: EngineFigures | None = None


def spread(clients: int, processes: int) -> list[list[int]]:
    """Client ids round-robin over the processes (no empty process)."""
    processes = max(1, min(processes, clients))
    return [list(range(p, clients, processes)) for p in range(processes)]


def process_count(layout: str, clients: int, request: ConcurrencyRequest) -> int:
    return 1 if layout == "threads" else max(1, min(clients, request.max_processes))


def engine_measured(system: AnalyticsAdapter) -> str:
    if system.engine.url is not None:
        return "not measured: a server by URL (its processes are not docbench's to read)"
    if system.engine.server_pids():
        return "the server's process tree (CPU time; memory as proportional set size)"
    return "the client processes, which hold the embedded engine (CPU time; memory as PSS)"


def run_concurrency(
    system: AnalyticsAdapter,
    expected: JsonObject,
    request: ConcurrencyRequest,
    say: Any = print,
    portable: list[tuple[Query, CompiledQuery, list[list[Any]]]] | None = None,
) -> ConcurrencyRecord:
    """Every level on the engine, then (when asked) on the echo: the result's ``concurrency``.
    ``portable``: a compiled query set's queries instead of Q1-Q5 (each with its answer)."""
    texts = (
        capability(system, BlueskyQueries).queries()
        if portable is None
        else [compiled.text for _, compiled, _ in portable]
    )
    system.release()  # an embedded engine's file is opened by the client processes
    # A connection of its own for each client, also where clients share a process (chDB).
    spec: JsonObject = {**system.session_spec(), "timeout": request.timeout_s, "own_connection": True}
    record: ConcurrencyRecord = {
        "mode": "open loop" if request.rate else "closed loop",
        "rate": request.rate,
        "duration_s": request.duration_s,
        "warmup_s": request.warmup_s,
        "seed": request.seed,
        "timeout_s": request.timeout_s,
        "clients_in": "one process (threads)" if system.concurrent_clients == "threads" else "processes",
        "engine_measured": engine_measured(system),
        "levels": [],
        "ceiling": [],
    }
    if portable is not None:
        record["queries"] = [query.name for query, _, _ in portable]
    for clients in request.clients:
        level = run_level(system, spec, texts, expected, clients, request, portable=portable)
        if not system.engine.is_alive():  # recorded, restarted, and the next level runs
            level.error = "; ".join(filter(None, [level.error, "the server crashed during this level"]))
            system.engine.restart()
        record["levels"].append(summarize(level, request))
        say(level_line(f"{system.name}/{system.variant.name}", record["levels"][-1]))
    if request.ceiling:
        # Closed loop always (at a target rate the echo would only show the rate), in the
        # system's own layout of clients (threads of one process, or processes), over a window
        # of at most CEILING_WINDOW_S.
        echo = dataclasses.replace(
            request,
            rate=None,
            duration_s=min(request.duration_s, CEILING_WINDOW_S),
            warmup_s=min(request.warmup_s, CEILING_WARMUP_S),
        )
        record["ceiling_duration_s"], record["ceiling_warmup_s"] = echo.duration_s, echo.warmup_s
        for clients in request.clients:
            level = run_level(
                None, {}, texts, expected, clients, echo, layout=system.concurrent_clients, portable=portable
            )
            record["ceiling"].append(summarize(level, echo))
            say(level_line("driver ceiling (no engine)", record["ceiling"][-1]))
    return record


def run_level(
    system: AnalyticsAdapter | None,
    spec: JsonObject,
    texts: list[str],
    expected: JsonObject,
    clients: int,
    request: ConcurrencyRequest,
    layout: str | None = None,
    portable: list[tuple[Query, CompiledQuery, list[list[Any]]]] | None = None,
) -> Level:
    """Spawn the processes, start them together, collect their finals (or the reason not)."""
    layout = layout or (system.concurrent_clients if system else "processes")
    groups = spread(clients, process_count(layout, clients, request))
    level = Level(clients=clients, processes=len(groups))
    ctx = fresh_process.context()
    events = ctx.Queue()
    go, release = ctx.Event(), ctx.Event()
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
            portable=portable,
        )
        for i, ids in enumerate(groups)
    ]
    processes = [
        fresh_process.process(process_main, (config, events, go, start_at, release), daemon=True)
        for config in configs
    ]
    finished = False
    try:
        for process in processes:
            process.start()
        level.error = wait_ready(events, processes)
        if level.error:
            return level
        level.engine, level.finals, level.error = measure(system, processes, events, go, start_at, request)
        finished = True
    finally:
        release.set()
        # Cut short (a signal, a client that could not start): no process is waited for.
        fresh_process.end_processes(processes, grace_s=10 if finished else 0)
    return level


def measure(
    system: AnalyticsAdapter | None,
    processes: list[Any],
    events: Any,
    go: Any,
    start_at: Any,
    request: ConcurrencyRequest,
) -> tuple[EngineFigures | None, dict[int, FinalMessage], str | None]:
    """Start the clients; the engine's CPU over exactly the measured window and its memory
    sampled meanwhile; the clients' finals."""
    by_url = system is not None and system.engine.url is not None
    roots = (system.engine.server_pids() if system else []) or [p.pid for p in processes if p.pid]
    run_s = request.warmup_s + request.duration_s
    label = f"{system.name if system else 'driver ceiling'}: {len(processes)} process(es)"
    with procstats.TreeMonitor([] if by_url else roots) as monitor:
        start_at.value = time.monotonic_ns() + int(START_DELAY_S * 1e9)
        go.set()
        measured_from = start_at.value / 1e9 + request.warmup_s
        window_end = measured_from + request.duration_s

        def tick() -> None:
            now = time.monotonic()
            if now >= measured_from:
                monitor.window_start()
            if now >= window_end:
                monitor.window_end()

        with level_progress(label, run_s + START_DELAY_S, request.progress) as show:

            def tick_and_show() -> None:
                tick()
                show()

            finals, error = collect_finals(
                events, processes, run_s + START_DELAY_S + request.timeout_s, tick_and_show
            )
        monitor.window_end()  # a level cut short: up to now
    return (None if by_url else monitor.record()), finals, error


def wait_ready(events: Any, processes: list[Any]) -> str | None:
    """None when every process has opened its sessions, else the first reason it did not."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    ready: set[int] = set()
    while len(ready) < len(processes):
        try:
            _, process_id, error = events.get(timeout=0.5)
        except queue_module.Empty:
            dead = [i for i, p in enumerate(processes) if p.exitcode is not None and i not in ready]
            if dead:
                code = processes[dead[0]].exitcode
                return f"client process {dead[0]} ended before its sessions were open (exit code {code})"
            if time.monotonic() > deadline:
                return f"the client sessions did not open within {READY_TIMEOUT_S:g} s"
            continue
        if error:
            return f"client process {process_id} could not open its sessions: {error}"
        ready.add(process_id)
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
    events: Any, processes: list[Any], within_s: float, tick: Callable[[], Any] = lambda: None
) -> tuple[dict[int, FinalMessage], str | None]:
    """Every process's final, or the reason some are missing: a process that died (its
    clients' queries are lost, said so) or that did not report in time (killed)."""
    deadline = time.monotonic() + within_s + FINISH_GRACE_S
    finals: dict[int, FinalMessage] = {}
    while len(finals) < len(processes):
        tick()
        try:
            _, process_id, message = events.get(timeout=0.5)
            finals[process_id] = message
            continue
        except queue_module.Empty:
            pass
        dead = [i for i, p in enumerate(processes) if p.exitcode is not None and i not in finals]
        if dead and events.empty():
            codes = ", ".join(f"{i} (exit code {processes[i].exitcode})" for i in dead)
            return finals, f"client process(es) {codes} died: their queries are not counted"
        if time.monotonic() >= deadline:
            missing = len(processes) - len(finals)
            return (
                finals,
                f"{missing} client process(es) did not finish (killed; their queries are not counted)",
            )
    return finals, None


def summarize(level: Level, request: ConcurrencyRequest) -> LevelSummary:
    """The level's figures: QPS, latency percentiles, outcome counts, overall and per query."""
    per_query: list[QuerySummary] = []
    # Some processes' queries missing: the figures are not the level's (QPS left out).
    partial = len(level.finals) < level.processes
    overall = histograms.new_histogram()
    totals = dict.fromkeys(OUTCOMES, 0)
    completed_total = 0
    numbers = sorted(next(iter(level.finals.values()))["queries"]) if level.finals else QUERY_NUMBERS
    for number in numbers:
        parts = [f["queries"][number] for f in level.finals.values()]
        merged = histograms.merge([p["histogram"] for p in parts])
        overall.add(merged)
        counts = {o: sum(p["counts"][o] for p in parts) for o in OUTCOMES}
        completed = sum(p["completed"] for p in parts)
        completed_total += completed
        for outcome, count in counts.items():
            totals[outcome] += count
        sent = sum(counts.values())
        per_query.append(
            {
                "query": number,
                "queries": sent,
                "qps": None
                if len(level.finals) < level.processes
                else round(counts["ok"] / request.duration_s, 3),
                "outcomes": counts,
                "error_ratio": round((sent - counts["ok"]) / sent, 4) if sent else None,
                "latency_ms": _rounded(histograms.latency_summary(merged)),
                "first_problem": next((p["first_problem"] for p in parts if p["first_problem"]), None),
            }
        )
    sent = sum(totals.values())
    latency = _rounded(histograms.latency_summary(overall))
    return {
        "clients": level.clients,
        "processes": level.processes,
        "error": level.error,
        # A level that did not run (partial, or an error before any query) is said by its error.
        "warning": None
        if partial or level.error
        else short_window(completed_total, level.clients, latency.get("avg_ms"), request.duration_s),
        "partial": partial,
        "queries": sent,
        "qps": None if partial else round(completed_total / request.duration_s, 3),
        "missed": sum(f.get("missed", 0) for f in level.finals.values()),
        "outcomes": totals,
        "error_ratio": round((sent - totals["ok"]) / sent, 4) if sent else None,
        "latency_ms": latency,
        "histogram": overall.encode().decode() if overall.get_total_count() else "",
        "warmup_queries": sum(f["warmup_queries"] for f in level.finals.values()),
        "client_cpu_seconds": round(sum(f["cpu_seconds"] for f in level.finals.values()), 3),
        "engine": level.engine,
        "per_query": per_query,
    }


# Answers per client in the window below which the level's QPS is not the engine's.
MIN_ROUNDS = 3


def short_window(completed: int, clients: int, mean_ms: float | None, duration_s: float) -> str | None:
    """A warning when the clients got fewer than MIN_ROUNDS answers each in the window: a
    closed loop of many clients on slow queries queues them, each answer takes clients x the
    query's time, and a window shorter than a few of those counts the first answers only
    (QPS too low, percentiles from the queries that happened to finish). The hint: a
    --duration of MIN_ROUNDS answers at the latency seen."""
    if not clients or completed >= MIN_ROUNDS * clients:
        return None
    hint = (
        f"run with --duration {max(duration_s * 2, MIN_ROUNDS * mean_ms / 1000):.0f} or more"
        if mean_ms
        else "run with a --duration several times the queries' time at this many clients"
    )
    return (
        f"{completed} answers from {clients} clients in the {duration_s:g} s window (under "
        f"{MIN_ROUNDS} each): QPS and percentiles count only the first answers; {hint}"
    )


def _rounded(summary: Mapping[str, float | None]) -> Latency:
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in summary.items()}


def level_line(name: str, level: LevelSummary) -> str:
    if level["qps"] is None:
        return f"{name}: {level['clients']} clients: not measured: {level['error']}"
    latency = level["latency_ms"]
    p99 = "-" if latency["p99_ms"] is None else f"{latency['p99_ms']:.1f} ms"
    problems = level["queries"] - level["outcomes"]["ok"]
    missed = f", {level['missed']} scheduled but not sent (behind the rate)" if level.get("missed") else ""
    return (
        f"{name}: {level['clients']} clients: {level['qps']:.2f} qps, p99 {p99}, "
        f"{problems} of {level['queries']} not ok{missed}"
        + (f" ({level['error']})" if level["error"] else "")
        + (f"\n  warning: {level['warning']}" if level.get("warning") else "")
    )
