"""The user's own queries (`docbench run --queries FILE`): each query of a portable query set
compiled by the system's compiler (its ``portable`` capability), run cold and hot in a fresh
worker as Q1-Q5 are, and its answer checked against the engine-free oracle.

A query the engine cannot express exactly is recorded as "not expressible here" with the
reason, never replaced by another query. An answer that is correct but empty (no row, or only
zero counts) is marked so: it proves little, and a run whose answers are all empty says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from docbench.contracts.analytics import AnalyticsAdapter
from docbench.contracts.common import NotSupported
from docbench.contracts.portable import CompiledQuery, PortableQueries
from docbench.queries.oracle import PortableCheck, check_rows
from docbench.queries.spec import Query, QuerySet
from docbench.systems import adapter_class
from docbench.workloads.query_worker import QueryRun

RunQuery = Callable[[str, QueryRun | None], QueryRun]


def compiler_for(system: AnalyticsAdapter) -> PortableQueries | None:
    cls = adapter_class(system.name, "portable")
    return None if cls is None else cls(system.engine, system.variant)


class PortableQueryRecord(TypedDict, total=False):
    """One query of the set as the result's ``portable.queries`` keeps it: its name and
    columns, then why it could not run (status "not_expressible") or its tries and check."""

    name: str
    columns: list[str]
    text: str
    result: list[float | None]
    memory_usage: list[int | None]
    engine_time: list[float | None]
    bytes_read: list[int | None]
    errors: list[str | None]
    plan: str | None
    status: str
    detail: str
    rows: int | None
    expected_rows: int
    empty: bool
    crashed: bool


class PortableRecord(TypedDict):
    """The result's ``portable``: the set, each query's record, and the counts by status."""

    set: str
    differs_from_json: str | None
    source: str
    sha256: str
    queries: list[PortableQueryRecord]
    correct: int
    wrong: int
    errors: int
    not_expressible: int
    all_empty: bool


def compiled_queries(system: AnalyticsAdapter, query_set: QuerySet) -> list[tuple[Query, CompiledQuery]]:
    """The set's queries the system can express, compiled (for concurrent clients)."""
    compiler = compiler_for(system)
    found = []
    for query in query_set.queries:
        if compiler is not None:
            try:
                found.append((query, compiler.compile(query)))
            except NotSupported:
                continue
    return found


def run_portable_queries(
    system: AnalyticsAdapter,
    query_set: QuerySet,
    expected: dict[str, list[list[Any]]],
    run_text: Callable[[str], QueryRun],
    on_done: Callable[[], None] = lambda: None,
) -> PortableRecord:
    """Every query of the set on this system: the record the result file keeps."""
    compiler = compiler_for(system)
    records: list[PortableQueryRecord] = []
    for query in query_set.queries:
        records.append(_one_query(system, compiler, query, expected[query.name], run_text))
        on_done()
    statuses = [r["status"] for r in records]
    return {
        "set": query_set.name,
        # how the representation's values differ from JSON's, when they do (its wrong answers
        # are then the engine's semantics, named here)
        "differs_from_json": compiler.exact() if compiler is not None else None,
        "source": query_set.source,
        "sha256": query_set.sha256,
        "queries": records,
        "correct": statuses.count("correct"),
        "wrong": statuses.count("wrong"),
        "errors": statuses.count("error"),
        "not_expressible": statuses.count("not_expressible"),
        "all_empty": all(r.get("empty") for r in records if r["status"] == "correct")
        and "correct" in statuses,
    }


def _one_query(
    system: AnalyticsAdapter,
    compiler: PortableQueries | None,
    query: Query,
    expected: list[list[Any]],
    run_text: Callable[[str], QueryRun],
) -> PortableQueryRecord:
    record: PortableQueryRecord = {"name": query.name, "columns": query.columns}
    if compiler is None:
        return {
            **record,
            "status": "not_expressible",
            "detail": f"{system.name} has no portable-query compiler",
        }
    try:
        compiled = compiler.compile(query)
    except NotSupported as reason:
        return {**record, "status": "not_expressible", "detail": str(reason)}
    run = run_text(compiled.text)
    check = _check(query, compiled, run, expected)
    record.update(
        {
            "text": compiled.text,
            "result": [_round(t.seconds) for t in run.tries],
            "memory_usage": [t.peak_rss for t in run.tries],
            "engine_time": [_round(t.engine_seconds) for t in run.tries],
            "bytes_read": [t.read_bytes for t in run.tries],
            "errors": [t.error for t in run.tries],
            "plan": run.plan,
            "status": check.status,
            "detail": check.detail,
            "rows": check.rows,
            "expected_rows": len(expected) if not query.limit else min(len(expected), query.limit),
            "empty": check.empty,
        }
    )
    if run.crashed:
        record["crashed"] = True
    return record


def _check(query: Query, compiled: CompiledQuery, run: QueryRun, expected: list[list[Any]]) -> PortableCheck:
    answered = [t for t in run.tries if t.rows is not None and t.error is None]
    if not answered:
        errors = [t.error for t in run.tries if t.error] or [run.worker_error or "no result"]
        return PortableCheck("error", str(errors[0]))
    rows = compiled.decode(answered[0].rows or [])
    if query.global_aggregate and not rows:
        # An aggregate over no row is one row (counts 0, the others null); a pipeline engine's
        # $group gives none.
        rows = [[0 if a.fn in ("count", "count_distinct") else None for a in query.aggregates]]
    check = check_rows(query, rows, expected)
    if any(compiled.decode(t.rows or []) != rows for t in answered[1:]):
        check.detail = (check.detail + "; " if check.detail else "") + "tries returned different rows"
    return check


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


__all__ = ["run_portable_queries"]
