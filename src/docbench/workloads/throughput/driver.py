"""The throughput driver: spawn worker processes, start them together, print progress, merge.

``clients`` are spread round-robin over ``processes`` spawned workers (pgbench's ``-c`` and
``-j``), so the Python interpreter of one process is not the ceiling. The driver waits until
every client has connected (the initial connection time is reported apart, as pgbench does),
then gives all workers one start time on the shared monotonic clock.
"""

from __future__ import annotations

import queue as queue_module
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from docbench.contracts.mixes import WRITES
from docbench.core import histograms, procstats
from docbench.core.jsontypes import JsonObject
from docbench.workloads import fresh_process
from docbench.workloads.throughput.clients import FinalMessage, OperationMessage, WorkerConfig
from docbench.workloads.throughput.worker import worker_main

READY_TIMEOUT_S = 300.0
START_DELAY_S = 0.2


@dataclass
class DriveRequest:
    target_module: str
    session_spec: JsonObject
    mix: str
    distribution: str
    docs: int
    clients: int
    processes: int
    duration_s: float
    warmup_s: float = 0.0
    interval_s: float = 5.0
    rate: float | None = None
    seed: int = 1
    cgroup_files: list[str] = field(default_factory=list)
    # The client loop: auto, compiled, multiplexed or threads (clients.WorkerConfig.loop).
    loop: str = "auto"


@dataclass
class Interval:
    slot: int
    end_s: float
    ops: int
    failed: int
    histogram: Any
    warmup: bool

    def progress_line(self, interval_s: float, lag_ms: float | None = None) -> str:
        summary = histograms.latency_summary(self.histogram)
        tps = self.ops / max(1e-9, self.end_s - self.slot * interval_s)
        text = f"progress: {self.end_s:.1f} s, {tps:.1f} tps"
        if summary["count"]:
            text += f", lat {summary['avg_ms']:.3f} ms stddev {summary['stddev_ms']:.3f}"
        text += f", {self.failed} failed"
        if self.warmup:
            text += " (warm-up)"
        return text


def _configs(request: DriveRequest) -> list[WorkerConfig]:
    processes = max(1, min(request.processes, request.clients))
    per_client_rate = request.rate / request.clients if request.rate else None
    return [
        WorkerConfig(
            worker_id=worker,
            client_ids=list(range(worker, request.clients, processes)),
            total_clients=request.clients,
            target_module=request.target_module,
            session_spec=request.session_spec,
            mix=request.mix,
            distribution=request.distribution,
            docs=request.docs,
            seed=request.seed,
            warmup_s=request.warmup_s,
            duration_s=request.duration_s,
            interval_s=request.interval_s,
            rate_per_client=per_client_rate,
            cgroup_files=list(request.cgroup_files),
            loop=request.loop,
        )
        for worker in range(processes)
    ]


class DriverError(RuntimeError):
    pass


class ServerDied(DriverError):
    """The server the clients talk to has ended (the message names it and its PID)."""


@dataclass(frozen=True)
class ServerWatch:
    """The server process a run needs, known by PID and start time (a PID is reused): its
    death ends the run at once, instead of after the clients' and the checks' timeouts."""

    name: str
    pid: int
    start_time: int | None

    @classmethod
    def of(cls, name: str, pid: int | None) -> ServerWatch | None:
        """The watch of process ``pid`` (None: no server process, an embedded engine)."""
        return None if pid is None else cls(name, pid, procstats.process_start_time(pid))

    def check(self) -> None:
        """Raise ServerDied when the process has ended (a zombie counts as ended)."""
        if procstats.process_start_time(self.pid) != self.start_time:
            raise ServerDied(f"{self.name} server (PID {self.pid}) died during the run")


def _wait_ready(events, workers: list, count: int, watch: ServerWatch | None = None) -> list[int]:
    connect_ns: list[int] = []
    ready = 0
    deadline = time.monotonic() + READY_TIMEOUT_S
    while ready < count:
        if watch is not None:
            watch.check()
        try:
            message = events.get(timeout=1.0)
        except queue_module.Empty:
            if time.monotonic() > deadline or not all(p.is_alive() for p in workers):
                raise DriverError("a client worker did not start (no connection?)") from None
            continue
        if message[0] == "failed":
            raise DriverError(f"client worker {message[1]} could not connect: {message[2]}")
        connect_ns.extend(message[2])
        ready += 1
    return connect_ns


