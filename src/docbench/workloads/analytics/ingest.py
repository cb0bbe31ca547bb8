"""Live ingest (``docbench run analytics --ingest-rates``): documents arrive at a target rate
through the system's own loading path while query clients run.

After the cold/hot queries (and the concurrency levels), on the loaded table, for each target
rate (documents per second; 0 = as fast as the engine takes them):

1. idle: the query clients send Q1-Q5 in a seeded order for ``duration`` seconds on the store
   that does not change (the baseline of step 2);
2. ingest: new documents -- the generator's files after the dataset's, streamed from
   ``docbench-gen --out -``, no file on disk -- go in batches (about 20 a second) to the
   system's loader, each at its intended time (an open loop: a batch the engine was too slow
   for is sent late and its lag is counted, never skipped); a document the engine refuses is
   isolated and logged as in a load; the same query clients run meanwhile;
3. freshness: once a second a marker document leads a batch, and a poller looks for it with
   the system's own point lookup until a query sees it (``markers.py``): the time from its
   acknowledgement to that poll is its freshness. Beside it, a probe thread reads the
   system's visible count (``visible_count``: nothing forced) every ``PROBE_S``, giving every
   batch's freshness by count (the only one for a representation with no point lookup);
4. at the end, every acknowledged document must be visible, exactly: the final count equals
   the count before plus the documents acknowledged (none lost, none twice).

Query answers are not checked during ingest (the data changes under them): latencies and
errors are. A server that crashes mid-stream is recorded, restarted, and the level reports
what was acknowledged and what is visible.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

from docbench.contracts.analytics import AnalyticsAdapter
from docbench.contracts.capabilities import BlueskyQueries, LiveIngest, capability
from docbench.core import histograms
from docbench.core.jsontypes import JsonObject
from docbench.dataset.generate import ensure_binary
from docbench.workloads.analytics.concurrent_clients import client_order
from docbench.workloads.analytics.markers import (
    MARKER_FILE,
    MARKER_ID_BASE,
    Marker,
    Markers,
    MarkersFreshness,
    percentile,
    poll_markers,
    stop_polling,
)
from docbench.workloads.load import Batch, LoadReport, load_batch_isolating

PROBE_S = 0.05
BATCHES_PER_SECOND = 20
# The generator's file numbers for arriving documents: far after any dataset's.
FIRST_FILE = 900_000
DOCS_PER_FILE = 100_000
# How long the end waits for every acknowledged document to become visible.
SETTLE_S = 60.0


# The query clients' latency figures in one phase (ms, histograms.latency_summary's, rounded)
# with their errors and the first error's text.
QueryFigures = dict[str, float | str | None]


class Settled(TypedDict):
    """What the end of a level found: the visible count when the wait ended, the count."""

    visible_before_settle_end: int | None
    final_count: int | None
    restarted: bool


class CountFreshnessFigures(TypedDict):
    """Every batch's time from acknowledgement until a probe of the visible count saw it."""

    p50: float | None
    p99: float | None
    max: float | None
    batches: int
    unseen_batches: int
    probe_ms_p50: float | None


class CountFreshness(CountFreshnessFigures):
    """The freshness by count as a level's ``freshness_ms`` (no point lookup: method "count")."""

    method: str


class Second(TypedDict):
    """One second of a level: documents acknowledged in it, their batches' median freshness."""

    second: int
    acknowledged: int
    freshness_p50_ms: float | None


class Lag(TypedDict):
    max: float | None
    last: float | None


class IngestLevel(TypedDict):
    """One target rate's figures, as the result's ``ingest.levels`` keeps them."""

    target_rate: float | None
    offered: int
    acknowledged: int
    refused: int
    refused_first: list[JsonObject]
    offered_rate: float | None
    sustained_rate: float | None
    lag_s: Lag
    freshness_ms: MarkersFreshness | CountFreshness
    freshness_by_count_ms: CountFreshnessFigures
    count_before: int
    expected_count: int
    visible_before_settle_end: int | None
    final_count: int | None
    restarted: bool
    exact: bool
    elapsed_s: float
    timeline: list[Second]
    queries_idle: QueryFigures
    queries_during: QueryFigures
    error: str | None


