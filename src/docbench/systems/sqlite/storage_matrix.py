"""SQLite in the storage workload: the document as JSONB (binary) or as JSON text.

Table ``storage_matrix (key TEXT PRIMARY KEY, doc BLOB|TEXT)`` in a fresh database file per
cell (4 kB pages, WAL). SQLite has no compression: a row larger than what fits in a page
spills into a chain of overflow pages. Variants: ``jsonb`` (``jsonb(?)``, SQLite's binary
JSON, 3.45+) and ``text`` (the JSON text as given).

Inserts: ``executemany`` in one transaction per batch. finish(): ``wal_checkpoint(TRUNCATE)``.
Sizes: the ``dbstat`` virtual table per b-tree (table incl. its overflow pages, primary key
index), cross-checked with the allocated size of the database file.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from docbench.systems.base import BatchRejected, StorageSize, Variant
from docbench.systems.sqlite.adapter import _is_content_error, _sqlean

TABLE = "storage_matrix"
DATABASE_FILE = "storage.sqlite"

MATRIX_VARIANTS: list[Variant] = [
    Variant("jsonb", "JSONB (binary JSON) BLOB column; no compression, overflow pages",
            role="default", settings={"column_type": "BLOB", "value": "jsonb(?2)"}),
    Variant("text", "JSON text column; no compression, overflow pages", role="other",
            settings={"column_type": "TEXT", "value": "?2"}),
]


class StorageMatrixTarget:
    def __init__(self, workdir: Path, variant: Variant) -> None:
        self.workdir = workdir
        self.variant = variant
        self.path = workdir / DATABASE_FILE
        self.con = None

    def _close(self) -> None:
        if self.con is not None:
            with contextlib.suppress(Exception):
                self.con.close()
            self.con = None

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)

    def stop(self) -> None:
        self._close()

    def version(self) -> str | None:
        return f"SQLite {_sqlean().sqlite_version}"

    def create(self) -> None:
        self._close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        self.con = _sqlean().connect(str(self.path), isolation_level=None)
        self.con.execute("PRAGMA journal_mode = WAL")
        self.con.execute("PRAGMA synchronous = NORMAL")
        self.con.execute(f"CREATE TABLE {TABLE} (key TEXT PRIMARY KEY, "
                         f"doc {self.variant.settings['column_type']} NOT NULL)")

    def insert(self, rows: list[tuple[str, str]]) -> None:
        value = self.variant.settings["value"]
        params = [(k, f'{{"key":"{k}","payload":"{p}"}}') for k, p in rows]
        self.con.execute("BEGIN")
        try:
            self.con.executemany(f"INSERT INTO {TABLE} (key, doc) VALUES (?1, {value})", params)
            self.con.execute("COMMIT")
        except Exception as error:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            if _is_content_error(error):
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
        detail: dict[str, Any] = {"page_size": page_size, "page_count": pages,
                                  "freelist_count": free}
        table = index = None
        with contextlib.suppress(Exception):
            stats = {name: (int(size), int(overflow)) for name, size, overflow in self.con.execute(
                "SELECT name, sum(pgsize), sum(CASE WHEN pagetype = 'overflow' THEN pgsize "
                "ELSE 0 END) FROM dbstat GROUP BY name").fetchall()}
            table = stats.get(TABLE, (0, 0))[0]
            index = sum(size for name, (size, _) in stats.items()
                        if name.startswith("sqlite_autoindex_"))
            detail.update({"table": table, "overflow": stats.get(TABLE, (0, 0))[1],
                           "index": index, "schema": stats.get("sqlite_schema", (0, 0))[0]})
        total = (pages - free) * page_size
        on_disk = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(FileNotFoundError):
                on_disk += Path(str(self.path) + suffix).stat().st_blocks * 512
        return StorageSize(total=total, data=table, index=index, on_disk=on_disk, detail=detail)
