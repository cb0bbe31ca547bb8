"""One worker process of the throughput driver and the clients (threads) it runs.

Each client has its own session (connection) opened through the system's
``UpdatesTarget.open_session(spec)``, so the workload never knows which system it talks to.
Clock: ``time.monotonic_ns`` (CLOCK_MONOTONIC, the same in every process), so all workers
share the driver's start time.

Per operation a client records, into HdrHistograms (ns):

* service time: from the moment the operation was actually issued to its end;
* response time: from its *intended* start to its end. Under ``--rate`` the intended starts
  follow a Poisson schedule (as pgbench's ``--rate``), so a stall delays every operation
  scheduled during it and shows in the response times (no coordinated omission). Without a
  rate the intended start is the actual one and both are equal;
* schedule lag: actual minus intended start.

Operations that start during the warm-up are run but not counted; every operation is counted
in the progress interval in which it ended.
"""

from __future__ import annotations

import random
import resource
import threading
import time
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from docbench.contracts import ycsb
from docbench.contracts.mixes import INSERT, READ, READ_MODIFY_WRITE, UPDATE, mix_named
from docbench.core import histograms
from docbench.core.jsontypes import JsonObject

# How long after an interval's end the worker waits for operations still finishing in it.
INTERVAL_GRACE_S = 0.05


class OperationMessage(TypedDict):
    """One operation kind's measured-window figures in one client (or one loop), as a worker
    sends them to the driver: counts and the encoded service and response histograms."""

    ok: int
    failed: int
    rows_changed: int
    not_found: int
    first_error: str | None
    service: str
    response: str


class FinalMessage(TypedDict):
    """What a worker sends the driver when its clients are done (the ``final`` event)."""

    operations: dict[str, list[OperationMessage]]
    lag: str  # the encoded schedule-lag histogram
    connect_ns: list[int]
    inserted: int
    cpu_ns: int
    operations_done: int
    loop: str
    # Clients that stopped because their connection was gone (the event loops only).
    aborted_clients: NotRequired[int]