class IngestRecord(TypedDict):
    """The result's ``ingest``: the levels and how they ran."""

    duration_s: float
    clients: int
    seed: int
    probe_interval_s: float
    settings: JsonObject
    source: str
    hard_rate: float | None
    levels: list[IngestLevel]


class IngestNotSupported(TypedDict):
    """The result's ``ingest`` for a system without live ingest: why."""

    not_supported: str


@dataclass
class IngestRequest:
    rates: list[float]
    duration_s: float = 30.0
    clients: int = 2
    seed: int = 1
    timeout_s: float = 600.0
    # The generator's share of hard documents (None: its default): documents some engines
    # refuse, isolated and logged mid-stream as in a load.
    hard_rate: float | None = None


@dataclass
class Ack:
    intended: float
    acknowledged: float
    total: int  # documents acknowledged so far (the stream's)


@dataclass
class QueryLog:
    """Latencies (µs) and errors of the query clients in one phase."""

    histogram: Any = field(default_factory=histograms.new_histogram)
    errors: int = 0
    first_error: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, seconds: float | None, error: str | None) -> None:
        with self.lock:
            if error is None and seconds is not None:
                histograms.record(self.histogram, int(seconds * 1e9))
            else:
                self.errors += 1
                self.first_error = self.first_error or error

    def summary(self) -> QueryFigures:
        figures: QueryFigures = {
            k: v if v is None else round(v, 3) for k, v in histograms.latency_summary(self.histogram).items()
        }
        return {**figures, "errors": self.errors, "first_error": self.first_error}


class LiveStore(AnalyticsAdapter, LiveIngest):
    """A document store with live ingest (a type for the checker: an adapter is cast to it
    once ``capability`` has found it one)."""


def generated_lines(
    seed: int, hard_rate: float | None = None, first_file: int = FIRST_FILE
) -> Generator[bytes, None, None]:
    """Documents from the generator, file after file, as it writes them (no file on disk)."""
    binary = ensure_binary(quiet=True)
    number = first_file
    hard = ["--hard-rate", repr(hard_rate)] if hard_rate is not None else []
    while True:
        command = [
            str(binary),
            "--file",
            str(number),
            "--seed",
            str(seed),
            "--docs-per-file",
            str(DOCS_PER_FILE),
            *hard,
        ]
        yielded = 0
        # Its progress and summary go to a file, not a pipe nobody reads while the
        # documents stream (a full pipe would stop the generator).
        with tempfile.TemporaryFile() as messages:
            with subprocess.Popen([*command, "--out", "-"], stdout=subprocess.PIPE, stderr=messages) as proc:
                assert proc.stdout is not None
                for line in proc.stdout:
                    if line.strip():
                        yielded += 1
                        yield line.rstrip(b"\n")
            if proc.returncode != 0 or not yielded:
                messages.seek(0)
                said = messages.read().decode("utf-8", "replace").strip()[-500:]
                raise RuntimeError(f"docbench-gen file {number} failed (exit {proc.returncode}): {said}")
        number += 1


def run_ingest(system: AnalyticsAdapter, request: IngestRequest, say: Callable[[str], None]) -> IngestRecord:
    """Every rate level on the loaded table; the record the result keeps."""
    live = capability(
        system,
        LiveIngest,
        "live ingest needs the loader, the probe and the query sessions on connections of their "
        "own in one process; this system does not give them",
    )
    settings = live.begin_live_ingest()
    texts = capability(system, BlueskyQueries).queries()
    store = cast(LiveStore, system)  # both, as the checks above found
    lines = generated_lines(request.seed, request.hard_rate)
    # The markers' bodies: no hard documents, so none is refused for its content.
    bodies = generated_lines(request.seed, 0.0, MARKER_FILE)
    levels: list[IngestLevel] = []
    try:
        for rate in request.rates:
            level = run_level(store, texts, lines, bodies, rate, request)
            say(level_line(system.name, level))
            levels.append(level)
    finally:  # the generators' processes end when their pipes close
        lines.close()
        bodies.close()
    return {
        "duration_s": request.duration_s,
        "clients": request.clients,
        "seed": request.seed,
        "probe_interval_s": PROBE_S,
        "settings": settings,
        "source": f"docbench-gen files {FIRST_FILE}+ (seed {request.seed}), streamed",
        "hard_rate": request.hard_rate,
        "levels": levels,
    }