def drive(
    request: DriveRequest,
    on_progress: Callable[[str], None] | None = None,
    during: Callable[[float], None] | None = None,
    on_ready: Callable[[], None] | None = None,
    watch: ServerWatch | None = None,
) -> JsonObject:
    """Run the clients; the merged figures (see ``summarize``). ``on_ready()`` runs once every
    client has connected, before the start; ``during(t)`` is called from the driver's own
    loop about every 0.1 s with the seconds since start (tests use it to inject a stall).
    ``watch``: the server, checked as often; its death stops the clients and raises
    ServerDied."""
    context = fresh_process.context()
    events = context.Queue()
    go = context.Event()
    start_at = context.Value("q", 0)
    configs = _configs(request)
    workers = [
        fresh_process.process(
            worker_main,
            (config, events, go, start_at),
            name=f"docbench-client-{config.worker_id}",
            daemon=True,
        )
        for config in configs
    ]
    for worker in workers:
        worker.start()
    try:
        connect_ns = _wait_ready(events, workers, len(workers), watch)
        if on_ready is not None:
            on_ready()
        start_at.value = time.monotonic_ns() + int(START_DELAY_S * 1e9)
        go.set()
        if watch is not None:
            during = _watching(watch, during)
        intervals, finals = _collect(events, workers, configs, request, start_at.value, on_progress, during)
    except BaseException:
        # Nothing more to measure, not the rest of the run's duration: the workers are
        # ended at once (SIGTERM; their compiled clients die with them).
        fresh_process.end_processes(workers, grace_s=0)
        if watch is not None:
            watch.check()  # clients that failed because the server died: say that
        raise
    fresh_process.end_processes(workers, grace_s=30)  # their figures are in: they exit by themselves
    return summarize(request, intervals, finals, connect_ns)


def _watching(watch: ServerWatch, during: Callable[[float], None] | None) -> Callable[[float], None]:
    def check(seconds: float) -> None:
        watch.check()
        if during is not None:
            during(seconds)

    return check


def _collect(events, workers, configs, request, start_ns, on_progress, during):
    slots = configs[0].intervals
    pending: dict[int, list[tuple[str, int]]] = {}
    intervals: list[Interval] = []
    finals: dict[int, FinalMessage] = {}
    deadline = time.monotonic() + START_DELAY_S + request.warmup_s + request.duration_s + 120
    while len(finals) < len(workers):
        if during is not None:
            during((time.monotonic_ns() - start_ns) / 1e9)
        try:
            message = events.get(timeout=0.1)
        except queue_module.Empty:
            if time.monotonic() > deadline or not any(w.is_alive() for w in workers):
                raise DriverError(f"client workers stopped without reporting ({_exits(workers)})") from None
            continue
        if message[0] == "interval":
            _, _worker, slot, encoded, failed = message
            pending.setdefault(slot, []).append((encoded, failed))
            if len(pending[slot]) == len(workers):
                interval = _merge_interval(slot, pending.pop(slot), request, slots)
                intervals.append(interval)
                if on_progress is not None:
                    on_progress(interval.progress_line(request.interval_s))
        elif message[0] == "final":
            finals[message[1]] = message[2]
    return intervals, finals


def _exits(workers: list) -> str:
    codes = [w.exitcode for w in workers]
    text = f"exit codes {codes}"
    if -9 in codes:
        text += "; SIGKILL: out of memory? (the io scenario's memory cap, or the machine's OOM killer)"
    return text


def _merge_interval(slot: int, parts: list[tuple[str, int]], request: DriveRequest, slots: int) -> Interval:
    histogram = histograms.merge([encoded for encoded, _ in parts])
    end_s = min((slot + 1) * request.interval_s, request.warmup_s + request.duration_s)
    return Interval(
        slot=slot,
        end_s=end_s,
        ops=histogram.get_total_count(),
        failed=sum(failed for _, failed in parts),
        histogram=histogram,
        warmup=end_s <= request.warmup_s,
    )


