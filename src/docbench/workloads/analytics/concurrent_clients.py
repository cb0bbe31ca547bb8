"""The client processes of the concurrency phase: each opens a session per client, waits for
the common start, then every client sends Q1-Q5 in its own seeded random order until the run
ends, timing each query and checking its answer against the oracle's.

Closed loop (no rate): a client sends its next query when the last one answered; latency is
the query's own time. Open loop (a target rate): each client has a schedule of intended start
times and latency runs from the intended start, so a query that waits behind a slow one
carries its wait (no coordinated omission). A wrong answer is counted as an error and never
recorded as a latency. Messages to the driver go through one queue:

    ("ready", process_id, None | error)  every session of the process is open
    ("final", process_id, {...})         the process's counts and encoded histograms
"""

from __future__ import annotations

import contextlib
import json
import random
import resource
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Any, TypedDict

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.contracts.portable import CompiledQuery
from docbench.core import histograms
from docbench.core.answers import check_answer, expected_display_rows
from docbench.core.jsontypes import JsonObject
from docbench.queries.oracle import check_rows
from docbench.queries.spec import Query

QUERY_NUMBERS = (1, 2, 3, 4, 5)
OUTCOMES = ("ok", "wrong", "error", "timeout")


class TallyMessage(TypedDict):
    """One query's outcomes in one process, as its final message carries them."""

    histogram: str  # encoded (empty when no correct answer was timed)
    counts: dict[str, int]  # by outcome
    first_problem: str | None
    completed: int


class FinalMessage(TypedDict):
    """A client process's final report to the driver."""

    queries: dict[int, TallyMessage]
    warmup_queries: int
    missed: int
    cpu_seconds: float
    peak_rss_bytes: int


@dataclass
class ClientsConfig:
    """One client process's share of a concurrency level (picklable)."""

    process_id: int
    client_ids: list[int]
    # None: the driver's own ceiling, measured against OracleEcho (no engine at all).
    system_name: str | None
    spec: JsonObject
    texts: list[str]
    # The oracle's answer document (Q1-Q5's answers; unused with a portable set).
    expected: JsonObject
    seed: int
    warmup_s: float
    duration_s: float
    timeout_s: float
    total_clients: int
    rate: float | None = None
    time_precision_us: int = 1
    approximate: frozenset[int] = frozenset()
    # A compiled query set instead of Q1-Q5 (--queries): per query (its texts' order), the
    # query, its compiled form and the oracle's whole answer; the session runs each as
    # query number 0 (a compiled text), the check is the portable one.
    portable: list[tuple[Query, CompiledQuery, list[list[Any]]]] | None = None

    @property
    def numbers(self) -> tuple[int, ...]:
        return tuple(range(1, len(self.texts) + 1)) if self.portable is not None else QUERY_NUMBERS


def client_order(seed: int, client_id: int) -> random.Random:
    """The client's query order: a function of the seed and the client only, so that a run
    with the same seed sends the same sequence of queries from each client."""
    return random.Random(seed * 1_000_003 + client_id)


class OracleEcho(QuerySession):
    """The target of the driver's ceiling: answers each query at once with the oracle's own
    rows (checked like an engine's), so the queries per second it reaches are the driver's
    limit on this machine, beside which an engine's figure can be read."""

    def __init__(self, config: ClientsConfig) -> None:
        if config.portable is None:
            self.rows = {q: expected_display_rows(q, config.expected) for q in QUERY_NUMBERS}
        else:  # each compiled query's answer as its engine returns it (JSON text where it does)
            self.rows = {
                number: [
                    [
                        json.dumps(v) if is_json and v is not None else v
                        for v, is_json in zip(row, c.json_columns, strict=True)
                    ]
                    for row in expected[: query.limit or None]
                ]
                for number, (query, c, expected) in enumerate(config.portable, start=1)
            }
        self.texts = {text: number for number, text in enumerate(config.texts, start=1)}

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        return QueryOutcome(rows=self.rows[query_number or self.texts[text]])