def run_level(
    system: LiveStore,
    texts: list[str],
    lines: Iterator[bytes],
    bodies: Iterator[bytes],
    rate: float,
    request: IngestRequest,
) -> IngestLevel:
    # The count to start from, by the count that makes everything visible (the end's), then
    # seen by the probe too: an earlier level's last documents are not counted as this one's.
    base = system.count()
    wait_visible(system, base)
    # The idle baseline carries the probe's load as the ingest phase does: "idle -> during"
    # compares the same reader load with and without documents arriving.
    idle_probes: list[tuple[float, float, int]] = []
    idle_stop = threading.Event()
    idle_prober = threading.Thread(target=probe_loop, args=(system, idle_probes, idle_stop), daemon=True)
    idle_prober.start()
    idle = run_clients(system, texts, request, lambda: False, request.duration_s)
    idle_stop.set()
    idle_prober.join()
    report = LoadReport()
    acks: list[Ack] = []
    # (when the probe's query started, when it answered, the count it saw)
    probes: list[tuple[float, float, int]] = []
    stop = threading.Event()
    failure: list[str] = []
    markers = Markers(system, bodies, MARKER_ID_BASE + base)
    polled = threading.Event()
    poller = None
    if markers.enabled:
        spec = {**system.live_session_spec(), "timeout": request.timeout_s}
        poller = threading.Thread(
            target=poll_markers, args=(markers, spec, polled), name="markers", daemon=True
        )
        poller.start()

    def ingest() -> None:
        try:
            stream(system, lines, rate, request.duration_s, report, acks, stop, markers if poller else None)
        except Exception as error:  # noqa: BLE001 - recorded: the server may have crashed
            failure.append(f"{type(error).__name__}: {error}"[:500])
        finally:
            stop.set()

    writer = threading.Thread(target=ingest, name="ingest", daemon=True)
    prober = threading.Thread(target=probe_loop, args=(system, probes, stop), name="probe", daemon=True)
    started = time.perf_counter()
    writer.start()
    prober.start()
    during = run_clients(system, texts, request, stop.is_set, request.duration_s)
    writer.join()
    stop.set()
    prober.join()
    elapsed = time.perf_counter() - started
    acknowledged = acks[-1].total if acks else 0
    settled = settle(system, base + acknowledged, probes, failure)
    marked = None
    if poller is not None:
        deadline = time.perf_counter() + 10.0  # after the settle: what the count shows, a query finds
        stop_polling(markers, polled, poller, lambda: time.perf_counter() > deadline)
        marked = markers.summary(acks[0].intended if acks else None)
    return summarize_level(
        rate, request, report, acks, probes, base, settled, elapsed, idle, during, failure, marked
    )


def probe_loop(system: LiveStore, probes: list[tuple[float, float, int]], stop: threading.Event) -> None:
    """The visible count every PROBE_S until ``stop``: (query start, answer, count)."""
    while not stop.is_set():
        started = time.perf_counter()
        with contextlib.suppress(Exception):  # a probe missed (the server may be down)
            count = system.visible_count()
            probes.append((started, time.perf_counter(), count))
        stop.wait(max(0.0, PROBE_S - (time.perf_counter() - started)))


def wait_visible(system: LiveStore, count: int) -> int | None:
    """Wait (at most SETTLE_S) until the visible count reaches ``count``; the last one seen."""
    deadline = time.perf_counter() + SETTLE_S
    visible = None
    while time.perf_counter() < deadline:
        with contextlib.suppress(Exception):
            visible = system.visible_count()
            if visible >= count:
                break
        time.sleep(PROBE_S)
    return visible


