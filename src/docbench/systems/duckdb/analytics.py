"""DuckDB in the analytics workload: one JSON column, no index (as JSONBench).

DDL, load statement and queries are plain SQL files next to this module (``ddl.sql``,
``load.sql``, ``queries.sql``). The parent process creates and loads the database; each query
runs in a fresh worker process that opens the file read-only.
"""

from __future__ import annotations

from pathlib import Path

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QuerySession
from docbench.contracts.capabilities import BlueskyQueries, LiveIngest, NativeLoad, ReadBack
from docbench.contracts.common import StorageSize, Variant, directory_size
from docbench.contracts.engine import system_folder
from docbench.core.jsontypes import JsonObject
from docbench.core.sqlfiles import read_sql_statements, render
from docbench.systems.duckdb.engine import DuckDBEngine
from docbench.systems.duckdb.loader import BATCH_FILE_NAME, DuckDBLoader, InferredSchemaLoader
from docbench.systems.duckdb.session import DuckDBSession

TABLE = "documents"

VARIANTS: list[Variant] = [
    Variant(
        "default", "JSON column, DuckDB's automatic compression (dictionary/FSST), no index", role="default"
    ),
    Variant(
        "variant",
        "VARIANT column (each document decomposed into typed values at insert, DuckDB 2.0), "
        "paths read with dot notation (queries-variant.sql), no index",
        role="representation",
        settings={
            "doc_type": "VARIANT",
            "doc_value": "json::VARCHAR::JSON",
            "queries": "queries-variant.sql",
            "representation": "VARIANT",
        },
    ),
    Variant(
        "struct",
        "the columns read_ndjson infers (STRUCTs, typed values) from the first file loaded: a "
        "key it did not see is dropped, a value of another type refused; no JSON column, no "
        "index (queries-struct.sql)",
        role="representation",
        settings={
            "inferred_schema": True,
            "queries": "queries-struct.sql",
            "representation": "columns inferred by read_ndjson (STRUCT)",
            "retains_structure": False,
        },
    ),
]


