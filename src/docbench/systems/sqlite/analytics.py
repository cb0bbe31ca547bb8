"""SQLite in the analytics workload: one document column, an index on the five JSONBench
paths.

The SQL lives in plain files next to this module: ``pragmas.sql`` (read-write connections,
see engine.py), ``ddl.sql``, ``load.sql``, ``index.sql`` (run by finish_load) and
``queries.sql``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QueryOutcome, QuerySession
from docbench.contracts.common import BatchRejected, StorageSize, Variant, directory_size
from docbench.core.sqlfiles import read_sql_statements, render, step_name
from docbench.systems.sqlite.engine import SQLiteEngine, is_content_error

TABLE = "documents"
INDEX = "documents_paths"

# Every query should read the index (a SEARCH on kind/operation(/collection) for Q2-Q5, a
# full scan of it for Q1).
INDEXED_QUERIES = frozenset({1, 2, 3, 4, 5})

VARIANTS: list[Variant] = [
    Variant("jsonb", "JSONB blob column (jsonb() of each document), expression index on "
            "the five paths", role="default",
            settings={"column_type": "BLOB",
                      "column_check": "json_type(doc) = 'object'",
                      "value": "jsonb(CASE WHEN json_valid(?1) THEN ?1 ELSE 'x' END)"}),
    Variant("text", "JSON text column with CHECK (json_valid(doc)), expression index on "
            "the five paths", role="alt",
            settings={"column_type": "TEXT",
                      "column_check": "json_valid(doc) AND json_type(doc) = 'object'",
                      "value": "?1"}),
]


def _decode(lines: list[bytes]) -> list[tuple[str]]:
    """Lines as str parameters. SQLite stores text as given and requires it to be UTF-8
    (invalid UTF-8 is undefined behaviour, not checked), so docbench refuses it here."""
    try:
        return [(line.decode("utf-8"),) for line in lines]
    except UnicodeDecodeError:
        pass
    for number, line in enumerate(lines, start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise BatchRejected(f"invalid UTF-8 in line {number} of the batch (SQLite text "
                                f"must be UTF-8): {error}") from error
    raise AssertionError("unreachable")


class SQLiteLoader(Loader):
    """``executemany`` of the variant's INSERT. A file is one transaction (``begin_file`` ..
    ``commit_file``), each batch a savepoint inside it: a refused batch is rolled back alone,
    a load killed mid-file leaves nothing of that file."""

    def __init__(self, adapter: SQLiteAnalytics) -> None:
        self.con = adapter.engine.connection()
        self.statement = adapter.insert_statement()
        self.in_file = False

    def begin_file(self, name: str) -> None:
        self.con.execute("BEGIN")
        self.in_file = True

    def commit_file(self) -> None:
        if self.in_file:
            self.con.execute("COMMIT")
            self.in_file = False

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        rows = _decode(lines)
        self.con.execute("SAVEPOINT batch")
        try:
            self.con.executemany(self.statement, rows)
            self.con.execute("RELEASE batch")
        except Exception as error:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK TO batch")
                self.con.execute("RELEASE batch")
            if is_content_error(error):
                raise BatchRejected(str(error)) from error
            raise

    def load_batch_skipping(self, lines: list[bytes]) -> dict[int, str]:
        """Every line SQLite takes, in one savepoint; the refused ones named. ``executemany``
        stops at the row SQLite refuses, keeping the rows before it (SQLite undoes only the
        failing statement): the connection's change count says how many went in, so the
        refused row is known, and the insert goes on after it. Nothing is sent twice."""
        refused: dict[int, str] = {}
        indexes: list[int] = []
        rows: list[tuple[str]] = []
        try:
            rows = [(line.decode("utf-8"),) for line in lines]
            indexes = list(range(len(lines)))
        except UnicodeDecodeError:
            for index, line in enumerate(lines):
                try:
                    rows.append((line.decode("utf-8"),))
                    indexes.append(index)
                except UnicodeDecodeError as error:
                    refused[index] = f"invalid UTF-8 (SQLite text must be UTF-8): {error}"
        self.con.execute("SAVEPOINT batch")
        try:
            done = 0
            while done < len(rows):
                before = self.con.total_changes
                try:
                    self.con.executemany(self.statement, rows[done:] if done else rows)
                    done = len(rows)
                except Exception as error:
                    if not is_content_error(error):
                        raise
                    done += self.con.total_changes - before
                    refused[indexes[done]] = str(error)
                    done += 1
            self.con.execute("RELEASE batch")
        except BaseException:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK TO batch")
                self.con.execute("RELEASE batch")
            raise
        return refused

    def close(self) -> None:
        if self.in_file:  # an interrupted file: none of it is kept
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            self.in_file = False


class SQLiteSession(QuerySession):
    def __init__(self, spec: dict[str, Any]) -> None:
        self.con = SQLiteEngine(Path(spec["workdir"])).connect(read_only=True)

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        rows = self.con.execute(text).fetchall()
        # In-process engine: the wall time the worker measures is the engine's time.
        return QueryOutcome(rows=[tuple(row) for row in rows])

    def explain(self, query_number: int, text: str) -> str | None:
        rows = self.con.execute(f"EXPLAIN QUERY PLAN {text}").fetchall()
        return format_query_plan(rows)

    def cancel(self) -> None:
        with contextlib.suppress(Exception):
            self.con.interrupt()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()


def format_query_plan(rows: list[tuple]) -> str:
    """EXPLAIN QUERY PLAN rows (id, parent, notused, detail) as an indented tree."""
    depth: dict[int, int] = {0: -1}
    lines = []
    for node_id, parent, _unused, detail in rows:
        level = depth.get(parent, -1) + 1
        depth[node_id] = level
        lines.append("  " * level + str(detail))
    return "\n".join(lines)


class SQLiteAnalytics(AnalyticsAdapter):
    engine: SQLiteEngine
    variants = VARIANTS
    retains_structure = True
    load_batch_size = 100_000

    def _sql(self, file: str) -> list[str]:
        settings = self.variant.settings
        return [render(s, **settings) for s in read_sql_statements(self.engine.folder() / file)]

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
            self.finish_step(step_name(statement), lambda s=statement: con.execute(s))
        # Move everything from the WAL into the database file so sizes are final.
        self.finish_step("PRAGMA wal_checkpoint(TRUNCATE)",
                         lambda: con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())

    def native_load(self, files: list[Path]) -> None:
        """What a person would write: per file, executemany of the INSERT over the file's
        lines in one transaction (text mode, so invalid UTF-8 stops the load)."""
        from docbench.dataset.reader import iter_lines

        con = self.engine.connection()
        statement = self.insert_statement()
        for path in files:
            con.execute("BEGIN")
            con.executemany(statement, ((line.decode("utf-8"),) for line in iter_lines(path)
                                        if line.strip()))
            con.execute("COMMIT")

    def count(self) -> int:
        return int(self.engine.connection().execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])

    def storage(self) -> StorageSize:
        con = self.engine.connection()
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        page_size = int(con.execute("PRAGMA page_size").fetchone()[0])
        page_count = int(con.execute("PRAGMA page_count").fetchone()[0])
        freelist = int(con.execute("PRAGMA freelist_count").fetchone()[0])
        objects = {name: int(size) for name, size in con.execute(
            "SELECT name, pgsize FROM dbstat WHERE aggregate = TRUE")}
        data = objects.get(TABLE, 0)
        index = objects.get(INDEX, 0)
        path = self.engine.path
        wal = path.with_name(path.name + "-wal")
        detail = {
            "page_size": page_size,
            "page_count": page_count,
            "freelist_pages": freelist,
            "objects": objects,
            "database_file_bytes": path.stat().st_size if path.exists() else None,
            "wal_bytes": wal.stat().st_size if wal.exists() else 0,
        }
        return StorageSize(total=page_count * page_size, data=data, index=index,
                           on_disk=directory_size(self.engine.workdir), detail=detail)

    # ----- queries -------------------------------------------------------------------------
    def session_spec(self) -> dict[str, Any]:
        return {"workdir": str(self.engine.workdir)}

    @classmethod
    def open_session(cls, spec: dict[str, Any]) -> QuerySession:
        return SQLiteSession(spec)

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        if query_number not in INDEXED_QUERIES or plan is None:
            return None
        if f"INDEX {INDEX}" not in plan:
            return (f"Q{query_number} does not use the index {INDEX} (EXPLAIN QUERY PLAN: "
                    f"{' | '.join(line.strip() for line in plan.splitlines())})")
        return None


ADAPTER = SQLiteAnalytics
