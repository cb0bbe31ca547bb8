"""DuckDB's query session: the analytics workload's query worker opens the database read-only
and runs the queries through it."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.core.jsontypes import JsonObject, as_str
from docbench.systems.duckdb.engine import DuckDBEngine, duckdb_module

# Query-level metrics only (no per-operator timers, so profiling does not slow the query).
# DuckDB >= 2.0 names metrics `group.metric` in `tracked_metrics`; 1.1-1.4 used
# `custom_profiling_settings` with upper-case names. The first that works is used.
PROFILING_SETUPS: list[list[str]] = [
    [
        "SET enable_profiling = 'no_output'",
        "SET tracked_metrics = ['query.total_time', 'system.peak_buffer_memory']",
    ],
    [
        "SET enable_profiling = 'no_output'",
        'SET custom_profiling_settings = \'{"LATENCY": "true", "SYSTEM_PEAK_BUFFER_MEMORY": "true"}\'',
    ],
]


def _profile_metrics(text: str) -> tuple[float | None, int | None]:
    """(seconds, peak buffer memory bytes) from DuckDB's JSON profiling output."""
    try:
        info = json.loads(text)
    except (TypeError, ValueError):
        return None, None
    if not isinstance(info, dict):
        return None, None
    seconds = memory = None
    query = info.get("query")
    if isinstance(query, dict):  # DuckDB >= 2.0
        seconds = query.get("total_time")
        system = info.get("system")
        if isinstance(system, dict):
            memory = system.get("peak_buffer_memory")
    else:  # DuckDB 1.1-1.4
        seconds = info.get("latency")
        memory = info.get("system_peak_buffer_memory")
    seconds = float(seconds) if isinstance(seconds, (int, float)) else None
    memory = int(memory) if isinstance(memory, (int, float)) and memory > 0 else None
    return seconds, memory


class DuckDBSession(QuerySession):
    def __init__(self, spec: JsonObject) -> None:
        # Read-only, except beside live ingest's writer in the same process (live_session_spec).
        self.con = DuckDBEngine(Path(as_str(spec["workdir"], "workdir"))).connect(
            read_only=bool(spec.get("read_only", True))
        )
        self.profiling = False
        for setup in PROFILING_SETUPS:
            try:
                for statement in setup:
                    self.con.execute(statement)
            except duckdb_module().Error:
                with contextlib.suppress(Exception):
                    self.con.execute("PRAGMA disable_profiling")
                continue
            self.profiling = True
            break

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        rows = self.con.execute(text).fetchall()
        seconds = memory = None
        if self.profiling:
            try:
                seconds, memory = _profile_metrics(self.con.get_profiling_information(format="json"))
            except Exception:  # profiling output is a bonus; the rows are what matter
                seconds = memory = None
        # DuckDB's peak buffer memory leaves out allocations outside its buffer manager, so
        # it goes to `extra`: the worker's measured RSS stays the memory figure, comparable
        # with the other embedded engines.
        extra: JsonObject = {"peak_buffer_memory": memory} if memory is not None else {}
        return QueryOutcome(rows=[tuple(row) for row in rows], engine_seconds=seconds, extra=extra)

    def explain(self, query_number: int, text: str) -> str | None:
        rows = self.con.execute(f"EXPLAIN {text}").fetchall()
        return "\n".join(str(row[-1]) for row in rows)

    def cancel(self) -> None:
        with contextlib.suppress(Exception):
            self.con.interrupt()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()
