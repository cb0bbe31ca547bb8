"""DuckDB in the updates workload: ``ycsb (doc JSON)`` loaded with ``read_ndjson_objects``, the key
extracted at load into its own column ``ycsb_key`` with an ART index on it (DuckDB 2.0 refuses
an index on an expression of the JSON column: "Cannot use json_extract_string in this
context"). Bulk style: ``json_merge_patch``.
Maintenance: ``CHECKPOINT`` (DuckDB's VACUUM does not reclaim space; a checkpoint writes the
table and frees the blocks of the old row groups for reuse). Sessions of one process share the
engine's database instance (DuckDB allows one writing process per file)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import ClassVar

from docbench.contracts.common import StorageSize, Variant, directory_size
from docbench.contracts.updates import KeyValueSession, UpdatesTarget
from docbench.core.jsontypes import JsonObject, as_object, as_str
from docbench.systems.duckdb.engine import DuckDBEngine, duckdb_module, write_lines

VARIANTS: list[Variant] = [
    Variant(
        "default",
        "JSON column + extracted ycsb_key column with an ART index",
        settings={"type": "json", "index": "art"},
    ),
]
TABLE = "ycsb"
KEY = "ycsb_key"


class DuckDBKeyValueSession(KeyValueSession):
    def __init__(self, spec: JsonObject) -> None:
        self.con = DuckDBEngine(Path(as_str(spec["workdir"], "workdir"))).connect()
        if spec.get("memory_limit"):  # the throughput workload's IO-bound scenario
            self.con.execute(f"SET memory_limit = '{spec['memory_limit']}'")

    def read(self, key: str) -> JsonObject | None:
        row = self.con.execute(f"SELECT doc::VARCHAR FROM {TABLE} WHERE {KEY} = ?", [key]).fetchone()
        return as_object(json.loads(row[0]), "document") if row else None

    def update_field(self, key: str, field: str, value: str) -> int:
        row = self.con.execute(
            f"UPDATE {TABLE} SET doc = json_merge_patch(doc, json_object(?, ?)) WHERE {KEY} = ?",
            [field, value, key],
        ).fetchone()
        return int(row[0]) if row else 0

    def insert(self, doc: dict[str, str]) -> None:
        self.con.execute(f"INSERT INTO {TABLE} VALUES (?, ?::JSON)", [doc["ycsb_key"], json.dumps(doc)])

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()


class DuckDBUpdates(UpdatesTarget):
    engine: DuckDBEngine
    styles: ClassVar[list[str]] = ["json_merge_patch"]
    # Throughput workload: only one process may open the file for writing.
    max_client_processes: ClassVar[int] = 1
    concurrency_note: ClassVar[str] = (
        "DuckDB: one process opens the database file; the clients are threads of one worker "
        "process, each with its own connection to the shared database instance (optimistic "
        "concurrency: conflicting writes fail and are counted as failures)"
    )

    def __init__(self, engine: DuckDBEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.memory_limit: str | None = None

    def con(self):
        return self.engine.connection()

    def limit_cache(self, cache_bytes: int) -> str:
        """IO-bound scenario: DuckDB's buffer manager limited (a database-wide setting, set by
        every client connection: they share one database instance). Not below 64 MB: with
        16 MB, 98% of the read-write operations failed ("failed to pin block") and DuckDB
        then invalidated the database (measured on 100k documents, 8 clients)."""
        self.memory_limit = f"{max(64, cache_bytes >> 20)}MB"
        return f"SET memory_limit = '{self.memory_limit}' (the buffer manager's limit)"

    def restore_cache(self) -> None:
        self.memory_limit = None

    def engine_info(self) -> JsonObject:
        return {"duckdb": duckdb_module().__version__}

    def create(self) -> None:
        self.engine.remove_database()
        self.con().execute(f"CREATE TABLE {TABLE} (ycsb_key VARCHAR NOT NULL, doc JSON NOT NULL)")

    def load(self, docs: list[bytes]) -> None:
        batch = self.engine.workdir / "load.ndjson"
        write_lines(batch, docs)
        try:
            self.con().execute(
                f"INSERT INTO {TABLE} SELECT json->>'ycsb_key', json FROM read_ndjson_objects(?)",
                [str(batch)],
            )
            self.con().execute("CHECKPOINT")
        finally:
            batch.unlink(missing_ok=True)

    def create_key_index(self) -> None:
        self.con().execute(f"CREATE INDEX {TABLE}_key ON {TABLE} ({KEY})")

    def count(self) -> int:
        return int(self.con().execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])

    def count_field(self, field: str, value: str) -> int:
        return int(
            self.con()
            .execute(f"SELECT count(*) FROM {TABLE} WHERE doc->>? = ?", [field, value])
            .fetchone()[0]
        )

    def bulk_update_styles(self) -> list[str]:
        return list(self.styles)

    def bulk_add_field(self, style: str, field: str, value: str) -> int:
        if style != "json_merge_patch":
            raise ValueError(f"unknown style {style!r}")
        row = (
            self.con()
            .execute(f"UPDATE {TABLE} SET doc = json_merge_patch(doc, json_object(?, ?))", [field, value])
            .fetchone()
        )
        return int(row[0]) if row else -1

    def maintain(self) -> str:
        self.con().execute("CHECKPOINT")
        return "CHECKPOINT"

    def sizes(self) -> StorageSize:
        con = self.con()
        cursor = con.execute("SELECT * FROM pragma_database_size()")
        names = [d[0] for d in cursor.description]
        size = dict(zip(names, cursor.fetchone(), strict=True))
        block = int(size["block_size"])
        return StorageSize(
            total=int(size["used_blocks"]) * block,
            data=None,
            index=None,
            on_disk=directory_size(self.engine.workdir),
            detail={
                "total_blocks": int(size["total_blocks"]),
                "free_blocks": int(size["free_blocks"]),
                "wal_size": str(size.get("wal_size")),
                "file_bytes": self.engine.path.stat().st_size,
            },
        )

    def session_spec(self) -> JsonObject:
        return {"workdir": str(self.engine.workdir), "memory_limit": self.memory_limit}

    @classmethod
    def open_session(cls, spec: JsonObject) -> DuckDBKeyValueSession:
        return DuckDBKeyValueSession(spec)


ADAPTER = DuckDBUpdates