@dataclass
class QueryTally:
    """One query's outcomes in one process (latencies of correct answers only)."""

    histogram: Any = field(default_factory=histograms.new_histogram)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    first_problem: str | None = None
    # Correct answers that arrived inside the measured window, whenever they were sent or
    # scheduled: the throughput (a backlog from the warm-up still counts when it is answered).
    completed: int = 0

    def message(self) -> TallyMessage:
        encoded = self.histogram.encode().decode() if self.histogram.get_total_count() else ""
        return {
            "histogram": encoded,
            "counts": self.counts,
            "first_problem": self.first_problem,
            "completed": self.completed,
        }


class Verdicts:
    """Answer checks, cached by the rows: the same rows always get the same verdict, and a
    busy client should not spend its time re-checking an answer it has already checked."""

    def __init__(self, config: ClientsConfig) -> None:
        self.config = config
        self.cache: dict[tuple[int, str], tuple[str, str]] = {}
        self.lock = threading.Lock()

    def verdict(self, number: int, rows: Any) -> tuple[str, str]:
        key = (number, repr(rows))
        with self.lock:
            known = self.cache.get(key)
        if known is None and self.config.portable is not None:
            query, compiled, expected = self.config.portable[number - 1]
            portable = check_rows(query, compiled.decode(rows), expected)
            known = ("ok" if portable.status == "correct" else "wrong", portable.detail)
            with self.lock:
                self.cache[key] = known
        if known is None:
            check = check_answer(
                number,
                [list(r) for r in rows],
                self.config.expected,
                time_precision_us=self.config.time_precision_us,
                approximate=number in self.config.approximate,
            )
            known = ("ok" if check.acceptable else "wrong", check.detail)
            with self.lock:
                self.cache[key] = known
        return known


