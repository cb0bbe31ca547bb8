"""DuckDB 1.1.3's query session: the analytics query worker starts a read-only DuckDB worker of
its own (a fresh process per query, so the first try is cold) and runs the queries through it.

Engine time is DuckDB's own profiling latency: 1.1.3's Python client has no
``get_profiling_information``, so the worker's connection writes its JSON profile to a file
(``enable_profiling = 'json'``, ``profiling_output``), with the latency as its only metric (no
per-operator timers), and the session reads it after each query.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.core.jsontypes import JsonObject, as_str
from docbench.systems.duckdb113.client import DuckDBWorker, sql_string
from docbench.systems.duckdb113.engine import DuckDB113Engine


def profile_latency(path: Path) -> float | None:
    """The ``latency`` (seconds) of DuckDB 1.1's JSON profile in ``path``, None without one."""
    try:
        profile = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    latency = profile.get("latency") if isinstance(profile, dict) else None
    return float(latency) if isinstance(latency, int | float) else None


class DuckDB113Session(QuerySession):
    def __init__(self, spec: JsonObject) -> None:
        workdir = Path(as_str(spec["workdir"], "workdir"))
        self.worker: DuckDBWorker = DuckDB113Engine(workdir).connect(read_only=True)
        self.profile_path = workdir / f"profile-{os.getpid()}.json"
        self.profiling = True
        try:
            for statement in (
                "SET enable_profiling = 'json'",
                f"SET profiling_output = {sql_string(str(self.profile_path))}",
                'SET custom_profiling_settings = \'{"LATENCY": "true"}\'',
            ):
                self.worker.execute(statement)
        except Exception:  # noqa: BLE001 - profiling is a bonus; the rows are what matter
            self.profiling = False
            with contextlib.suppress(Exception):
                self.worker.execute("PRAGMA disable_profiling")

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        self.profile_path.unlink(missing_ok=True)
        result = self.worker.execute(text)
        seconds = profile_latency(self.profile_path) if self.profiling else None
        return QueryOutcome(rows=result.rows, engine_seconds=seconds)

    def explain(self, query_number: int, text: str) -> str | None:
        rows = self.worker.execute(f"EXPLAIN {text}").rows
        return "\n".join(str(row[-1]) for row in rows)

    def engine_pids(self) -> list[int]:
        """The DuckDB worker: its memory and reads are the query's cost."""
        return [self.worker.pid] if self.worker.pid is not None else []

    def cancel(self) -> None:
        self.worker.interrupt()

    def close(self) -> None:
        self.worker.stop()
        self.profile_path.unlink(missing_ok=True)
