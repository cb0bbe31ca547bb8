"""PostgreSQL in the analytics workload: one JSONB column, a composite expression index on
the five JSONBench paths.

The server (managed cluster or the user's, by URL) is the engine's (``engine.py``); this
adapter creates its table in docbench's own database there, loads it (``loader.py``: COPY FROM
STDIN) and queries it (``session.py``: the query worker's session).

The DDL (``ddl.sql``; the variant ``jsonbench`` uses JSONBench's own, ``ddl-jsonbench.sql``) and
the queries (``queries.sql``) are plain SQL files next to this module.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QuerySession
from docbench.contracts.capabilities import BlueskyQueries, LiveIngest, NativeLoad, ReadBack
from docbench.contracts.common import StorageSize, Variant, directory_size
from docbench.contracts.engine import system_file
from docbench.core.jsontypes import JsonMapping, JsonObject, JsonValue
from docbench.core.sqlfiles import read_ddl, step_name
from docbench.systems.postgresql.engine import COPY_OPTIONS, PostgreSQLEngine, copy_buffer
from docbench.systems.postgresql.loader import PostgreSQLLoader
from docbench.systems.postgresql.session import PostgreSQLSession

log = logging.getLogger(__name__)


# Plan nodes that read through an index.
INDEX_NODE_TYPES = {"Index Scan", "Index Only Scan", "Bitmap Index Scan"}


# ----- the adapter ------------------------------------------------------------------------

VARIANTS: list[Variant] = [
    Variant(
        "pglz",
        "JSONB column, TOAST compression pglz (PostgreSQL's default)",
        role="default",
        settings={"compression": "pglz"},
    ),
    Variant("lz4", "JSONB column, TOAST compression lz4", role="best", settings={"compression": "lz4"}),
    Variant(
        "json",
        "json column (the document's text as it arrived, parsed again at every read), TOAST "
        "compression pglz; the same index and queries as pglz (ddl-json.sql)",
        role="representation",
        settings={"compression": "pglz", "ddl": "ddl-json.sql", "representation": "json"},
    ),
    Variant(
        "jsonb_columns",
        "JSONB column plus the five JSONBench paths as STORED generated columns, indexed and "
        "queried as columns (ddl-columns.sql, queries-columns.sql): a schema by hand, beyond "
        "JSONBench's rules",
        role="representation",
        settings={
            "compression": "pglz",
            "ddl": "ddl-columns.sql",
            "queries": "queries-columns.sql",
            "representation": "jsonb + generated columns",
            "schema_by_hand": True,
        },
    ),
    Variant(
        "jsonbench",
        "JSONBench's configuration: lz4, its index (time as TO_TIMESTAMP) created before the load, "
        "VACUUM ANALYZE after it (ddl-jsonbench.sql)",
        role="alt",
        settings={"compression": "lz4", "ddl": "ddl-jsonbench.sql"},
    ),
]


class PostgreSQLAnalytics(AnalyticsAdapter, BlueskyQueries, LiveIngest, ReadBack, NativeLoad):
    variants: ClassVar[list[Variant]] = VARIANTS
    # Live ingest: the loader's batches, each committed; a commit is visible at once.
    retains_structure = True
    representation = "jsonb"
    engine_defaults: ClassVar[JsonObject] = {"compression": "pglz"}
    # A refused batch is re-sent as ~2x its size while bisecting; 20k documents (~10 MB)
    # keep that under a second and already amortise the per-COPY/commit overhead.
    load_batch_size = 20_000
    refused_hard_kinds = frozenset({"nul_escape", "lone_surrogate"})
    native_refusals = "stops"  # COPY stops at the refused line, naming it
    time_precision_us = 1
    engine: PostgreSQLEngine

    def __init__(self, engine: PostgreSQLEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.table = f"bluesky_{variant.name}"
        self.index = f"{self.table}_paths"
        self.compression = str(variant.settings.get("compression", "pglz"))
        # The schema file: docbench's ddl.sql, or another one next to it (JSONBench's own).
        self.ddl_file = str(variant.settings.get("ddl", "ddl.sql"))

    # ----- loading -----------------------------------------------------------------------
    def _ddl(self) -> tuple[list[str], list[str]]:
        return read_ddl(
            system_file(self.engine, self.ddl_file), table=self.table, compression=self.compression
        )

    def create(self) -> None:
        conn = self.engine.admin_connection()
        for statement in self._ddl()[0]:
            conn.execute(statement)

    def loader(self) -> Loader:
        return PostgreSQLLoader(self.engine.conninfo(), self.table)

    def finish_load(self) -> None:
        conn = self.engine.admin_connection()
        for statement in self._ddl()[1]:
            self.finish_step(step_name(statement), functools.partial(conn.execute, statement))

    def native_load(self, files: list[Path]) -> None:
        """What a person types: ``psql -c "\\copy t (data) FROM 'file' WITH (...)"`` per file.

        A file with a document PostgreSQL refuses is lost as a whole (one transaction per
        file), as it is by hand; a warning is logged and the next file is loaded.
        """
        params = self.engine.conninfo_params()
        env = {**os.environ, "PGCLIENTENCODING": "UTF8"}
        password = params.pop("password", None)
        if password:
            env["PGPASSWORD"] = str(password)  # not on the command line
        from psycopg.conninfo import make_conninfo

        psql = self.engine.psql_path()
        for path in files:
            source = _copy_source(path)
            command = f"\\copy {self.table} (data) FROM {source} WITH ({COPY_OPTIONS})"
            out = subprocess.run(
                [psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", make_conninfo("", **params), "-c", command],
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            if out.returncode == 0:
                continue
            message = " ".join(out.stderr.split())[:500]
            if out.returncode in (1, 3) and "ERROR:" in out.stderr:
                # As by hand: one refused document loses the whole file (its transaction),
                # and the next file is loaded. Connection or psql failures are raised.
                log.warning("psql \\copy of %s refused, file not loaded: %s", path.name, message)
                continue
            raise RuntimeError(f"psql \\copy of {path.name} failed: {message}")

    def count(self) -> int:
        return int(self.engine.admin_connection().execute(f"SELECT count(*) FROM {self.table}").fetchone()[0])

    def read_back(self) -> list[str]:
        """The documents as PostgreSQL prints them: json as stored, jsonb re-written."""
        rows = self.engine.admin_connection().execute(f"SELECT data::text FROM {self.table}").fetchall()
        return [str(row[0]) for row in rows]

    def storage(self) -> StorageSize:
        conn = self.engine.admin_connection()
        row = conn.execute(
            "SELECT pg_total_relation_size(c.oid), pg_table_size(c.oid), pg_indexes_size(c.oid),"
            " pg_relation_size(c.oid),"
            " CASE WHEN c.reltoastrelid <> 0 THEN pg_total_relation_size(c.reltoastrelid) END,"
            " pg_database_size(current_database()),"
            " pg_relation_size(to_regclass(%s))"
            " FROM pg_class c WHERE c.oid = %s::regclass",
            (self.index, self.table),
        ).fetchone()
        total, data, index, heap, toast, database, index_main = (
            int(v) if v is not None else None for v in row
        )
        compressed = conn.execute(
            f"SELECT count(*) FILTER (WHERE pg_column_compression(data) IS NOT NULL), count(*)"
            f" FROM {self.table}"
        ).fetchone()
        detail: JsonObject = {
            "heap_bytes": heap,
            "toast_bytes": toast,
            "database_bytes": database,
            # JSONBench's index_size.sh: the main fork of the index alone (index_bytes, from
            # pg_indexes_size, adds its other forks: none for a B-tree that never freed a page).
            "index_relation_bytes": index_main,
            "compression": self.compression,
            "compressed_documents": int(compressed[0]),
            "documents": int(compressed[1]),
        }
        on_disk = None
        data_dir = self.engine.data_dir
        if data_dir is not None:
            on_disk = directory_size(data_dir)
            detail["wal_bytes"] = directory_size(data_dir / "pg_wal")
        return StorageSize(total=total, data=data, index=index, on_disk=on_disk, detail=detail)

    # ----- queries -----------------------------------------------------------------------
    def sql_names(self) -> dict[str, str]:
        return {"table": self.table}

    def session_spec(self) -> JsonObject:
        params = self.engine.conninfo_params()
        spec: JsonObject = {"table": self.table, "index": self.index, "local": self.engine.is_local()}
        password_file = self.engine.password_file
        if password_file is not None:
            # The password stays in its file (mode 0600); the worker reads it.
            params.pop("password", None)
            spec["password_file"] = str(password_file)
        spec["conninfo"] = {**params}
        return spec

    @classmethod
    def open_session(cls, spec: JsonMapping) -> QuerySession:
        return PostgreSQLSession(spec)

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """Q2-Q5 filter on the indexed paths: warn unless a scan of our index is in the plan.
        Q1 reads every document, so a (parallel) sequential scan is what it should do."""
        if query_number == 1:
            return None
        if not plan:
            return f"Q{query_number}: no plan to check"
        try:
            nodes = list(_plan_nodes(json.loads(plan)))
        except (ValueError, TypeError):
            return f"Q{query_number}: the plan is not EXPLAIN JSON"
        if any(n.get("Node Type") in INDEX_NODE_TYPES and n.get("Index Name") == self.index for n in nodes):
            return None
        scans = sorted(
            {
                f"{n.get('Node Type')}" + (f" on {n['Index Name']}" if n.get("Index Name") else "")
                for n in nodes
                if "Scan" in str(n.get("Node Type"))
            }
        )
        return (
            f"Q{query_number}: the planner does not use the index {self.index} "
            f"(scans: {', '.join(scans) or 'none'})"
        )


# ----- helpers ----------------------------------------------------------------------------


def _plan_nodes(plan: JsonValue) -> Iterator[JsonObject]:
    """Every node of an EXPLAIN (FORMAT JSON) document."""
    if isinstance(plan, list):
        for item in plan:
            yield from _plan_nodes(item)
    elif isinstance(plan, dict):
        if "Node Type" in plan:
            yield plan
        for key in ("Plan", "Plans"):
            if key in plan:
                yield from _plan_nodes(plan[key])


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _copy_source(path: Path) -> str:
    """The FROM clause of psql's \\copy: the file, or a decompressing program for it."""
    programs = {".gz": "gzip -dc", ".zst": "zstd -dc", ".zstd": "zstd -dc", ".lz4": "lz4 -dc"}
    program = programs.get(path.suffix)
    if program is None:
        return _sql_literal(str(path))
    return "PROGRAM " + _sql_literal(f"{program} {shlex.quote(str(path))}")


ADAPTER = PostgreSQLAnalytics

__all__ = [
    "ADAPTER",
    "VARIANTS",
    "PostgreSQLAnalytics",
    "PostgreSQLLoader",
    "PostgreSQLSession",
    "copy_buffer",
]
