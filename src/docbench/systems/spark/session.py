"""Spark's query session: a Spark Connect session of its own (in the query worker, or a thread
of it for concurrent clients), which declares docbench's table over its files first (the
catalog of docbench's own server is in memory, and a cold query follows a restart)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.core.jsontypes import JsonMapping, as_array, as_object, as_str
from docbench.systems.spark.engine import TABLE, open_session
from docbench.systems.spark.server import processes_in

# How long a cancel keeps asking: an interrupt that reaches the server before the query does
# interrupts nothing, and the query then runs to its end (a test's lost interrupt once kept
# the shared server busy for the rest of a CI run).
CANCEL_PATIENCE_SECONDS = 30.0
CANCEL_RETRY_SECONDS = 0.2


class SparkQuerySession(QuerySession):
    def __init__(self, spec: JsonMapping) -> None:
        self.spark = open_session(as_str(spec["url"], "url"))
        for key, value in as_object(spec.get("conf") or {}, "conf").items():
            self.spark.conf.set(key, as_str(value, key))
        # One catalog lookup; the DDL only where the table is unknown (a restarted server).
        if not self.spark.catalog.tableExists(TABLE):
            for statement in as_array(spec["ddl"], "ddl"):
                self.spark.sql(as_str(statement, "statement")).collect()
        self.server_directories = [Path(as_str(d, "directory")) for d in as_array(spec["servers"], "servers")]
        self.query_done = threading.Event()
        self.query_done.set()

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        self.query_done.clear()
        try:
            rows = self.spark.sql(text).collect()
        finally:
            self.query_done.set()
        # Spark Connect reports no time of its own: the client's wall time is the figure.
        return QueryOutcome(rows=[tuple(row) for row in rows], engine_seconds=None)

    def explain(self, query_number: int, text: str) -> str | None:
        return str(self.spark.sql(f"EXPLAIN FORMATTED {text}").collect()[0][0])

    def engine_pids(self) -> list[int]:
        """The Connect server (the driver), and a cluster's workers and executors; none for
        a Spark reached by URL."""
        return processes_in(self.server_directories)

    def cancel(self) -> None:
        """Interrupt the running query, asking again until the server names an operation it
        interrupted or the query has returned (for at most ``CANCEL_PATIENCE_SECONDS``)."""
        give_up = time.monotonic() + CANCEL_PATIENCE_SECONDS
        while not self.spark.interruptAll() and time.monotonic() < give_up:
            if self.query_done.wait(CANCEL_RETRY_SECONDS):
                return

    def close(self) -> None:
        self.spark.stop()
