"""Databend in the analytics workload: one VARIANT column, no index (as JSONBench's Databend
entry, less its virtual columns: a commercial feature in this build).

DDL, load statement and queries are plain SQL files next to this module (``ddl.sql``,
``load.sql``, ``queries.sql``). The parent process creates and loads the database through its
Databend process; each query runs in a fresh worker process that starts one of its own.
"""

from __future__ import annotations

from pathlib import Path

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QuerySession
from docbench.contracts.capabilities import BlueskyQueries, NativeLoad, ReadBack
from docbench.contracts.common import StorageSize, Variant, directory_size
from docbench.contracts.engine import system_folder
from docbench.core.jsontypes import JsonMapping, JsonObject
from docbench.core.sqlfiles import read_sql_statements, render
from docbench.systems.databend.engine import DatabendEngine
from docbench.systems.databend.loader import BATCH_FILE_NAME, DatabendLoader
from docbench.systems.databend.session import DatabendSession

TABLE = "documents"

VARIANTS: list[Variant] = [
    Variant(
        "variant",
        "VARIANT column (Databend's binary JSON), Databend's default table (Parquet blocks, LZ4), "
        "no index, no virtual columns (a commercial feature in this build)",
        role="default",
        settings={"table_options": ""},
    ),
    Variant(
        "zstd",
        "VARIANT column, the table's blocks compressed with zstd (COMPRESSION = 'zstd') instead "
        "of the default LZ4, no index",
        role="alt",
        settings={"table_options": "COMPRESSION = 'zstd'", "compression": "zstd"},
    ),
]


class DatabendAnalytics(AnalyticsAdapter, BlueskyQueries, ReadBack, NativeLoad):
    engine: DatabendEngine
    variants = VARIANTS
    retains_structure = True
    representation = "VARIANT (Databend's binary JSON)"
    engine_defaults = {"compression": "lz4"}
    load_batch_size = 100_000
    # Databend's JSON parser refuses an escaped lone surrogate ("\\ud83d") and nesting deeper
    # than 128 levels (its recursion limit).
    refused_hard_kinds = frozenset({"lone_surrogate", "deep_nesting"})
    # Every session is a Databend process on the one database directory, and only one
    # process may hold it: concurrent clients are threads of one process sharing one session.
    concurrent_clients = "threads"

    # ----- loading -------------------------------------------------------------------------
    def create(self) -> None:
        # A fresh directory, so that sizes never include files of an earlier load.
        self.engine.remove_database()
        (self.engine.workdir / BATCH_FILE_NAME).unlink(missing_ok=True)
        host = self.engine.connection()
        options = str(self.variant.settings.get("table_options", ""))
        for statement in read_sql_statements(system_folder(self.engine) / "ddl.sql"):
            host.execute(render(statement, table_options=options))

    def loader(self) -> Loader:
        return DatabendLoader(self)

    def native_load(self, files: list[Path]) -> None:
        """A COPY per file (load.sql), as a person would type it."""
        statement = read_sql_statements(system_folder(self.engine) / "load.sql")[0]
        host = self.engine.connection()
        for path in files:
            host.execute(render(statement, path=str(path.resolve())))

    def count(self) -> int:
        return int(self.engine.connection().rows(f"SELECT count(*) FROM {TABLE}")[0][0])

    def read_back(self) -> list[str]:
        """Each VARIANT written back as JSON text by Databend (``::STRING``)."""
        return [str(row[0]) for row in self.engine.connection().rows(f"SELECT doc::STRING FROM {TABLE}")]

    def storage(self) -> StorageSize:
        """The table's latest snapshot (``fuse_snapshot``): its blocks' compressed bytes and
        their index files; on disk, the database directory (metadata, older snapshots and the
        engine's log included)."""
        host = self.engine.connection()
        snapshots = host.rows(
            "SELECT segment_count, block_count, row_count, bytes_uncompressed, bytes_compressed, "
            f"index_size FROM fuse_snapshot('default', '{TABLE}') ORDER BY timestamp DESC"
        )
        if snapshots:
            segments, blocks, rows, uncompressed, compressed, index = (int(v or 0) for v in snapshots[0])
        else:
            segments = blocks = rows = uncompressed = compressed = index = 0
        data_directory = self.engine.directory / ".databend" / "_data"
        detail: JsonObject = {
            "segments": segments,
            "blocks": blocks,
            "rows": rows,
            "bytes_uncompressed": uncompressed,
            "snapshots": len(snapshots),
            "compression": str(self.variant.settings.get("compression", "lz4")),
            "data_directory_bytes": directory_size(data_directory) if data_directory.exists() else 0,
        }
        return StorageSize(
            total=compressed + index,
            data=compressed,
            index=index,
            on_disk=directory_size(self.engine.directory),
            detail=detail,
        )

    # ----- queries -------------------------------------------------------------------------
    def sql_names(self) -> dict[str, str]:
        return {"table": TABLE}

    def session_spec(self) -> JsonObject:
        return {"workdir": str(self.engine.workdir)}

    @classmethod
    def open_session(cls, spec: JsonMapping) -> QuerySession:
        return DatabendSession(spec)


ADAPTER = DatabendAnalytics