def summarize(
    request: DriveRequest, intervals: list[Interval], finals: dict[int, FinalMessage], connect_ns: list[int]
) -> JsonObject:
    """The run's figures, as a result's ``summary`` keeps them (and the interval series and
    histograms, which go beside the result)."""
    per_op: dict[str, list[OperationMessage]] = {}
    service_all, response_all = histograms.new_histogram(), histograms.new_histogram()
    for final in finals.values():
        for operation, parts in final["operations"].items():
            per_op.setdefault(operation, []).extend(parts)
    operations: JsonObject = {}
    ok_total = failed_total = writes = 0
    for operation, parts in sorted(per_op.items()):
        service = histograms.merge([p["service"] for p in parts])
        response = histograms.merge([p["response"] for p in parts])
        service_all.add(service)
        response_all.add(response)
        ok = sum(p["ok"] for p in parts)
        failed = sum(p["failed"] for p in parts)
        ok_total += ok
        failed_total += failed
        writes += ok if operation in WRITES else 0
        entry: JsonObject = {
            "ok": ok,
            "failed": failed,
            "rows_changed": sum(p["rows_changed"] for p in parts),
            "not_found": sum(p["not_found"] for p in parts),
            "first_error": next((p["first_error"] for p in parts if p["first_error"]), None),
            "tps": ok / request.duration_s,
            "service": _latency(service),
            "response": _latency(response),
            "histogram_service": service.encode().decode("ascii"),
            "histogram_response": response.encode().decode("ascii"),
        }
        operations[operation] = entry
    lag = histograms.merge([final["lag"] for final in finals.values()])
    latency = response_all if request.rate else service_all
    return {
        "transactions": ok_total,
        "failed": failed_total,
        "tps": ok_total / request.duration_s,
        "latency": histograms.latency_summary(latency),
        "service": histograms.latency_summary(service_all),
        "response": histograms.latency_summary(response_all),
        "schedule_lag": histograms.latency_summary(lag) if request.rate else None,
        "connection_ms": {
            "avg": sum(connect_ns) / len(connect_ns) / 1e6 if connect_ns else None,
            "max": max(connect_ns) / 1e6 if connect_ns else None,
        },
        "operations": operations,
        "writes": writes,
        "inserted_total": sum(final["inserted"] for final in finals.values()),
        "driver": driver_cost(finals),
        # Clients that stopped because their connection was gone (multiplexed loop).
        "aborted_clients": sum(final.get("aborted_clients", 0) for final in finals.values()),
        "histogram_service": service_all.encode().decode("ascii"),
        "histogram_response": response_all.encode().decode("ascii"),
        "intervals": [
            {
                "end_s": i.end_s,
                "ops": i.ops,
                "failed": i.failed,
                "warmup": i.warmup,
                "tps": i.ops / max(1e-9, i.end_s - i.slot * request.interval_s),
                **histograms.latency_summary(i.histogram),
            }
            for i in sorted(intervals, key=lambda i: i.slot)
        ],
        "interval_histograms": [
            i.histogram.encode().decode("ascii") for i in sorted(intervals, key=lambda i: i.slot)
        ],
    }


def driver_cost(finals: dict[int, FinalMessage]) -> JsonObject:
    """The CPU the client worker processes used from the start to their last operation's end
    (warm-up included), per operation they completed in that time (warm-up included too)."""
    cpu_ns = sum(final.get("cpu_ns", 0) for final in finals.values())
    done = sum(final.get("operations_done", 0) for final in finals.values())
    loops = sorted({final.get("loop", "threads") for final in finals.values()})
    return {
        "loop": "+".join(loops),
        "cpu_seconds": cpu_ns / 1e9,
        "operations": done,
        "cpu_us_per_op": cpu_ns / 1e3 / done if done else None,
    }


def _latency(histogram: Any) -> JsonObject:
    """histograms.latency_summary as a JSON object (its figures are floats or null)."""
    return {**histograms.latency_summary(histogram)}
