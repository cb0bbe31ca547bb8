"""PostgreSQL in the storage workload: the original TOAST experiment.

Table ``storage_matrix (key text PRIMARY KEY, doc <jsonb|text> COMPRESSION <pglz|lz4>)`` with
``ALTER TABLE ... ALTER COLUMN doc SET STORAGE <strategy>``; the document is
``{"key": ..., "payload": ...}`` (for the text column, its JSON text). 16 variants: column type
(jsonb, text) x strategy x compression method:

* PLAIN    -- never compressed, never out of line: a row over the page limit (~8 kB) fails
              with "row is too big";
* EXTENDED -- the default: compressed first, then moved out of line (TOAST) if still > ~2 kB;
* EXTERNAL -- out of line but never compressed (fast substring access);
* MAIN     -- compressed, moved out of line only as a last resort.

(For PLAIN and EXTERNAL the compression method has no effect; they are kept so the matrix is
complete.) Inserts are ``COPY ... FROM STDIN``, one transaction per batch, on the engine's
server (its managed cluster: initdb, 127.0.0.1, own port; or the user's by URL, own table only).
Sizes: ``pg_total_relation_size`` = heap + TOAST relation (+ its index) + the primary key
index; cross-checked with the allocated size of the relations' files in the data directory.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docbench.contracts.common import BatchRejected, StorageSize, Variant
from docbench.contracts.storage import TABLE, StorageMatrixTarget
from docbench.core.jsontypes import JsonObject
from docbench.systems.postgresql.engine import (
    PostgreSQLEngine,
    error_message,
    is_content_error,
    psycopg_module,
)

if TYPE_CHECKING:
    import psycopg

STRATEGIES = ("plain", "extended", "external", "main")
COMPRESSIONS = ("pglz", "lz4")
COLUMN_TYPES = ("jsonb", "text")

_DESCRIPTION = {
    "plain": "STORAGE PLAIN (no compression, no TOAST)",
    "extended": "STORAGE EXTENDED (compress, then TOAST; the default)",
    "external": "STORAGE EXTERNAL (TOAST, no compression)",
    "main": "STORAGE MAIN (compress, TOAST only as a last resort)",
}


def _variants() -> list[Variant]:
    out = []
    for column_type in COLUMN_TYPES:
        for strategy in STRATEGIES:
            for compression in COMPRESSIONS:
                default = (column_type, strategy, compression) == ("jsonb", "extended", "pglz")
                best = (column_type, strategy, compression) == ("jsonb", "extended", "lz4")
                out.append(
                    Variant(
                        f"{column_type}-{strategy}-{compression}",
                        f"{column_type} column, {_DESCRIPTION[strategy]}, COMPRESSION {compression}",
                        role="default" if default else "best" if best else "other",
                        settings={
                            "column_type": column_type,
                            "storage": strategy.upper(),
                            "compression": compression,
                        },
                    )
                )
    return out


VARIANTS: list[Variant] = _variants()


def _relation_files_size(data_dir: Path, relpath: str | None) -> int:
    """Allocated bytes of a relation's files: segments (path, path.1...), _fsm and _vm."""
    if not relpath:
        return 0
    base = data_dir / relpath
    total = 0
    for candidate in base.parent.glob(base.name + "*"):
        suffix = candidate.name[len(base.name) :]
        if suffix == "" or suffix in ("_fsm", "_vm") or (suffix.startswith(".") and suffix[1:].isdigit()):
            with contextlib.suppress(FileNotFoundError):
                total += candidate.stat().st_blocks * 512
    return total


