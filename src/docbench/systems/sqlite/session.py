"""SQLite's query session: the analytics workload's query worker runs the queries through it."""

from __future__ import annotations

import contextlib
from pathlib import Path

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.core.jsontypes import JsonMapping, as_str
from docbench.systems.sqlite.engine import SQLiteEngine


class SQLiteSession(QuerySession):
    def __init__(self, spec: JsonMapping) -> None:
        self.con = SQLiteEngine(Path(as_str(spec["workdir"], "workdir"))).connect(read_only=True)

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        rows = self.con.execute(text).fetchall()
        # In-process engine: the wall time the worker measures is the engine's time.
        return QueryOutcome(rows=[tuple(row) for row in rows])

    def explain(self, query_number: int, text: str) -> str | None:
        rows = self.con.execute(f"EXPLAIN QUERY PLAN {text}").fetchall()
        return format_query_plan(rows)

    def cancel(self) -> None:
        with contextlib.suppress(Exception):
            self.con.interrupt()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()


def format_query_plan(rows: list[tuple]) -> str:
    """EXPLAIN QUERY PLAN rows (id, parent, notused, detail) as an indented tree."""
    depth: dict[int, int] = {0: -1}
    lines = []
    for node_id, parent, _unused, detail in rows:
        level = depth.get(parent, -1) + 1
        depth[node_id] = level
        lines.append("  " * level + str(detail))
    return "\n".join(lines)
