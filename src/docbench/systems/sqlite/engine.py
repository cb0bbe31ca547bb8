"""SQLite (3.45+ for JSONB) through the ``sqlean.py`` package: a database file in the work
directory, opened in the process that uses it.

Python's own ``sqlite3`` module links SQLite 3.40 here (no JSONB, no ``->>`` on blobs), so
docbench uses ``sqlean`` -- the same DB-API as ``sqlite3`` with a recent SQLite. The engine owns
the database file (``<workdir>/docbench.sqlite``), the connections to it (read-write ones run
``pragmas.sql``) and this process's own connection, closed by :meth:`SQLiteEngine.release`.
Per-connection cache limits (``PRAGMA cache_size``) are the updates adapter's business.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from docbench.contracts.common import Availability
from docbench.contracts.engine import Engine, system_folder
from docbench.core.ownership import claim_directory
from docbench.core.sqlfiles import read_sql_statements

DATABASE_NAME = "docbench.sqlite"
# Files SQLite keeps beside the database (WAL mode, rollback journal).
SIDE_SUFFIXES = ("-wal", "-shm", "-journal")
MIN_VERSION = (3, 45, 0)
# How long a writer waits for another connection's write lock (throughput clients).
BUSY_TIMEOUT_MS = 60_000


def sqlean_module():
    """The ``sqlean`` module (imported on first use: availability() reports it missing)."""
    import sqlean

    return sqlean


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:3] if part.isdigit())


def is_content_error(error: Exception) -> bool:
    """True when SQLite refused the documents themselves (invalid JSON, too deep, too big)."""
    sqlean = sqlean_module()
    if isinstance(error, (sqlean.IntegrityError, sqlean.DataError)):
        return True
    return isinstance(error, sqlean.OperationalError) and "JSON" in str(error)


class SQLiteEngine(Engine):
    name = "sqlite"
    display_name = "SQLite"
    embedded = True
    install_hint = "pip install sqlean.py"
    notes = (
        "Embedded (in-process) SQLite from the sqlean.py package; single-threaded; WAL "
        "with synchronous=NORMAL while loading; index on the five paths built after the "
        "load. No engine-side timing (the worker's wall time is the engine's)."
    )

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        self._con: Any = None

    @property
    def path(self) -> Path:
        """The database file docbench owns in the work directory."""
        return self.workdir / DATABASE_NAME

    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            sqlean = sqlean_module()
        except ImportError as error:
            return Availability(
                False, reason=f"the sqlean.py package is missing ({error})", install_hint=cls.install_hint
            )
        version = sqlean.sqlite_version
        if version_tuple(version) < MIN_VERSION:
            return Availability(
                False,
                version=version,
                reason=f"SQLite {version} has no JSONB (needs 3.45+)",
                install_hint="pip install --upgrade sqlean.py",
            )
        return Availability(True, version=version)

    def versions(self) -> dict[str, str]:
        found: dict[str, str] = {}
        with contextlib.suppress(ImportError):
            found["sqlite"] = sqlean_module().sqlite_version
        with contextlib.suppress(Exception):
            from importlib.metadata import version

            found["sqlean.py"] = version("sqlean.py")
        return found

    # ----- connections -------------------------------------------------------------------
    def connect(self, read_only: bool = False) -> Any:
        """A new connection to the database file (autocommit: ``isolation_level=None``).

        Read-write connections create the work directory and run ``pragmas.sql`` (WAL,
        synchronous=NORMAL, a 256 MiB page cache) and wait up to 60 s for another writer.
        Read-only ones (query workers) open the file with ``mode=ro`` and SQLite's defaults.
        """
        sqlean = sqlean_module()
        if read_only:
            uri = self.path.resolve().as_uri() + "?mode=ro"
            return sqlean.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        claim_directory(self.workdir)
        con = sqlean.connect(str(self.path), isolation_level=None, check_same_thread=False)
        for statement in read_sql_statements(system_folder(self) / "pragmas.sql"):
            con.execute(statement).fetchall()
        con.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return con

    def connection(self) -> Any:
        """This process's own read-write connection, opened on first use."""
        if self._con is None:
            self._con = self.connect()
        return self._con

    def release(self) -> None:
        if self._con is not None:
            with contextlib.suppress(Exception):
                self._con.close()
            self._con = None

    def stop(self) -> None:
        self.release()

    def remove_database(self) -> None:
        """Close this process's connection and delete the database file and its side files,
        so that sizes never include pages freed by an earlier load."""
        self.release()
        for suffix in ("", *SIDE_SUFFIXES):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)


ENGINE = SQLiteEngine
