"""SQLite in the storage workload: the document as JSONB (binary) or as JSON text.

Table ``storage_matrix (key TEXT PRIMARY KEY, doc BLOB|TEXT)`` in a fresh database file per
cell (the engine's ``docbench.sqlite``: 4 kB pages, WAL). SQLite has no compression: a row
larger than what fits in a page spills into a chain of overflow pages. Variants: ``jsonb``
(``jsonb(?)``, SQLite's binary JSON, 3.45+) and ``text`` (the JSON text as given).

Inserts: ``executemany`` in one transaction per batch. finish(): ``wal_checkpoint(TRUNCATE)``.
Sizes: the ``dbstat`` virtual table per b-tree (table incl. its overflow pages, primary key
index), cross-checked with the allocated size of the database file.
"""

from __future__ import annotations

import contextlib

from docbench.contracts.common import BatchRejected, StorageSize, Variant
from docbench.contracts.storage import TABLE, StorageMatrixTarget
from docbench.contracts.storage_documents import document_json
from docbench.core.jsontypes import JsonObject
from docbench.systems.sqlite.engine import SQLiteEngine, is_content_error, sqlean_module

VARIANTS: list[Variant] = [
    Variant(
        "jsonb",
        "JSONB (binary JSON) BLOB column; no compression, overflow pages",
        role="default",
        settings={"column_type": "BLOB", "value": "jsonb(?2)"},
    ),
    Variant(
        "text",
        "JSON text column; no compression, overflow pages",
        role="other",
        settings={"column_type": "TEXT", "value": "?2"},
    ),
]


class SQLiteStorage(StorageMatrixTarget):
    engine: SQLiteEngine

    @property
    def con(self):
        return self.engine.connection()

    def version(self) -> str | None:
        return f"SQLite {sqlean_module().sqlite_version}"

    def create(self) -> None:
        self.engine.remove_database()
        self.con.execute(
            f"CREATE TABLE {TABLE} (key TEXT PRIMARY KEY, "
            f"doc {self.variant.settings['column_type']} NOT NULL)"
        )

    def insert(self, rows: list[tuple[str, str]]) -> None:
        value = self.variant.settings["value"]
        params = [(key, document_json(key, payload)) for key, payload in rows]
        self.con.execute("BEGIN")
        try:
            self.con.executemany(f"INSERT INTO {TABLE} (key, doc) VALUES (?1, {value})", params)
            self.con.execute("COMMIT")
        except Exception as error:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            if is_content_error(error):
                raise BatchRejected(str(error)) from error
            raise

    def count(self) -> int:
        return int(self.con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])

    def finish(self) -> None:
        self.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def sizes(self) -> StorageSize:
        page_size = int(self.con.execute("PRAGMA page_size").fetchone()[0])
        pages = int(self.con.execute("PRAGMA page_count").fetchone()[0])
        free = int(self.con.execute("PRAGMA freelist_count").fetchone()[0])
        detail: JsonObject = {"page_size": page_size, "page_count": pages, "freelist_count": free}
        table = index = None
        with contextlib.suppress(Exception):
            stats = {
                name: (int(size), int(overflow))
                for name, size, overflow in self.con.execute(
                    "SELECT name, sum(pgsize), sum(CASE WHEN pagetype = 'overflow' THEN pgsize "
                    "ELSE 0 END) FROM dbstat GROUP BY name"
                ).fetchall()
            }
            table = stats.get(TABLE, (0, 0))[0]
            index = sum(size for name, (size, _) in stats.items() if name.startswith("sqlite_autoindex_"))
            detail.update(
                {
                    "table": table,
                    "overflow": stats.get(TABLE, (0, 0))[1],
                    "index": index,
                    "schema": stats.get("sqlite_schema", (0, 0))[0],
                }
            )
        total = (pages - free) * page_size
        on_disk = 0
        path = self.engine.path
        for suffix in ("", "-wal"):
            with contextlib.suppress(FileNotFoundError):
                on_disk += path.with_name(path.name + suffix).stat().st_blocks * 512
        return StorageSize(total=total, data=table, index=index, on_disk=on_disk, detail=detail)


ADAPTER = SQLiteStorage
