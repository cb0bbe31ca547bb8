"""SQLite in the analytics workload: one document column, an index on the five JSONBench
paths.

The SQL lives in plain files next to this module: ``pragmas.sql`` (read-write connections,
see engine.py), ``ddl.sql``, ``load.sql``, ``index.sql`` (run by finish_load) and
``queries.sql``.
"""

from __future__ import annotations

import functools
from pathlib import Path

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QuerySession
from docbench.contracts.capabilities import BlueskyQueries, LiveIngest, NativeLoad, ReadBack
from docbench.contracts.common import StorageSize, Variant, directory_size
from docbench.contracts.engine import system_folder
from docbench.core.jsontypes import JsonMapping, JsonObject, as_str
from docbench.core.sqlfiles import read_sql_statements, render, step_name
from docbench.systems.sqlite.engine import SQLiteEngine
from docbench.systems.sqlite.loader import SQLiteLoader
from docbench.systems.sqlite.session import SQLiteSession

TABLE = "documents"
INDEX = "documents_paths"

# Every query should read the index (a SEARCH on kind/operation(/collection) for Q2-Q5, a
# full scan of it for Q1).
INDEXED_QUERIES = frozenset({1, 2, 3, 4, 5})

VARIANTS: list[Variant] = [
    Variant(
        "jsonb",
        "JSONB blob column (jsonb() of each document), expression index on the five paths",
        role="default",
        settings={
            "column_type": "BLOB",
            "column_check": "json_type(doc) = 'object'",
            "value": "jsonb(CASE WHEN json_valid(?1) THEN ?1 ELSE 'x' END)",
        },
    ),
    Variant(
        "text",
        "JSON text column with CHECK (json_valid(doc)), expression index on the five paths",
        role="alt",
        settings={
            "representation": "JSON text",
            "column_type": "TEXT",
            "column_check": "json_valid(doc) AND json_type(doc) = 'object'",
            "value": "?1",
        },
    ),
]


class SQLiteAnalytics(AnalyticsAdapter, BlueskyQueries, LiveIngest, ReadBack, NativeLoad):
    engine: SQLiteEngine
    variants = VARIANTS
    retains_structure = True
    representation = "jsonb (SQLite binary JSON)"
    load_batch_size = 100_000
    refused_hard_kinds = frozenset({"deep_nesting"})
    native_refusals = "skips"  # executemany goes on after the row it refuses

    def _sql(self, file: str) -> list[str]:
        settings = {name: as_str(value, name) for name, value in self.variant.settings.items()}
        return [render(s, **settings) for s in read_sql_statements(system_folder(self.engine) / file)]

    def insert_statement(self) -> str:
        return self._sql("load.sql")[0]

    # ----- loading -------------------------------------------------------------------------
    def create(self) -> None:
        # A fresh file, so that sizes never include pages freed by an earlier load.
        self.engine.remove_database()
        con = self.engine.connection()
        for statement in self._sql("ddl.sql"):
            con.execute(statement)

    def loader(self) -> Loader:
        return SQLiteLoader(self)

    def finish_load(self) -> None:
        con = self.engine.connection()
        for statement in self._sql("index.sql"):
            self.finish_step(step_name(statement), functools.partial(con.execute, statement))
        # Move everything from the WAL into the database file so sizes are final.
        self.finish_step(
            "PRAGMA wal_checkpoint(TRUNCATE)",
            lambda: con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall(),
        )

    def native_load(self, files: list[Path]) -> None:
        """What a person would write: per file, executemany of the INSERT over the file's
        lines in one transaction (text mode, so invalid UTF-8 stops the load)."""
        from docbench.dataset.reader import iter_lines

        con = self.engine.connection()
        statement = self.insert_statement()
        for path in files:
            con.execute("BEGIN")
            con.executemany(statement, ((line.decode("utf-8"),) for line in iter_lines(path) if line.strip()))
            con.execute("COMMIT")

    def count(self) -> int:
        return int(self.engine.connection().execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])

    # Live ingest: the loader's transactions on the database in WAL mode (pragmas.sql), which
    # lets the query sessions and the probe read beside the one writer.

    def visible_count(self) -> int:
        """The count a reader sees now, on a read-only connection of its own (the loader's
        connection is busy in another thread)."""
        con = self.engine.connect(read_only=True)
        try:
            return int(con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])
        finally:
            con.close()

    def read_back(self) -> list[str]:
        """json(doc): the text of a jsonb blob (SQLite's own rendering); a text column as stored."""
        expression = "json(doc)" if self.variant.settings.get("column_type") == "BLOB" else "doc"
        rows = self.engine.connection().execute(f"SELECT {expression} FROM {TABLE}").fetchall()
        return [str(row[0]) for row in rows]

    def storage(self) -> StorageSize:
        con = self.engine.connection()
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        page_size = int(con.execute("PRAGMA page_size").fetchone()[0])
        page_count = int(con.execute("PRAGMA page_count").fetchone()[0])
        freelist = int(con.execute("PRAGMA freelist_count").fetchone()[0])
        objects = {
            name: int(size)
            for name, size in con.execute("SELECT name, pgsize FROM dbstat WHERE aggregate = TRUE")
        }
        data = objects.get(TABLE, 0)
        index = objects.get(INDEX, 0)
        path = self.engine.path
        wal = path.with_name(path.name + "-wal")
        detail: JsonObject = {
            "page_size": page_size,
            "page_count": page_count,
            "freelist_pages": freelist,
            "objects": dict(objects),
            "database_file_bytes": path.stat().st_size if path.exists() else None,
            "wal_bytes": wal.stat().st_size if wal.exists() else 0,
        }
        return StorageSize(
            total=page_count * page_size,
            data=data,
            index=index,
            on_disk=directory_size(self.engine.workdir),
            detail=detail,
        )

    # ----- queries -------------------------------------------------------------------------
    def session_spec(self) -> JsonObject:
        return {"workdir": str(self.engine.workdir)}

    @classmethod
    def open_session(cls, spec: JsonMapping) -> QuerySession:
        return SQLiteSession(spec)

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        if query_number not in INDEXED_QUERIES or plan is None:
            return None
        if f"INDEX {INDEX}" not in plan:
            return (
                f"Q{query_number} does not use the index {INDEX} (EXPLAIN QUERY PLAN: "
                f"{' | '.join(line.strip() for line in plan.splitlines())})"
            )
        return None


ADAPTER = SQLiteAnalytics