class PostgreSQLStorage(StorageMatrixTarget):
    engine: PostgreSQLEngine

    def __init__(self, engine: PostgreSQLEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.column_type = str(variant.settings["column_type"])
        self.storage = str(variant.settings["storage"])
        self.compression = str(variant.settings["compression"])
        self._conn: psycopg.Connection[Any] | None = None  # its own (synchronous_commit off)

    # ----- lifecycle -----------------------------------------------------------------------
    def stop(self) -> None:
        self._close()
        super().stop()

    def _close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    def connection(self):
        if self._conn is None or self._conn.closed:
            self._conn = self.engine.connect()
            self._conn.execute("SET synchronous_commit = off")
        return self._conn

    def version(self) -> str | None:
        return "PostgreSQL " + self.connection().execute("SHOW server_version").fetchone()[0]

    # ----- the table -----------------------------------------------------------------------
    def create(self) -> None:
        conn = self.connection()
        conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
        conn.execute(
            f"CREATE TABLE {TABLE} (key text PRIMARY KEY, "
            f"doc {self.column_type} COMPRESSION {self.compression} NOT NULL)"
        )
        conn.execute(f"ALTER TABLE {TABLE} ALTER COLUMN doc SET STORAGE {self.storage}")

    def insert(self, rows: list[tuple[str, str]]) -> None:
        psycopg = psycopg_module()
        # COPY text format: the keys and payloads hold no tab, newline or backslash.
        data = "".join(f'{key}\t{{"key":"{key}","payload":"{payload}"}}\n' for key, payload in rows)
        if "\\" in data:
            data = data.replace("\\", "\\\\")
        conn = self.connection()
        try:
            with (
                conn.transaction(),
                conn.cursor() as cur,
                cur.copy(f"COPY {TABLE} (key, doc) FROM STDIN") as copy,
            ):
                copy.write(data.encode())
        except psycopg.Error as error:
            if is_content_error(error):
                raise BatchRejected(error_message(error)) from error
            raise

    def count(self) -> int:
        return int(self.connection().execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])

    def finish(self) -> None:
        conn = self.connection()
        conn.execute(f"VACUUM (ANALYZE) {TABLE}")
        conn.execute("CHECKPOINT")

    def sizes(self) -> StorageSize:
        conn = self.connection()
        row = conn.execute(
            "SELECT pg_total_relation_size(c.oid), pg_table_size(c.oid), pg_indexes_size(c.oid),"
            " pg_relation_size(c.oid),"
            " CASE WHEN c.reltoastrelid <> 0 THEN pg_total_relation_size(c.reltoastrelid) END,"
            " CASE WHEN c.reltoastrelid <> 0 THEN pg_relation_size(c.reltoastrelid) END,"
            " pg_relation_filepath(c.oid),"
            " CASE WHEN c.reltoastrelid <> 0 THEN pg_relation_filepath(c.reltoastrelid) END,"
            " c.reltoastrelid"
            " FROM pg_class c WHERE c.oid = %s::regclass",
            (TABLE,),
        ).fetchone()
        total, table_size, index, heap, toast, toast_heap, heap_path, toast_path, toast_oid = row
        toast = int(toast or 0)
        paths = [heap_path, toast_path]
        paths += [
            r[0]
            for r in conn.execute(
                "SELECT pg_relation_filepath(indexrelid) FROM pg_index WHERE indrelid = %s::regclass",
                (TABLE,),
            ).fetchall()
        ]
        if toast_oid:
            paths += [
                r[0]
                for r in conn.execute(
                    "SELECT pg_relation_filepath(indexrelid) FROM pg_index WHERE indrelid = %s", (toast_oid,)
                ).fetchall()
            ]
        values = conn.execute(
            f"SELECT count(*) FILTER (WHERE pg_column_compression(doc) IS NOT NULL),"
            f" coalesce(avg(pg_column_size(doc)), 0) FROM {TABLE}"
        ).fetchone()
        detail: JsonObject = {
            "table": int(table_size) - toast,
            "toast": toast,
            "index": int(index),
            "heap_main_fork": int(heap),
            "toast_heap": int(toast_heap or 0),
            "compressed_values": int(values[0]),
            "avg_stored_value_bytes": round(float(values[1]), 1),
            "column_type": self.column_type,
            "storage": self.storage,
            "compression": self.compression,
        }
        on_disk = None
        data_dir = self.engine.data_dir
        if data_dir is not None:
            on_disk = sum(_relation_files_size(data_dir, p) for p in paths)
        return StorageSize(
            total=int(total), data=int(table_size), index=int(index), on_disk=on_disk, detail=detail
        )


ADAPTER = PostgreSQLStorage