def stream(
    system: LiveStore,
    lines: Iterator[bytes],
    rate: float,
    duration_s: float,
    report: LoadReport,
    acks: list[Ack],
    stop: threading.Event,
    markers: Markers | None = None,
) -> None:
    """Batches at their intended times (rate 0: back to back) until ``duration_s``; a marker
    document at the head of a batch once a second."""
    size = max(1, int(rate / BATCHES_PER_SECOND)) if rate else 5_000
    loader = system.live_loader()
    # The generator started (its first batch read) before the clock starts.
    ready = [next(lines) for _ in range(size)]
    start = time.perf_counter()
    total = 0
    number = 0
    try:
        while True:
            intended = start + (number * size / rate if rate else 0.0)
            if intended - start >= duration_s or (not rate and time.perf_counter() - start >= duration_s):
                break
            delay = intended - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            sent = time.perf_counter()
            documents = ready or [next(lines) for _ in range(size)]
            ready = []
            marker: Marker | None = None
            if markers is not None and markers.due(sent):
                line, marker = markers.make(sent)
                documents = [line, *documents[:-1]]  # the batch keeps its size
            batch = Batch(documents, number * size + 1)
            name = f"ingest-{number:07d}"
            loader.begin_file(name)
            report.offered += len(batch.lines)
            total += load_batch_isolating(loader, batch, name, report)
            loader.commit_file()
            acknowledged = time.perf_counter()
            if marker is not None:
                if batch.first in report.refused_lines.get(name, set()):
                    marker.lost = True
                marker.acknowledged = acknowledged
            # As fast as taken: a batch is intended when the one before it was acknowledged.
            acks.append(Ack(intended if rate else sent, acknowledged, total))
            number += 1
    finally:
        stop.set()
        loader.close()


