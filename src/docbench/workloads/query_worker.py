"""The query worker: a fresh process per query, so the first try finds a cold engine
(:mod:`docbench.workloads.fresh_process`: forked from a clean forkserver, not a new interpreter).

The parent spawns :func:`worker_main` with the system's picklable session spec. The worker
opens a session, runs the query `tries` times and sends one message per event through a
pipe, so a try that hangs or kills the process loses only itself:

    {"event": "ready", "seconds": open time}
    {"event": "start", "try": i}
    {"event": "done", "try": i, "seconds", "engine_seconds", "peak_rss", "read_bytes", "rows"}
    {"event": "failed", "try": i, "error"}
    {"event": "plan", "plan": text or None}
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, TypedDict

from docbench.contracts.analytics import QuerySession
from docbench.core.jsontypes import JsonObject
from docbench.core.procstats import QueryMeter
from docbench.workloads import fresh_process

# A compiled portable query (docbench.contracts.portable; ``compiled=True``): the session runs
# its text as it runs any query of its language, with no alternative forms beside it.


class AlternativeRun(TypedDict, total=False):
    """One alternative form of a query, run once after the main try: its time and rows, or
    its error (``approximate``: the form's answer may differ by the system's declared error)."""

    seconds: float
    approximate: bool
    engine_seconds: float | None
    rows: list[list[Any]]
    error: str


def worker_main(
    system_name: str,
    spec: JsonObject,
    query_number: int,
    text: str,
    tries: int,
    conn: Connection,
    compiled: bool = False,
) -> None:
    from docbench.systems import required_adapter_class

    try:
        started = time.perf_counter()
        session = required_adapter_class(system_name, "analytics").open_session(spec)
        conn.send({"event": "ready", "seconds": time.perf_counter() - started})
    except Exception as error:  # noqa: BLE001 - every failure is reported to the parent
        conn.send({"event": "failed", "try": 0, "error": _describe(error)})
        return
    for attempt in range(1, tries + 1):
        conn.send({"event": "start", "try": attempt})
        try:
            with QueryMeter(session.engine_pids()) as meter:
                t0 = time.perf_counter()
                outcome = session.execute(query_number, text)
                seconds = time.perf_counter() - t0
            sample = meter.sample()
            conn.send(
                {
                    "event": "done",
                    "try": attempt,
                    "seconds": seconds,
                    "engine_seconds": outcome.engine_seconds,
                    "peak_rss": outcome.engine_memory or sample.peak_rss,
                    "rss_peak_measured": sample.peak_rss,
                    "read_bytes": sample.read_bytes,
                    "rows": [list(r) for r in outcome.rows],
                    "peak_reset": meter.reset_ok,
                    "extra": {**outcome.extra, **session.stats_after()},
                    "alternatives": {} if compiled else run_alternatives(session, query_number, text),
                }
            )
        except Exception as error:  # noqa: BLE001
            conn.send({"event": "failed", "try": attempt, "error": _describe(error)})
    try:
        plan = session.explain(query_number, text)
    except Exception as error:  # noqa: BLE001
        plan = f"EXPLAIN failed: {_describe(error)}"
    conn.send({"event": "plan", "plan": plan})
    session.close()


def run_alternatives(session: QuerySession, query_number: int, text: str) -> dict[str, AlternativeRun]:
    """Run each alternative form of the query once, timed on its own (after the main try)."""
    results: dict[str, AlternativeRun] = {}
    for name, approximate in session.alternatives(query_number, text).items():
        try:
            t0 = time.perf_counter()
            outcome = session.execute_alternative(name, query_number, text)
            results[name] = {
                "seconds": time.perf_counter() - t0,
                "approximate": approximate,
                "engine_seconds": outcome.engine_seconds,
                "rows": [list(r) for r in outcome.rows],
            }
        except Exception as error:  # noqa: BLE001
            results[name] = {"approximate": approximate, "error": _describe(error)}
    return results


def _describe(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    if len(text) < 20:
        text += " " + traceback.format_exc(limit=2)
    return " ".join(text.split())[:500]


@dataclass
class TryResult:
    seconds: float | None = None
    engine_seconds: float | None = None
    peak_rss: int | None = None
    read_bytes: int | None = None
    error: str | None = None
    rows: list[list[Any]] | None = None
    extra: JsonObject = field(default_factory=dict)
    alternatives: dict[str, AlternativeRun] = field(default_factory=dict)


@dataclass
class QueryRun:
    tries: list[TryResult] = field(default_factory=list)
    plan: str | None = None
    open_seconds: float | None = None
    worker_error: str | None = None
    # The server died during the query: not a measurement, so the run is not complete.
    crashed: bool = False


def run_query_in_worker(
    system_name: str,
    spec: JsonObject,
    query_number: int,
    text: str,
    tries: int,
    timeout: float,
    compiled: bool = False,
) -> QueryRun:
    """Run one query `tries` times in a fresh process; a try past `timeout` is killed.
    ``compiled``: a compiled portable query rather than Q1-Q5 (no alternative
    forms are run beside it)."""
    parent_end, child_end = fresh_process.context().Pipe(duplex=False)
    process = fresh_process.process(
        worker_main, (system_name, spec, query_number, text, tries, child_end, compiled), daemon=True
    )
    process.start()
    child_end.close()
    run = QueryRun()
    results = {i: TryResult(error="not run") for i in range(1, tries + 1)}
    # Opening a session (imports, server connect) gets its own generous allowance.
    deadline = time.monotonic() + max(120.0, timeout)
    current = 0
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not parent_end.poll(remaining):
                # Nothing arrived before the deadline: the running try (or the session
                # opening) timed out. The worker is killed below.
                if current:
                    results[current] = TryResult(error=f"timeout: cancelled after {timeout:g} s")
                    for later in range(current + 1, tries + 1):
                        results[later] = TryResult(error="not run: an earlier try timed out")
                else:
                    run.worker_error = "session did not open in time"
                break
            try:
                message = parent_end.recv()
            except EOFError:
                process.join(5)
                run.worker_error = f"worker died (exit code {process.exitcode})"
                break
            event = message["event"]
            if event == "ready":
                run.open_seconds = message["seconds"]
            elif event == "start":
                current = message["try"]
                results[current] = TryResult(error="running")
                deadline = time.monotonic() + timeout
            elif event == "done" and message["seconds"] > timeout:
                # It ran past its deadline before this process was scheduled to see it start
                # (both messages waiting at once, on a busy machine): a timeout all the same.
                current = message["try"]
                results[current] = TryResult(
                    error=f"timeout: ran {message['seconds']:.3g} s, past {timeout:g} s"
                )
                for later in range(current + 1, tries + 1):
                    results[later] = TryResult(error="not run: an earlier try timed out")
                break
            elif event == "done":
                results[message["try"]] = TryResult(
                    seconds=message["seconds"],
                    engine_seconds=message["engine_seconds"],
                    peak_rss=message["peak_rss"],
                    read_bytes=message["read_bytes"],
                    rows=message["rows"],
                    extra=message["extra"],
                    alternatives=message["alternatives"],
                )
            elif event == "failed":
                if message["try"] == 0:
                    run.worker_error = message["error"]
                    break
                results[message["try"]] = TryResult(error=message["error"])
            elif event == "plan":
                run.plan = message["plan"]
                break
    finally:
        if process.is_alive():
            process.kill()
        process.join(10)
        parent_end.close()
    run.tries = [results[i] for i in range(1, tries + 1)]
    for result in run.tries:
        if result.error == "running":
            result.error = run.worker_error or "worker stopped during the try"
    if run.worker_error:
        for result in run.tries:
            if result.error == "not run":
                result.error = f"not run: {run.worker_error}"
    return run
