"""SQLite (3.45+ for JSONB) through the ``sqlean.py`` package: a database file, one document
column, an index on the five JSONBench paths.

Python's own ``sqlite3`` module links SQLite 3.40 here (no JSONB, no ``->>`` on blobs), so the
adapter uses ``sqlean`` -- the same DB-API as ``sqlite3`` with a recent SQLite. The SQL lives
in plain files next to this module: ``pragmas.sql`` (loading connection), ``ddl.sql``,
``load.sql``, ``index.sql`` (run by finish_load) and ``queries.sql``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, ClassVar

from docbench.systems.base import (
    Availability,
    BatchRejected,
    Loader,
    QueryOutcome,
    QuerySession,
    StorageSize,
    System,
    Variant,
    directory_size,
    read_sql_statements,
)

DATABASE_NAME = "docbench.sqlite"
TABLE = "documents"
INDEX = "documents_paths"
MIN_VERSION = (3, 45, 0)

# Every query should read the index (a SEARCH on kind/operation(/collection) for Q2-Q5, a
# full scan of it for Q1).
INDEXED_QUERIES = frozenset({1, 2, 3, 4, 5})


def _sqlean():
    import sqlean

    return sqlean


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:3] if part.isdigit())


def _is_content_error(error: Exception) -> bool:
    """True when SQLite refused the documents themselves (invalid JSON, too deep, too big)."""
    sqlean = _sqlean()
    if isinstance(error, (sqlean.IntegrityError, sqlean.DataError)):
        return True
    return isinstance(error, sqlean.OperationalError) and "JSON" in str(error)


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
    """``executemany`` of the variant's INSERT, one transaction per batch."""

    def __init__(self, system: SQLiteSystem) -> None:
        self.con = system.connection()
        self.statement = system.insert_statement()

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        rows = _decode(lines)
        self.con.execute("BEGIN")
        try:
            self.con.executemany(self.statement, rows)
            self.con.execute("COMMIT")
        except Exception as error:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            if _is_content_error(error):
                raise BatchRejected(str(error)) from error
            raise


class SQLiteSession(QuerySession):
    def __init__(self, spec: dict[str, Any]) -> None:
        uri = Path(spec["path"]).resolve().as_uri() + "?mode=ro"
        self.con = _sqlean().connect(uri, uri=True, isolation_level=None,
                                     check_same_thread=False)

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


class SQLiteSystem(System):
    name = "sqlite"
    display_name = "SQLite"
    embedded = True
    retains_structure = True
    variants: ClassVar[list[Variant]] = [
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
    load_batch_size = 100_000
    notes = ("Embedded (in-process) SQLite from the sqlean.py package; single-threaded; WAL "
             "with synchronous=NORMAL while loading; index on the five paths built after the "
             "load. No engine-side timing (the worker's wall time is the engine's).")

    def __init__(self, workdir: Path, variant: Variant, url: str | None = None) -> None:
        super().__init__(workdir, variant, url)
        self._con = None

    @property
    def path(self) -> Path:
        return self.workdir / DATABASE_NAME

    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            sqlean = _sqlean()
        except ImportError as error:
            return Availability(False, reason=f"the sqlean.py package is missing ({error})",
                                install_hint="pip install sqlean.py")
        version = sqlean.sqlite_version
        if _version_tuple(version) < MIN_VERSION:
            return Availability(False, version=version,
                                reason=f"SQLite {version} has no JSONB (needs 3.45+)",
                                install_hint="pip install --upgrade sqlean.py")
        return Availability(True, version=version)

    def versions(self) -> dict[str, str]:
        found: dict[str, str] = {}
        with contextlib.suppress(ImportError):
            found["sqlite"] = _sqlean().sqlite_version
        with contextlib.suppress(Exception):
            from importlib.metadata import version

            found["sqlean.py"] = version("sqlean.py")
        return found

    # ----- connections -------------------------------------------------------------------
    def connection(self):
        if self._con is None:
            self.workdir.mkdir(parents=True, exist_ok=True)
            con = _sqlean().connect(str(self.path), isolation_level=None)
            for statement in read_sql_statements(self.folder() / "pragmas.sql"):
                con.execute(statement).fetchall()
            self._con = con
        return self._con

    def release(self) -> None:
        if self._con is not None:
            with contextlib.suppress(Exception):
                self._con.close()
            self._con = None

    def stop(self) -> None:
        self.release()

    def _sql(self, file: str) -> list[str]:
        settings = self.variant.settings
        return [s.format(**settings) for s in read_sql_statements(self.folder() / file)]

    def insert_statement(self) -> str:
        return self._sql("load.sql")[0]

    # ----- loading -------------------------------------------------------------------------
    def create(self) -> None:
        # A fresh file, so that sizes never include pages freed by an earlier load.
        self.release()
        for suffix in ("", "-wal", "-shm", "-journal"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
        con = self.connection()
        for statement in self._sql("ddl.sql"):
            con.execute(statement)

    def loader(self) -> Loader:
        return SQLiteLoader(self)

    def finish_load(self) -> None:
        con = self.connection()
        for statement in self._sql("index.sql"):
            con.execute(statement)
        # Move everything from the WAL into the database file so sizes are final.
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def native_load(self, files: list[Path]) -> None:
        """What a person would write: per file, executemany of the INSERT over the file's
        lines in one transaction (text mode, so invalid UTF-8 stops the load)."""
        from docbench.dataset.reader import iter_lines

        con = self.connection()
        statement = self.insert_statement()
        for path in files:
            con.execute("BEGIN")
            con.executemany(statement, ((line.decode("utf-8"),) for line in iter_lines(path)
                                        if line.strip()))
            con.execute("COMMIT")

    def count(self) -> int:
        return int(self.connection().execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])

    def storage(self) -> StorageSize:
        con = self.connection()
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        page_size = int(con.execute("PRAGMA page_size").fetchone()[0])
        page_count = int(con.execute("PRAGMA page_count").fetchone()[0])
        freelist = int(con.execute("PRAGMA freelist_count").fetchone()[0])
        objects = {name: int(size) for name, size in con.execute(
            "SELECT name, pgsize FROM dbstat WHERE aggregate = TRUE")}
        data = objects.get(TABLE, 0)
        index = objects.get(INDEX, 0)
        wal = self.path.with_name(self.path.name + "-wal")
        detail = {
            "page_size": page_size,
            "page_count": page_count,
            "freelist_pages": freelist,
            "objects": objects,
            "database_file_bytes": self.path.stat().st_size if self.path.exists() else None,
            "wal_bytes": wal.stat().st_size if wal.exists() else 0,
        }
        return StorageSize(total=page_count * page_size, data=data, index=index,
                           on_disk=directory_size(self.workdir), detail=detail)

    # ----- queries -------------------------------------------------------------------------
    def queries(self) -> list[str]:
        return read_sql_statements(self.folder() / "queries.sql")

    def session_spec(self) -> dict[str, Any]:
        return {"path": str(self.path)}

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


SYSTEM = SQLiteSystem
