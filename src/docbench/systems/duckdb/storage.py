"""DuckDB in the storage workload: one JSON column, DuckDB's own compression choices.

Table ``storage_matrix (doc JSON)`` (no index, as in the analytics table), in a fresh database
file per cell (the engine's ``docbench.duckdb``). Variants: ``auto`` (DuckDB's default: it
picks a compression per column segment -- dictionary, FSST... -- after analysing it), and the
two ends forced with the ``force_compression`` setting: ``uncompressed`` and ``zstd``. DuckDB
stores strings longer than a block's inline limit in overflow blocks; whether those are
compressed is what the cells show.

Inserts: each batch is written to an ndjson file and read with ``read_ndjson_objects`` in one
transaction (the analytics loader's path). finish(): ``CHECKPOINT``. Sizes: the database's
used blocks x block size (``PRAGMA database_size``), cross-checked with the file's allocated
size; detail per compression from ``pragma_storage_info``.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from docbench.contracts.common import BatchRejected, StorageSize, Variant
from docbench.contracts.storage import TABLE, StorageMatrixTarget
from docbench.contracts.storage_documents import document_json
from docbench.core.jsontypes import JsonObject
from docbench.systems.duckdb.engine import DuckDBEngine, duckdb_module, is_content_error

BATCH_FILE = "storage-batch.ndjson"

VARIANTS: list[Variant] = [
    Variant(
        "auto",
        "JSON column, DuckDB's automatic compression (default)",
        role="default",
        settings={"force_compression": "auto"},
    ),
    Variant(
        "uncompressed",
        "JSON column, force_compression = 'uncompressed'",
        role="other",
        settings={"force_compression": "uncompressed"},
    ),
    Variant(
        "zstd", "JSON column, force_compression = 'zstd'", role="best", settings={"force_compression": "zstd"}
    ),
]


class DuckDBStorage(StorageMatrixTarget):
    engine: DuckDBEngine

    def __init__(self, engine: DuckDBEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.batch_path = engine.workdir / BATCH_FILE
        self._configured: Any = None

    @property
    def con(self):
        """The engine's connection, with the variant's force_compression set on it."""
        con = self.engine.connection()
        if con is not self._configured:
            forced = self.variant.settings.get("force_compression", "auto")
            con.execute(f"SET force_compression = '{forced}'")
            self._configured = con
        return con

    def stop(self) -> None:
        super().stop()
        self._configured = None
        self.batch_path.unlink(missing_ok=True)

    def version(self) -> str | None:
        return f"DuckDB {duckdb_module().__version__}"

    def create(self) -> None:
        self.engine.remove_database()
        self._configured = None
        self.con.execute(f"CREATE TABLE {TABLE} (doc JSON)")

    def insert(self, rows: list[tuple[str, str]]) -> None:
        data = "".join(document_json(key, payload) + "\n" for key, payload in rows).encode()
        fd = os.open(self.batch_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        self.con.execute("BEGIN TRANSACTION")
        try:
            self.con.execute(
                f"INSERT INTO {TABLE} SELECT json FROM read_ndjson_objects($path, "
                "maximum_object_size = 1073741824)",
                {"path": str(self.batch_path)},
            )
            self.con.execute("COMMIT")
        except Exception as error:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            if is_content_error(error):
                raise BatchRejected(str(error).strip()) from error
            raise

    def count(self) -> int:
        return int(self.con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])

    def finish(self) -> None:
        self.batch_path.unlink(missing_ok=True)
        self.con.execute("CHECKPOINT")

    def sizes(self) -> StorageSize:
        cursor = self.con.execute("PRAGMA database_size")
        names = [d[0] for d in cursor.description]
        info = dict(zip(names, cursor.fetchone(), strict=True))
        block_size = int(info["block_size"])
        used = int(info["used_blocks"]) * block_size
        compressions: JsonObject = {}
        with contextlib.suppress(Exception):
            for compression, count in self.con.execute(
                f"SELECT compression, count(*) FROM pragma_storage_info('{TABLE}') GROUP BY ALL"
            ).fetchall():
                compressions[str(compression)] = int(count)
        on_disk = 0
        for path in (self.engine.path, self.engine.wal_path):
            with contextlib.suppress(FileNotFoundError):
                on_disk += path.stat().st_blocks * 512
        detail: JsonObject = {
            "table": used,
            "index": 0,
            "block_size": block_size,
            "used_blocks": int(info["used_blocks"]),
            "free_blocks": int(info["free_blocks"]),
            "segments_by_compression": compressions,
            "force_compression": self.variant.settings.get("force_compression", "auto"),
        }
        return StorageSize(total=used, data=used, index=0, on_disk=on_disk, detail=detail)


ADAPTER = DuckDBStorage