@dataclass
class WorkerConfig:
    worker_id: int
    client_ids: list[int]
    total_clients: int
    target_module: str
    session_spec: JsonObject
    mix: str
    distribution: str
    docs: int
    seed: int
    warmup_s: float
    duration_s: float
    interval_s: float
    rate_per_client: float | None = None
    # The client loop (`--client-loop`): "auto" (compiled where the system offers it and
    # docbench-client is built, else multiplexed where its sessions are non-blocking, else
    # threads), or one of "compiled", "multiplexed", "threads" (to compare them).
    loop: str = "auto"
    # cgroup "tasks"/"cgroup.procs" files this process joins before opening the database
    # (the IO-bound scenario caps the memory of embedded engines this way).
    cgroup_files: list[str] = field(default_factory=list)

    @property
    def intervals(self) -> int:
        return max(1, int(-(-(self.warmup_s + self.duration_s) // self.interval_s)))


class OperationStats:
    """Measured-window figures of one operation kind in one client. Without a rate the
    response time is the service time: it is recorded once (a histogram record costs ~2 µs
    of the client's CPU) and reported as both."""

    def __init__(self, scheduled: bool) -> None:
        self.ok = 0
        self.failed = 0
        self.rows_changed = 0
        self.not_found = 0
        self.first_error: str | None = None
        self.service = histograms.new_histogram()
        self.response = histograms.new_histogram() if scheduled else self.service

    def as_message(self) -> OperationMessage:
        return {
            "ok": self.ok,
            "failed": self.failed,
            "rows_changed": self.rows_changed,
            "not_found": self.not_found,
            "first_error": self.first_error,
            "service": self.service.encode().decode("ascii"),
            "response": self.response.encode().decode("ascii"),
        }


class Client:
    def __init__(self, client_id: int, config: WorkerConfig, session: Any) -> None:
        self.id = client_id
        self.config = config
        self.session = session
        seed = config.seed * 7919 + client_id
        self.rng = random.Random(seed)
        self.operations = mix_named(config.mix).chooser(random.Random(seed + 1))
        self.keys = ycsb.chooser(config.distribution, config.docs, seed=seed + 2)
        self.inserted = 0  # insert attempts (they number the new keys)
        self.inserted_ok = 0
        # Made before the start, so no histogram memory is allocated during the run (the
        # io scenario's memory cap is set from the usage at the start).
        scheduled = bool(config.rate_per_client)
        self.stats: dict[str, OperationStats] = {
            name: OperationStats(scheduled) for name, weight in mix_named(config.mix).weights if weight > 0
        }
        self.lag = histograms.new_histogram()
        self.interval_hists = [histograms.new_histogram() for _ in range(config.intervals)]
        self.interval_failed = [0] * config.intervals

    # one operation ---------------------------------------------------------------------
    def _new_value(self) -> tuple[str, str]:
        field_name = ycsb.FIELDS[self.rng.randrange(ycsb.FIELD_COUNT)]
        return field_name, ycsb.random_text(self.rng, ycsb.FIELD_LENGTH)

    def execute(self, operation: str) -> tuple[int, bool]:
        """Run one operation; (rows changed, key found)."""
        if operation == INSERT:
            # Keys beyond the loaded ones, unique per client: docs + n * clients + id.
            index = self.config.docs + self.inserted * self.config.total_clients + self.id
            self.inserted += 1
            self.session.insert(ycsb.document(index, self.config.seed))
            self.inserted_ok += 1
            return 1, True
        key = ycsb.key_of(self.keys.next_index(), self.config.seed)
        if operation == READ:
            return 0, self.session.read(key) is not None
        if operation == UPDATE:
            changed = self.session.update_field(key, *self._new_value())
            return changed, changed > 0
        if operation == READ_MODIFY_WRITE:
            if self.session.read(key) is None:
                return 0, False
            changed = self.session.update_field(key, *self._new_value())
            return changed, changed > 0
        raise ValueError(f"unknown operation {operation!r}")

    # the loop --------------------------------------------------------------------------
    def run(self, start_ns: int) -> None:
        config = self.config
        interval_ns = int(config.interval_s * 1e9)
        warm_end = start_ns + int(config.warmup_s * 1e9)
        end = warm_end + int(config.duration_s * 1e9)
        rate = config.rate_per_client
        intended = start_ns
        while True:
            if rate:
                intended += int(self.rng.expovariate(rate) * 1e9)
                if intended >= end:
                    break
                wait = intended - time.monotonic_ns()
                if wait > 0:
                    time.sleep(wait / 1e9)
            else:
                intended = time.monotonic_ns()
                if intended >= end:
                    break
            self._one(self.operations.next(), intended, warm_end, start_ns, interval_ns)

    def _one(self, operation: str, intended: int, warm_end: int, start_ns: int, interval_ns: int) -> None:
        begin = time.monotonic_ns()
        error = None
        try:
            rows, found = self.execute(operation)
        except Exception as exc:  # noqa: BLE001 - a failed operation is counted, the run goes on
            error, rows, found = f"{type(exc).__name__}: {exc}", 0, False
        done = time.monotonic_ns()
        slot = min((done - start_ns) // interval_ns, len(self.interval_hists) - 1)
        if error is None:
            histograms.record(self.interval_hists[slot], done - intended)
        else:
            self.interval_failed[slot] += 1
        if intended < warm_end:
            return
        stats = self.stats[operation]
        if error is not None:
            stats.failed += 1
            stats.first_error = stats.first_error or error[:500]
            return
        stats.ok += 1
        stats.rows_changed += rows
        stats.not_found += 0 if found else 1
        histograms.record(stats.service, done - begin)
        if stats.response is not stats.service:
            histograms.record(stats.response, done - intended)
            histograms.record(self.lag, begin - intended)


# ----- the thread path of a worker process (worker.py chooses it) -------------------------


def run_threads(config: WorkerConfig, clients: list[Client], start_ns: int, events) -> int:
    """Run each client on a thread of its own until the end; the CPU time the process used."""
    cpu_before = cpu_ns()
    threads = [threading.Thread(target=client.run, args=(start_ns,), daemon=True) for client in clients]
    for thread in threads:
        thread.start()
    _report_intervals(config, clients, start_ns, events, threads)
    return cpu_ns() - cpu_before


def cpu_ns() -> int:
    """CPU time (user + system) of this process so far, all threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return int((usage.ru_utime + usage.ru_stime) * 1e9)


def _report_intervals(
    config: WorkerConfig, clients: list[Client], start_ns: int, events, threads: list[threading.Thread]
) -> None:
    """Send each finished interval's merged histogram to the driver (its progress line)."""
    for slot in range(config.intervals):
        due = start_ns + int(((slot + 1) * config.interval_s + INTERVAL_GRACE_S) * 1e9)
        while time.monotonic_ns() < due and any(t.is_alive() for t in threads):
            time.sleep(min(0.05, max(0.0, (due - time.monotonic_ns()) / 1e9)))
        if slot == config.intervals - 1:
            for thread in threads:
                thread.join()
        merged = histograms.new_histogram()
        for client in clients:
            merged.add(client.interval_hists[slot])
        failed = sum(client.interval_failed[slot] for client in clients)
        events.put(("interval", config.worker_id, slot, merged.encode().decode("ascii"), failed))


def final_message(clients: list[Client], connect_ns: list[int], cpu_used_ns: int) -> FinalMessage:
    per_op: dict[str, list[OperationMessage]] = {}
    for client in clients:
        for operation, stats in client.stats.items():
            per_op.setdefault(operation, []).append(stats.as_message())
    lag = histograms.new_histogram()
    for client in clients:
        lag.add(client.lag)
    done = sum(
        client.interval_hists[slot].get_total_count() + client.interval_failed[slot]
        for client in clients
        for slot in range(len(client.interval_hists))
    )
    return {
        "operations": per_op,
        "lag": lag.encode().decode("ascii"),
        "connect_ns": connect_ns,
        "inserted": sum(client.inserted_ok for client in clients),
        "cpu_ns": cpu_used_ns,
        "operations_done": done,
        "loop": "threads",
    }
