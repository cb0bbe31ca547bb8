"""ClickHouse's (chDB) query session: the analytics workload's query worker opens the database
directory and runs the queries through it."""

from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import Any

import orjson

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.core.jsontypes import JsonObject, as_float, as_str
from docbench.systems.clickhouse.engine import ClickHouseEngine


def _result_stats(result: Any) -> JsonObject:
    stats: JsonObject = {}
    for name in ("rows_read", "bytes_read", "storage_rows_read", "storage_bytes_read"):
        method = getattr(result, name, None)
        if method is not None:
            with contextlib.suppress(Exception):
                stats[name] = int(method())
    return stats


class ClickHouseSession(QuerySession):
    """A chDB session in the query worker. Rows come back as JSONCompact (64-bit integers
    unquoted) and are parsed with orjson; the engine time is chDB's own ``elapsed()``."""

    def __init__(self, spec: JsonObject) -> None:
        self.engine = ClickHouseEngine(Path(as_str(spec["workdir"], "workdir")))
        self.engine.server_settings = str(spec.get("server_settings", ""))
        self.con = self.engine.connect()  # the process's embedded server, opened once
        self.own: Any = None
        if spec.get("own_connection"):
            # Concurrent clients (threads of one process): a chDB connection each, to the
            # process's one embedded server, never one connection shared by all of them.
            import chdb

            self.own = self.con = chdb.connect(self.engine.connection_string())
        settings = {
            # No result cache (it is off by default; said explicitly, as JSONBench requires).
            "use_query_cache": 0,
            "output_format_json_quote_64bit_integers": 0,
            "output_format_json_quote_64bit_floats": 0,
        }
        timeout = spec.get("timeout")
        if timeout:
            settings["max_execution_time"] = max(1, math.ceil(as_float(timeout, "timeout")))
        for name, value in settings.items():
            self.con.query(f"SET {name} = {value}")

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        try:
            result = self.con.query(text, "JSONCompact")
        except Exception:
            self._drain()
            raise
        payload = result.bytes()
        rows = orjson.loads(payload)["data"] if payload else []
        extra = _result_stats(result)
        seconds = None
        with contextlib.suppress(Exception):
            seconds = float(result.elapsed())
        return QueryOutcome(
            rows=[tuple(row) for row in rows], engine_seconds=seconds, engine_memory=None, extra=extra
        )

    def _drain(self) -> None:
        """chDB 4.4 keeps the output a failed query had written (a SELECT stopped by
        max_execution_time: its JSONCompact header) and hands it out ahead of the connection's
        next result, which then does not parse. A throwaway query takes it (measured:
        tests/test_concurrency.py's timed-out queries; other connections are not affected)."""
        with contextlib.suppress(Exception):
            self.con.query("SELECT 1", "JSONCompact")

    def explain(self, query_number: int, text: str) -> str | None:
        plan = str(self.con.query(f"EXPLAIN indexes = 1 {text}", "TSVRaw")).rstrip()
        with contextlib.suppress(Exception):
            pipeline = str(self.con.query(f"EXPLAIN PIPELINE {text}", "TSVRaw")).rstrip()
            plan += "\n\n-- EXPLAIN PIPELINE\n" + pipeline
        return plan

    def cancel(self) -> None:
        """chDB has no way to interrupt a running ``query()`` from another thread; the
        session's ``max_execution_time`` (from the spec's ``timeout``) stops it, and the runner
        kills the worker process."""

    def close(self) -> None:
        if self.own is not None:
            self.own.close()  # its own connection only: the others go on
            return
        self.engine.release()