class Client:
    """One client: its session, its seeded order and, with a rate, its schedule."""

    def __init__(self, client_id: int, session: QuerySession, config: ClientsConfig, verdicts: Verdicts):
        self.client_id = client_id
        self.session = session
        self.config = config
        self.verdicts = verdicts
        self.order = client_order(config.seed, client_id)
        self.tallies = {q: QueryTally() for q in config.numbers}
        self.warmup_queries = 0
        # Open loop: queries scheduled in the measured window that the window's end found
        # not yet sent (the engine fell behind the rate).
        self.missed = 0
        # With a rate, the clients' schedules are spread evenly over one interval.
        self.interval_ns = int(1e9 * config.total_clients / config.rate) if config.rate else 0
        self.offset_ns = self.interval_ns * client_id // max(1, config.total_clients)
        # The query in flight (its number and when it started, time.monotonic), for the
        # watchdog and for a client still stuck when its process must report; under `lock`.
        self.lock = threading.Lock()
        self.inflight_since: float | None = None
        self.inflight_number = 0

    def run(self, start_ns: int) -> None:
        measured_from = start_ns + int(self.config.warmup_s * 1e9)
        end = measured_from + int(self.config.duration_s * 1e9)
        sent = 0
        # Every client starts at the start, not when its thread does (up to the driver's start
        # delay earlier): a closed loop's first query sent before it fell before a warm-up of 0
        # and was not counted, and an engine slower than the window counted none.
        early = start_ns - time.monotonic_ns()
        if early > 0:
            time.sleep(early / 1e9)
        while True:
            intended = start_ns + self.offset_ns + sent * self.interval_ns if self.interval_ns else None
            now = time.monotonic_ns()
            if now >= end or (intended or now) >= end:
                if intended is not None:  # the schedule's queries the engine left no time for
                    first = max(intended, measured_from)
                    if first < end:
                        self.missed += -(-(end - first) // self.interval_ns)
                return
            if intended is not None and intended > now:
                time.sleep((intended - now) / 1e9)
            sent += 1
            number = self.order.choice(self.config.numbers)
            begin = time.monotonic_ns()
            outcome, detail = self.send(number)
            done = time.monotonic_ns()
            tally = self.tallies[number]
            if outcome == "ok" and measured_from <= done < end:
                tally.completed += 1
            if (intended or begin) < measured_from:
                self.warmup_queries += 1
                continue
            tally.counts[outcome] += 1
            if outcome == "ok":
                histograms.record(tally.histogram, done - (intended or begin))
            elif tally.first_problem is None:
                tally.first_problem = f"{outcome}: {detail}"[:500]

    def send(self, number: int) -> tuple[str, str]:
        """Run one query: its outcome (ok, wrong, error, timeout) and what went wrong."""
        began = time.monotonic()
        with self.lock:
            self.inflight_since, self.inflight_number = began, number
        try:
            sent_as = 0 if self.config.portable is not None else number  # a compiled text: number 0
            rows = self.session.execute(sent_as, self.config.texts[number - 1]).rows
            return self.verdicts.verdict(number, rows)
        except Exception as error:  # noqa: BLE001 - counted; the client goes on
            late = time.monotonic() - began >= self.config.timeout_s
            return ("timeout" if late else "error"), f"{type(error).__name__}: {error}"
        finally:
            with self.lock:
                self.inflight_since = None

    def cancel_if_late(self, timeout_s: float) -> None:
        """Cancel the query in flight when it has run past the timeout. Under the client's
        lock: the client cannot start its next query meanwhile, so a cancel never reaches a
        query other than the late one."""
        with self.lock:
            since = self.inflight_since
            if since is not None and time.monotonic() - since >= timeout_s:
                self.inflight_since = None  # once per query
                with contextlib.suppress(Exception):
                    self.session.cancel()

    def count_stuck(self) -> None:
        """Its process must report while this client's query still runs: a timeout."""
        with self.lock:
            if self.inflight_since is not None:
                self.tallies[self.inflight_number].counts["timeout"] += 1
                self.inflight_since = None


class Watchdog:
    """One thread per process that cancels (through the session) a query running past the
    timeout: no thread per query, so the clients' own cost stays what the echo measures."""

    def __init__(self, clients: list[Client], timeout_s: float) -> None:
        self.clients = clients
        self.timeout_s = timeout_s
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.wait(min(0.05, self.timeout_s / 10)):
            for client in self.clients:
                client.cancel_if_late(self.timeout_s)


def open_session(config: ClientsConfig) -> QuerySession:
    if config.system_name is None:
        return OracleEcho(config)
    from docbench.systems import required_adapter_class

    return required_adapter_class(config.system_name, "analytics").open_session(config.spec)


def process_main(config: ClientsConfig, events: Any, go: Any, start_at: Any, release: Any) -> None:
    """Entry point of a spawned client process: open sessions, wait for the start, run every
    client on a thread of its own, report, and keep the sessions open until the driver has
    read the engine's figures (`release`), so that no backend ends inside its reading."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's: it stops us
    clients: list[Client] = []
    try:
        verdicts = Verdicts(config)
        for client_id in config.client_ids:
            clients.append(Client(client_id, open_session(config), config, verdicts))
    except Exception as error:  # noqa: BLE001 - the driver records it for this level
        events.put(("ready", config.process_id, f"{type(error).__name__}: {error}"))
        _close(clients)
        return
    events.put(("ready", config.process_id, None))
    try:
        if not go.wait(timeout=600):
            return
        threads = [threading.Thread(target=c.run, args=(start_at.value,), daemon=True) for c in clients]
        watchdog = Watchdog(clients, config.timeout_s)
        watchdog.thread.start()
        for thread in threads:
            thread.start()
        # A query the engine never gives back (and cannot cancel) must not cost the figures
        # of every other client of the process: past the deadline, it counts as a timeout.
        deadline = time.monotonic() + config.warmup_s + config.duration_s + config.timeout_s + 10
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        for client, thread in zip(clients, threads, strict=True):
            if thread.is_alive():
                client.count_stuck()
        watchdog.stop.set()
        events.put(("final", config.process_id, final_message(clients, config.numbers)))
        release.wait(timeout=120)
    finally:
        _close(clients)


def final_message(clients: list[Client], numbers: tuple[int, ...] = QUERY_NUMBERS) -> FinalMessage:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    merged = {q: QueryTally() for q in numbers}
    for client in clients:
        for number, tally in client.tallies.items():
            target = merged[number]
            target.histogram.add(tally.histogram)
            for outcome, count in tally.counts.items():
                target.counts[outcome] += count
            target.first_problem = target.first_problem or tally.first_problem
            target.completed += tally.completed
    return {
        "queries": {q: t.message() for q, t in merged.items()},
        "warmup_queries": sum(c.warmup_queries for c in clients),
        "missed": sum(c.missed for c in clients),
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_rss_bytes": usage.ru_maxrss * 1024,
    }


def _close(clients: list[Client]) -> None:
    for client in clients:
        with contextlib.suppress(Exception):
            client.session.close()
