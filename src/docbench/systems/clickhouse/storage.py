"""ClickHouse (chDB) in the storage workload: one JSON column per codec.

Table ``docbench.storage_matrix (doc JSON(key String, payload String) CODEC(...))``, MergeTree
``ORDER BY doc.key``. The two paths are typed, so each is a String subcolumn of the JSON column
and the column's codec applies to them (as in the analytics table, whose JSONBench paths are
typed the same way). Variants: no compression (``CODEC(NONE)``), ClickHouse's default (LZ4),
ZSTD(1) (JSONBench's choice), ZSTD(9). ClickHouse compresses blocks of 64 kB-1 MB of a column,
i.e. many documents together -- unlike PostgreSQL, which compresses each value alone.

Inserts: each batch is written to an ndjson file in the work directory and inserted with
``INSERT ... FROM INFILE ... FORMAT JSONAsObject`` as one block (all or nothing). finish():
``OPTIMIZE TABLE ... FINAL`` (one part). Sizes from ``system.parts`` (active parts:
bytes_on_disk; data = compressed column bytes; index = primary key + marks), cross-checked with
the table's data directory.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import orjson

from docbench.contracts.common import BatchRejected, StorageSize, Variant, directory_size
from docbench.contracts.storage import TABLE, StorageMatrixTarget
from docbench.contracts.storage_documents import document_json
from docbench.core.jsontypes import JsonObject
from docbench.systems.clickhouse.engine import ClickHouseEngine, error_text, is_content_error, sql_string

DATABASE = "docbench"
QUALIFIED = f"{DATABASE}.{TABLE}"
BATCH_FILE = "storage-batch.ndjson"

VARIANTS: list[Variant] = [
    Variant(
        "none", "JSON column, CODEC(NONE): no compression", role="other", settings={"codec": "CODEC(NONE)"}
    ),
    Variant("lz4", "JSON column, ClickHouse's default codec (LZ4)", role="default", settings={"codec": ""}),
    Variant(
        "zstd1",
        "JSON column, CODEC(ZSTD(1)) (JSONBench's codec)",
        role="best",
        settings={"codec": "CODEC(ZSTD(1))"},
    ),
    Variant("zstd9", "JSON column, CODEC(ZSTD(9))", role="other", settings={"codec": "CODEC(ZSTD(9))"}),
]


class ClickHouseStorage(StorageMatrixTarget):
    engine: ClickHouseEngine

    def __init__(self, engine: ClickHouseEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.batch_path = engine.workdir / BATCH_FILE

    def query(self, sql: str, fmt: str = "TSVRaw") -> str:
        return self.engine.query(sql, fmt)

    def start(self) -> None:
        super().start()
        self.query(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")

    def stop(self) -> None:
        self.batch_path.unlink(missing_ok=True)
        super().stop()

    def version(self) -> str | None:
        return "ClickHouse " + self.query("SELECT version()").strip()

    def create(self) -> None:
        self.query(f"DROP TABLE IF EXISTS {QUALIFIED} SYNC")
        codec = self.variant.settings.get("codec", "")
        self.query(
            f"CREATE TABLE {QUALIFIED} (doc JSON(key String, payload String) {codec}) "
            "ENGINE = MergeTree ORDER BY doc.key "
            "SETTINGS cleanup_delay_period = 1, max_cleanup_delay_period = 1, "
            "cleanup_delay_period_random_add = 0"
        )

    def insert(self, rows: list[tuple[str, str]]) -> None:
        data = "".join(document_json(key, payload) + "\n" for key, payload in rows).encode()
        fd = os.open(self.batch_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        try:
            self.query(
                f"INSERT INTO {QUALIFIED} FROM INFILE '{sql_string(str(self.batch_path))}' "
                "SETTINGS max_insert_block_size = 1000000000, "
                "min_insert_block_size_rows = 1000000000, min_insert_block_size_bytes = 0 "
                "FORMAT JSONAsObject"
            )
        except Exception as error:
            if is_content_error(error):
                raise BatchRejected(error_text(error)) from error
            raise

    def count(self) -> int:
        return int(self.query(f"SELECT count() FROM {QUALIFIED}").strip() or 0)

    def finish(self) -> None:
        self.batch_path.unlink(missing_ok=True)
        self.query(f"OPTIMIZE TABLE {QUALIFIED} FINAL")
        self.engine.wait_for_outdated_parts(DATABASE, TABLE)

    def sizes(self) -> StorageSize:
        row = orjson.loads(
            self.query(
                "SELECT count(), sum(rows), sum(bytes_on_disk), sum(data_compressed_bytes), "
                "sum(data_uncompressed_bytes), sum(primary_key_size), sum(marks_bytes) "
                f"FROM system.parts WHERE database = '{DATABASE}' AND table = '{TABLE}' AND active",
                "JSONCompact",
            )
        )["data"][0]
        parts, rows, total, data, uncompressed, pk, marks = (int(v or 0) for v in row)
        paths = orjson.loads(
            self.query(
                f"SELECT data_paths FROM system.tables WHERE database = '{DATABASE}' AND name = '{TABLE}'",
                "JSONCompact",
            )
        )["data"]
        on_disk = None
        if paths:
            on_disk = 0
            for path in paths[0][0]:
                with contextlib.suppress(OSError):
                    on_disk += directory_size(Path(path))
        detail: JsonObject = {
            "table": data,
            "index": pk + marks,
            "parts": parts,
            "rows": rows,
            "data_uncompressed_bytes": uncompressed,
            "codec": self.variant.settings.get("codec") or "default (LZ4)",
        }
        return StorageSize(total=total, data=data, index=pk + marks, on_disk=on_disk, detail=detail)


ADAPTER = ClickHouseStorage
