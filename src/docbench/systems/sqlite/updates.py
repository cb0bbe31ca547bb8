"""SQLite in the updates workload: ``ycsb (doc BLOB)`` holding SQLite JSONB, an index on the
extracted key ``doc ->> '$.ycsb_key'``. Bulk styles: ``jsonb_set`` and ``jsonb_patch``.
Maintenance: ``VACUUM`` (rewrites the file; freed pages go back to the OS). The engine's
database file in WAL mode with synchronous=NORMAL (``pragmas.sql``, engine.py)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import ClassVar

from docbench.contracts.common import StorageSize, Variant, directory_size
from docbench.contracts.updates import KeyValueSession, UpdatesTarget
from docbench.core.jsontypes import JsonMapping, JsonObject, as_int, as_object, as_str
from docbench.systems.sqlite.engine import SQLiteEngine, sqlean_module

VARIANTS: list[Variant] = [
    Variant(
        "jsonb",
        "JSONB blob column, index on doc ->> '$.ycsb_key'",
        settings={"type": "jsonb", "index": "expression"},
    ),
]
TABLE = "ycsb"
KEY = "doc ->> '$.ycsb_key'"


class SQLiteKeyValueSession(KeyValueSession):
    def __init__(self, spec: JsonMapping) -> None:
        self.con = SQLiteEngine(Path(as_str(spec["workdir"], "workdir"))).connect()
        if spec.get("cache_kib"):  # the throughput workload's IO-bound scenario
            self.con.execute(f"PRAGMA cache_size = -{as_int(spec['cache_kib'], 'cache_kib')}")

    def read(self, key: str) -> JsonObject | None:
        row = self.con.execute(f"SELECT json(doc) FROM {TABLE} WHERE {KEY} = ?", (key,)).fetchone()
        return as_object(json.loads(row[0]), "document") if row else None

    def update_field(self, key: str, field: str, value: str) -> int:
        cur = self.con.execute(
            f"UPDATE {TABLE} SET doc = jsonb_set(doc, ?, ?) WHERE {KEY} = ?", (f"$.{field}", value, key)
        )
        return cur.rowcount

    def insert(self, doc: JsonMapping) -> None:
        self.con.execute(f"INSERT INTO {TABLE} (doc) VALUES (jsonb(?))", (json.dumps(doc),))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()


class SQLiteUpdates(UpdatesTarget):
    engine: SQLiteEngine
    styles: ClassVar[list[str]] = ["jsonb_set", "jsonb_patch"]
    concurrency_note: ClassVar[str] = (
        "SQLite (WAL): readers run concurrently in any process; one writer at a time holds "
        "the database's write lock (busy_timeout 60 s)"
    )

    def __init__(self, engine: SQLiteEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.session_cache_kib: int | None = None

    def con(self):
        return self.engine.connection()

    def limit_cache(self, cache_bytes: int) -> str:
        """IO-bound scenario: a small page cache on every client connection. Each connection
        has its own cache, so the budget is shared as if by 32 clients (the most docbench
        runs by default): together they hold at most ``cache_bytes``."""
        self.session_cache_kib = max(64, (cache_bytes >> 10) // 32)
        return f"PRAGMA cache_size = -{self.session_cache_kib} (KiB) on every client connection"

    def restore_cache(self) -> None:
        self.session_cache_kib = None

    def engine_info(self) -> JsonObject:
        return {"sqlite": sqlean_module().sqlite_version}

    def create(self) -> None:
        self.engine.remove_database()
        self.con().execute(f"CREATE TABLE {TABLE} (doc BLOB NOT NULL)")

    def load(self, docs: list[bytes]) -> None:
        con = self.con()
        con.execute("BEGIN")
        con.executemany(
            f"INSERT INTO {TABLE} (doc) VALUES (jsonb(?))", ((line.decode("utf-8"),) for line in docs)
        )
        con.execute("COMMIT")

    def create_key_index(self) -> None:
        self.con().execute(f"CREATE INDEX {TABLE}_key ON {TABLE} (({KEY}))")
        self.con().execute("ANALYZE")

    def count(self) -> int:
        return int(self.con().execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])

    def count_field(self, field: str, value: str) -> int:
        return int(
            self.con()
            .execute(f"SELECT count(*) FROM {TABLE} WHERE doc ->> ? = ?", (f"$.{field}", value))
            .fetchone()[0]
        )

    def bulk_update_styles(self) -> list[str]:
        return list(self.styles)

    def bulk_add_field(self, style: str, field: str, value: str) -> int:
        if style == "jsonb_set":
            sql, args = f"UPDATE {TABLE} SET doc = jsonb_set(doc, ?, ?)", (f"$.{field}", value)
        elif style == "jsonb_patch":
            sql, args = (f"UPDATE {TABLE} SET doc = jsonb_patch(doc, json_object(?, ?))", (field, value))
        else:
            raise ValueError(f"unknown style {style!r}")
        return self.con().execute(sql, args).rowcount

    def maintain(self) -> str:
        self.con().execute("VACUUM")
        return "VACUUM"

    def sizes(self) -> StorageSize:
        con = self.con()
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        page_size = int(con.execute("PRAGMA page_size").fetchone()[0])
        pages = int(con.execute("PRAGMA page_count").fetchone()[0])
        free = int(con.execute("PRAGMA freelist_count").fetchone()[0])
        objects = {
            n: int(s) for n, s in con.execute("SELECT name, pgsize FROM dbstat WHERE aggregate = TRUE")
        }
        return StorageSize(
            total=pages * page_size,
            data=objects.get(TABLE),
            index=objects.get(f"{TABLE}_key", 0),
            on_disk=directory_size(self.engine.workdir),
            detail={"freelist_pages": free, "page_size": page_size},
        )

    def session_spec(self) -> JsonObject:
        return {"workdir": str(self.engine.workdir), "cache_kib": self.session_cache_kib}

    @classmethod
    def open_session(cls, spec: JsonMapping) -> SQLiteKeyValueSession:
        return SQLiteKeyValueSession(spec)


ADAPTER = SQLiteUpdates