class DuckDBAnalytics(AnalyticsAdapter, BlueskyQueries, LiveIngest, ReadBack, NativeLoad):
    engine: DuckDBEngine
    variants = VARIANTS
    retains_structure = True
    representation = "JSON (text)"
    # One DuckDB row group (122,880 rows) per batch: a full row group is compressed and
    # written straight to the database file at commit, a partial one waits for a checkpoint
    # (100,000-line batches loaded ~25% slower).
    load_batch_size = 122_880
    refused_hard_kinds = frozenset({"lone_surrogate"})
    native_refusals = "skips"  # read_ndjson ... ignore_errors + the rejects table
    # Concurrent clients share one database instance, a connection each, as DuckDB's docs
    # advise (a process each would give every client its own buffer pool, sized to most of
    # the machine's memory).
    concurrent_clients = "threads"

    # ----- loading -------------------------------------------------------------------------
    def create(self) -> None:
        # A fresh file, so that sizes never include blocks freed by an earlier load.
        self.engine.remove_database()
        (self.engine.workdir / BATCH_FILE_NAME).unlink(missing_ok=True)
        con = self.engine.connection()
        if self.variant.settings.get("inferred_schema"):
            con.execute("CHECKPOINT")
            return  # the first load creates the table from the schema it infers
        for statement in read_sql_statements(system_folder(self.engine) / "ddl.sql"):
            con.execute(render(statement, doc_type=str(self.variant.settings.get("doc_type", "JSON"))))
        con.execute("CHECKPOINT")

    def schema_from_data(self) -> bool:
        return bool(self.variant.settings.get("inferred_schema"))

    def loader(self) -> Loader:
        if self.variant.settings.get("inferred_schema"):
            return InferredSchemaLoader(self)
        return DuckDBLoader(self)

    def finish_load(self) -> None:
        # Write everything from the WAL into the database file so sizes are final.
        self.finish_step("CHECKPOINT", lambda: self.engine.connection().execute("CHECKPOINT"))

    def native_load(self, files: list[Path]) -> None:
        """`INSERT INTO documents SELECT json FROM read_ndjson_objects([...files])`: one
        statement over all files, as a person would type it."""
        statement = read_sql_statements(system_folder(self.engine) / "load.sql")[0]
        self.engine.connection().execute(statement, {"path": [str(p) for p in files]})

    def count(self) -> int:
        con = self.engine.connection()
        return int(con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])

    # Live ingest: the loader, the probe and the query clients are threads of this process,
    # each with a connection of its own to the one database instance (DuckDB's MVCC lets
    # them read beside the writer; a connection is not shared between threads).

    def live_session_spec(self) -> JsonObject:
        """Read-write connections: a read-only one cannot open the file this process holds
        open for writing (DuckDB refuses a second configuration of one database)."""
        return {**super().live_session_spec(), "read_only": False}

    def visible_count(self) -> int:
        """The count on a connection of its own (the loader's is busy in another thread),
        closed after it so that none outlives the engine's release. Cheap: it joins the
        instance the process has open."""
        con = self.engine.connect()
        try:
            return int(con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])
        finally:
            con.close()

    def read_back(self) -> list[str]:
        """JSON as stored (text); a VARIANT cast back to JSON by DuckDB; the inferred columns
        as DuckDB writes a row as JSON (every column, null where the document had nothing)."""
        # The row's alias must not be a column's name (a document's key "d" would be read).
        alias = "docbench_row"
        inferred = self.variant.settings.get("inferred_schema")
        expression = f"to_json({alias})" if inferred else "CAST(doc AS JSON)"
        query = f"SELECT {expression}::VARCHAR FROM {TABLE} AS {alias}"
        return [str(row[0]) for row in self.engine.connection().execute(query).fetchall()]

    def storage(self) -> StorageSize:
        con = self.engine.connection()
        con.execute("CHECKPOINT")
        cursor = con.execute("SELECT * FROM pragma_database_size()")
        names = [d[0] for d in cursor.description]
        size = dict(zip(names, cursor.fetchone(), strict=True))
        block_size = int(size["block_size"])
        table_blocks = con.execute(
            f"""SELECT count(DISTINCT block) FROM (
                  SELECT block_id AS block FROM pragma_storage_info('{TABLE}')
                  WHERE persistent AND block_id >= 0
                  UNION ALL
                  SELECT unnest(additional_block_ids) FROM pragma_storage_info('{TABLE}')
                  WHERE persistent)"""
        ).fetchone()[0]
        data = int(table_blocks) * block_size
        path = self.engine.path
        used = int(size["used_blocks"]) * block_size
        detail = {
            "block_size": block_size,
            "total_blocks": int(size["total_blocks"]),
            "used_blocks": int(size["used_blocks"]),
            "free_blocks": int(size["free_blocks"]),
            "table_blocks": int(table_blocks),
            "metadata_bytes": max(used - data, 0),
            "database_file_bytes": path.stat().st_size if path.exists() else None,
            "wal_size": size.get("wal_size"),
            "compression": [
                r[0]
                for r in con.execute(
                    f"SELECT DISTINCT compression FROM pragma_storage_info('{TABLE}') ORDER BY 1"
                ).fetchall()
            ],
        }
        return StorageSize(
            total=used, data=data, index=0, on_disk=directory_size(self.engine.workdir), detail=detail
        )

    # ----- queries -------------------------------------------------------------------------
    def sql_names(self) -> dict[str, str]:
        """queries.sql's table and JSON column."""
        return {"table": TABLE, "column": "doc"}

    def session_spec(self) -> JsonObject:
        return {"workdir": str(self.engine.workdir)}

    @classmethod
    def open_session(cls, spec: JsonObject) -> QuerySession:
        return DuckDBSession(spec)


ADAPTER = DuckDBAnalytics