def run_clients(
    system: LiveStore,
    texts: list[str],
    request: IngestRequest,
    done: Callable[[], bool],
    duration_s: float,
) -> QueryLog:
    """``clients`` threads, each with its own session, Q1-Q5 in a seeded order, closed loop,
    until ``duration_s`` has passed or ``done()``."""
    log = QueryLog()
    spec = {**system.live_session_spec(), "timeout": request.timeout_s}
    deadline = time.perf_counter() + duration_s

    def client(number: int) -> None:
        order = client_order(request.seed, number)  # the concurrency clients' seeded orders
        try:
            session = type(system).open_session(spec)
        except Exception as error:  # noqa: BLE001
            log.record(None, f"session: {type(error).__name__}: {error}"[:300])
            return
        try:
            while time.perf_counter() < deadline and not done():
                query = order.randrange(len(texts))
                started = time.perf_counter()
                try:
                    session.execute(query + 1, texts[query])
                    log.record(time.perf_counter() - started, None)
                except Exception as error:  # noqa: BLE001 - counted, and the client goes on
                    log.record(None, f"Q{query + 1}: {type(error).__name__}: {error}"[:300])
        finally:
            session.close()

    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(request.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(duration_s + request.timeout_s)
    return log


def settle(
    system: LiveStore, expected: int, probes: list[tuple[float, float, int]], failure: list[str]
) -> Settled:
    """Wait until the visible count reaches what was acknowledged (at most SETTLE_S); after a
    failure, restart a server that died and count what it kept."""
    engine = system.engine
    restarted = False
    if not engine.is_alive():  # died in the stream, or under the queries or the probe
        with contextlib.suppress(Exception):
            engine.restart()
            restarted = True
        failure.append(f"the server died during the level (restarted: {'yes' if restarted else 'no'})")
    deadline = time.perf_counter() + SETTLE_S
    visible = None
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        try:
            visible = system.visible_count()
        except Exception:  # noqa: BLE001
            visible = None
        if visible is not None:
            probes.append((started, time.perf_counter(), visible))
            if visible >= expected:
                break
        time.sleep(PROBE_S)
    try:
        final: int | None = system.count()
    except Exception as error:  # noqa: BLE001 - recorded in the level, the run goes on
        final = None
        failure.append(f"count failed: {type(error).__name__}: {error}"[:300])
    return {"visible_before_settle_end": visible, "final_count": final, "restarted": restarted}


def freshness_ms(
    acks: list[Ack], probes: list[tuple[float, float, int]], base: int
) -> tuple[list[float], int]:
    """Each acknowledged batch's time until a probe that started after its acknowledgement
    saw the count reach it (ms; from the probe's start, so its own duration is not counted),
    and how many batches no probe saw."""
    probes = sorted(probes)
    values = []
    unseen = 0
    index = 0
    for ack in acks:
        while index < len(probes) and probes[index][0] < ack.acknowledged:
            index += 1
        seen = next((t for t, _, n in probes[index:] if n >= base + ack.total), None)
        if seen is None:
            unseen += 1
        else:
            values.append((seen - ack.acknowledged) * 1000)
    return values, unseen


def per_second(acks: list[Ack], probes: list[tuple[float, float, int]], base: int) -> list[Second]:
    """Second by second from the first batch: documents acknowledged in that second, and the
    median freshness of the batches acknowledged in it (the dashboard's curves)."""
    if not acks:
        return []
    start = acks[0].intended
    seconds: dict[int, tuple[int, list[Ack]]] = {}
    before = 0
    for ack in acks:
        second = int(ack.acknowledged - start) + 1
        documents, batches = seconds.get(second, (0, []))
        seconds[second] = (documents + ack.total - before, [*batches, ack])
        before = ack.total
    timeline: list[Second] = []
    for second in range(1, max(seconds) + 1):
        documents, batches = seconds.get(second, (0, []))
        fresh, _ = freshness_ms(batches, probes, base)
        timeline.append(
            {"second": second, "acknowledged": documents, "freshness_p50_ms": percentile(fresh, 0.5)}
        )
    return timeline


def summarize_level(
    rate: float,
    request: IngestRequest,
    report: LoadReport,
    acks: list[Ack],
    probes: list[tuple[float, float, int]],
    base: int,
    settled: Settled,
    elapsed: float,
    idle: QueryLog,
    during: QueryLog,
    failure: list[str],
    marked: MarkersFreshness | None = None,
) -> IngestLevel:
    acknowledged = acks[-1].total if acks else 0
    span = (acks[-1].acknowledged - acks[0].intended) if acks else 0.0
    fresh, unseen = freshness_ms(acks, probes, base)
    timeline = per_second(acks, probes, base)
    lags = [ack.acknowledged - ack.intended for ack in acks]
    by_count: CountFreshnessFigures = {
        "p50": percentile(fresh, 0.5),
        "p99": percentile(fresh, 0.99),
        "max": round(max(fresh), 1) if fresh else None,
        "batches": len(fresh),
        "unseen_batches": unseen,
        # The resolution: a probe every PROBE_S, each taking this long (median).
        "probe_ms_p50": percentile([(end - start) * 1000 for start, end, _ in probes], 0.5),
    }
    return {
        "target_rate": rate or None,
        "offered": report.offered,
        "acknowledged": acknowledged,
        "refused": report.refused_count,
        "refused_first": [vars(r) for r in report.refused[:20]],
        # Documents sent per second (refused ones too): the driver's pace against the target.
        "offered_rate": round(report.offered / span, 1) if span > 0 else None,
        # Documents the engine acknowledged per second.
        "sustained_rate": round(acknowledged / span, 1) if span > 0 else None,
        "lag_s": {"max": round(max(lags), 3) if lags else None, "last": round(lags[-1], 3) if lags else None},
        # By markers where the system has a point lookup, else by the visible count.
        "freshness_ms": marked or {**by_count, "method": "count"},
        "freshness_by_count_ms": by_count,
        "count_before": base,
        "expected_count": base + acknowledged,
        **settled,
        "exact": settled["final_count"] == base + acknowledged,
        "elapsed_s": round(elapsed, 3),
        "timeline": timeline,
        "queries_idle": idle.summary(),
        "queries_during": during.summary(),
        "error": failure[0] if failure else None,
    }


def level_line(name: str, level: IngestLevel) -> str:
    target = f"{level['target_rate']:g}/s" if level["target_rate"] else "max"
    fresh = level["freshness_ms"]
    return (
        f"{name} ingest {target}: {level['acknowledged']:,} acknowledged at {level['sustained_rate']}/s, "
        f"freshness ({fresh['method']}) p50 {fresh['p50']} ms p99 {fresh['p99']} ms, queries p50 "
        f"{level['queries_idle'].get('p50_ms')} -> {level['queries_during'].get('p50_ms')} ms, "
        f"count {'exact' if level['exact'] else 'NOT exact'} ({_count(level['final_count'])} of "
        f"{level['expected_count']:,})" + (f"; FAILED: {level['error']}" if level["error"] else "")
    )


def _count(value: int | None) -> str:
    return "unknown" if value is None else f"{value:,}"
