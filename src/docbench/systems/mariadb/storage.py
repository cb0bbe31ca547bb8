"""MariaDB in the storage workload: InnoDB row formats and page compression.

Table ``storage_matrix (id BIGINT AUTO_INCREMENT PRIMARY KEY, doc JSON NOT NULL)`` (JSON is
LONGTEXT with a JSON_VALID check; the clustered index is on the surrogate id) with the
variant's table options:

* ``dynamic``         -- ROW_FORMAT=DYNAMIC (the default): long values go off-page
                         (overflow pages, 20-byte pointer in the row), no compression;
* ``compressed``      -- ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8: zlib-compressed 8 kB pages,
                         off-page values compressed too;
* ``page_compressed`` -- ROW_FORMAT=DYNAMIC PAGE_COMPRESSED=1: each 16 kB page is compressed
                         (zlib, the server's innodb_compression_algorithm) when written and
                         the file is punched with holes (the saving shows in allocated size).

Uses the engine's server (managed: mariadb-install-db, 127.0.0.1, own port; or the user's by
URL, own table only), its ``LOAD DATA LOCAL INFILE`` batch loader and its table storage
introspection (information_schema.TABLES + INNODB_SYS_TABLESPACES allocated size of the .ibd).
"""

from __future__ import annotations

import contextlib

from docbench.contracts.common import StorageSize, Variant
from docbench.contracts.storage import TABLE, StorageMatrixTarget
from docbench.core.jsontypes import optional_int
from docbench.systems.mariadb.engine import MariaDBEngine
from docbench.systems.mariadb.loader import MariaDBLoader

VARIANTS: list[Variant] = [
    Variant(
        "dynamic",
        "JSON (LONGTEXT) column, InnoDB ROW_FORMAT=DYNAMIC (default)",
        role="default",
        settings={"table_options": "ROW_FORMAT=DYNAMIC"},
    ),
    Variant(
        "compressed",
        "JSON (LONGTEXT) column, InnoDB ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8 (zlib)",
        role="other",
        settings={"table_options": "ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8"},
    ),
    Variant(
        "page_compressed",
        "JSON (LONGTEXT) column, InnoDB PAGE_COMPRESSED=1 (zlib)",
        role="best",
        settings={"table_options": "ROW_FORMAT=DYNAMIC PAGE_COMPRESSED=1"},
    ),
]


class MariaDBStorage(StorageMatrixTarget):
    engine: MariaDBEngine

    def __init__(self, engine: MariaDBEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.table_options = str(variant.settings["table_options"])
        self.loader: MariaDBLoader | None = None

    def stop(self) -> None:
        self._close_loader()
        super().stop()

    def _close_loader(self) -> None:
        if self.loader is not None:
            with contextlib.suppress(Exception):
                self.loader.close()
            self.loader = None

    def version(self) -> str | None:
        return "MariaDB " + str(self.engine.execute("SELECT VERSION()")[0][0]).split("-")[0]

    def create(self) -> None:
        self._close_loader()
        self.engine.ensure_database()
        self.engine.execute(f"DROP TABLE IF EXISTS {TABLE}")
        self.engine.execute(
            f"CREATE TABLE {TABLE} (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, "
            "doc JSON NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin "
            f"{self.table_options}"
        )

    def insert(self, rows: list[tuple[str, str]]) -> None:
        if self.loader is None:
            self.loader = MariaDBLoader(self.engine.params(), TABLE)
        lines = [f'{{"key":"{k}","payload":"{p}"}}'.encode() for k, p in rows]
        self.loader.load_batch(lines)

    def count(self) -> int:
        return int(self.engine.execute(f"SELECT COUNT(*) FROM {TABLE}")[0][0])

    def finish(self) -> None:
        self._close_loader()
        # Let the purge and page flushing catch up so the .ibd holds the table's pages.
        self.engine.execute(f"ANALYZE TABLE {TABLE}")

    def sizes(self) -> StorageSize:
        storage = self.engine.table_storage(TABLE, self.table_options)
        detail = dict(storage.detail)
        detail.setdefault("table", storage.data)
        detail.setdefault("index", storage.index)
        on_disk = optional_int(detail.get("ibd_on_disk"), "ibd_on_disk")
        return StorageSize(
            total=storage.total, data=storage.data, index=storage.index, on_disk=on_disk, detail=detail
        )


ADAPTER = MariaDBStorage
