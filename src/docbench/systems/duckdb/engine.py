"""DuckDB: an embedded database file in the work directory (the ``duckdb`` Python package).

The engine owns the database file (``<workdir>/docbench.duckdb``), the connections to it and
this process's own connection, closed by :meth:`DuckDBEngine.release` (DuckDB allows one
read-write process per file: a worker process opens it only after the parent released it).
Connections of one process to the file share one database instance. The buffer manager's
``memory_limit`` is a per-session setting: the updates adapter's ``limit_cache`` sets it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from docbench.contracts.common import Availability
from docbench.contracts.engine import Engine
from docbench.core.ownership import claim_directory

DATABASE_NAME = "docbench.duckdb"
# Lines joined per write() of a temporary batch file.
WRITE_CHUNK_LINES = 8192

# Nothing may try the network: the json extension is built into the Python wheel, and with
# autoinstall/autoload off a query that would need another extension fails instead of
# downloading it.
CONFIG: dict[str, bool] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


def duckdb_module():
    """The ``duckdb`` module (imported on first use: availability() reports it missing)."""
    import duckdb

    return duckdb


def is_content_error(error: Exception) -> bool:
    """True when DuckDB refused the documents themselves (not an I/O or internal failure)."""
    duckdb = duckdb_module()
    content = tuple(
        getattr(duckdb, name)
        for name in ("InvalidInputException", "ConversionException")
        if hasattr(duckdb, name)
    )
    return isinstance(error, content)


def write_lines(path: Path, lines: list[bytes]) -> None:
    """Write lines as ndjson, joined a chunk at a time (less memory than one joined copy of
    the batch, fewer Python steps than writev of each line; measured the fastest)."""
    newline = b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for start in range(0, len(lines), WRITE_CHUNK_LINES):
            view = memoryview(newline.join(lines[start : start + WRITE_CHUNK_LINES]) + newline)
            while view:
                view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


class DuckDBEngine(Engine):
    name = "duckdb"
    display_name = "DuckDB"
    embedded = True
    install_hint = "pip install duckdb"
    notes = (
        "Embedded (in-process) DuckDB with a database file; one JSON column, no index; "
        "default threads (one per core). Engine time and peak buffer memory come from "
        "DuckDB's query-level profiling."
    )

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        self._con: Any = None

    @property
    def path(self) -> Path:
        """The database file docbench owns in the work directory."""
        return self.workdir / DATABASE_NAME

    @property
    def wal_path(self) -> Path:
        return self.path.with_name(self.path.name + ".wal")

    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            duckdb = duckdb_module()
        except ImportError as error:
            return Availability(
                False, reason=f"the duckdb Python package is missing ({error})", install_hint=cls.install_hint
            )
        return Availability(True, version=duckdb.__version__)

    def versions(self) -> dict[str, str]:
        version = self.version()
        return {"duckdb": version} if version else {}

    # ----- connections -------------------------------------------------------------------
    def connect(self, read_only: bool = False) -> Any:
        """A new connection to the database file, never touching the network (``CONFIG``).
        Read-only connections are the query workers'."""
        if not read_only:
            claim_directory(self.workdir)
        return duckdb_module().connect(str(self.path), read_only=read_only, config=dict(CONFIG))

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
        """Close this process's connection and delete the database file and its WAL, so that
        sizes never include blocks freed by an earlier load."""
        self.release()
        self.path.unlink(missing_ok=True)
        self.wal_path.unlink(missing_ok=True)


ENGINE = DuckDBEngine
