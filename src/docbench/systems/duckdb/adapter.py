"""DuckDB: an embedded database file, one JSON column, no index (as JSONBench).

DDL, load statement and queries are plain SQL files next to this module (``ddl.sql``,
``load.sql``, ``queries.sql``). The parent process creates and loads the database; each query
runs in a fresh worker process that opens the file read-only.
"""

from __future__ import annotations

import contextlib
import json
import os
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

DATABASE_NAME = "docbench.duckdb"
BATCH_FILE_NAME = "load-batch.ndjson"
TABLE = "documents"
# Lines joined per write() of the temporary batch file.
WRITE_CHUNK_LINES = 8192

# Nothing may try the network: the json extension is built into the Python wheel, and with
# autoinstall/autoload off a query that would need another extension fails instead of
# downloading it.
CONFIG: dict[str, Any] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}

# Query-level metrics only (no per-operator timers, so profiling does not slow the query).
# DuckDB >= 2.0 names metrics `group.metric` in `tracked_metrics`; 1.1-1.4 used
# `custom_profiling_settings` with upper-case names. The first that works is used.
PROFILING_SETUPS: list[list[str]] = [
    ["SET enable_profiling = 'no_output'",
     "SET tracked_metrics = ['query.total_time', 'system.peak_buffer_memory']"],
    ["SET enable_profiling = 'no_output'",
     "SET custom_profiling_settings = '{\"LATENCY\": \"true\", "
     "\"SYSTEM_PEAK_BUFFER_MEMORY\": \"true\"}'"],
]


def _duckdb():
    import duckdb

    return duckdb


def _connect(path: Path, read_only: bool = False):
    return _duckdb().connect(str(path), read_only=read_only, config=dict(CONFIG))


def _is_content_error(error: Exception) -> bool:
    """True when DuckDB refused the documents themselves (not an I/O or internal failure)."""
    duckdb = _duckdb()
    content = tuple(getattr(duckdb, name) for name in
                    ("InvalidInputException", "ConversionException") if hasattr(duckdb, name))
    return isinstance(error, content)


def _profile_metrics(text: str) -> tuple[float | None, int | None]:
    """(seconds, peak buffer memory bytes) from DuckDB's JSON profiling output."""
    try:
        info = json.loads(text)
    except (TypeError, ValueError):
        return None, None
    if not isinstance(info, dict):
        return None, None
    seconds = memory = None
    query = info.get("query")
    if isinstance(query, dict):  # DuckDB >= 2.0
        seconds = query.get("total_time")
        system = info.get("system")
        if isinstance(system, dict):
            memory = system.get("peak_buffer_memory")
    else:  # DuckDB 1.1-1.4
        seconds = info.get("latency")
        memory = info.get("system_peak_buffer_memory")
    seconds = float(seconds) if isinstance(seconds, (int, float)) else None
    memory = int(memory) if isinstance(memory, (int, float)) and memory > 0 else None
    return seconds, memory


def _write_lines(path: Path, lines: list[bytes]) -> None:
    """Write lines as ndjson, joined a chunk at a time (less memory than one joined copy of
    the batch, fewer Python steps than writev of each line; measured the fastest)."""
    newline = b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for start in range(0, len(lines), WRITE_CHUNK_LINES):
            view = memoryview(newline.join(lines[start:start + WRITE_CHUNK_LINES]) + newline)
            while view:
                view = view[os.write(fd, view):]
    finally:
        os.close(fd)


class DuckDBLoader(Loader):
    """Each batch goes through a temporary ndjson file read by ``read_ndjson_objects``, inside
    one transaction: all of it is kept or none."""

    def __init__(self, system: DuckDBSystem) -> None:
        self.system = system
        self.con = system.connection()
        self.batch_path = system.workdir / BATCH_FILE_NAME
        self.statement = read_sql_statements(system.folder() / "load.sql")[0]

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        _write_lines(self.batch_path, lines)
        self._load_path(self.batch_path)

    def load_file(self, path: Path, documents: int) -> bool:
        """The whole file through read_ndjson_objects, as by hand, in one transaction."""
        self._load_path(path)
        return True

    def _load_path(self, path: Path) -> None:
        self.con.execute("BEGIN TRANSACTION")
        try:
            self.con.execute(self.statement, {"path": str(path)})
            self.con.execute("COMMIT")
        except Exception as error:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            if _is_content_error(error):
                raise BatchRejected(str(error).strip()) from error
            raise

    def close(self) -> None:
        self.batch_path.unlink(missing_ok=True)


class DuckDBSession(QuerySession):
    def __init__(self, spec: dict[str, Any]) -> None:
        self.con = _connect(Path(spec["path"]), read_only=True)
        self.profiling = False
        for setup in PROFILING_SETUPS:
            try:
                for statement in setup:
                    self.con.execute(statement)
            except _duckdb().Error:
                with contextlib.suppress(Exception):
                    self.con.execute("PRAGMA disable_profiling")
                continue
            self.profiling = True
            break

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        rows = self.con.execute(text).fetchall()
        seconds = memory = None
        if self.profiling:
            try:
                seconds, memory = _profile_metrics(self.con.get_profiling_information(format="json"))
            except Exception:  # profiling output is a bonus; the rows are what matter
                seconds = memory = None
        # DuckDB's peak buffer memory leaves out allocations outside its buffer manager, so
        # it goes to `extra`: the worker's measured RSS stays the memory figure, comparable
        # with the other embedded engines.
        extra = {"peak_buffer_memory": memory} if memory is not None else {}
        return QueryOutcome(rows=[tuple(row) for row in rows], engine_seconds=seconds,
                            extra=extra)

    def explain(self, query_number: int, text: str) -> str | None:
        rows = self.con.execute(f"EXPLAIN {text}").fetchall()
        return "\n".join(str(row[-1]) for row in rows)

    def cancel(self) -> None:
        with contextlib.suppress(Exception):
            self.con.interrupt()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()


class DuckDBSystem(System):
    name = "duckdb"
    display_name = "DuckDB"
    embedded = True
    retains_structure = True
    variants: ClassVar[list[Variant]] = [
        Variant("default", "JSON column, DuckDB's automatic compression (dictionary/FSST), "
                "no index", role="default"),
    ]
    # One DuckDB row group (122,880 rows) per batch: a full row group is compressed and
    # written straight to the database file at commit, a partial one waits for a checkpoint
    # (100,000-line batches loaded ~25% slower).
    load_batch_size = 122_880
    notes = ("Embedded (in-process) DuckDB with a database file; one JSON column, no index; "
             "default threads (one per core). Engine time and peak buffer memory come from "
             "DuckDB's query-level profiling.")

    def __init__(self, workdir: Path, variant: Variant, url: str | None = None) -> None:
        super().__init__(workdir, variant, url)
        self._con = None

    @property
    def path(self) -> Path:
        return self.workdir / DATABASE_NAME

    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            duckdb = _duckdb()
        except ImportError as error:
            return Availability(False, reason=f"the duckdb Python package is missing ({error})",
                                install_hint="pip install duckdb")
        return Availability(True, version=duckdb.__version__)

    # ----- connections -------------------------------------------------------------------
    def connection(self):
        if self._con is None:
            self.workdir.mkdir(parents=True, exist_ok=True)
            self._con = _connect(self.path)
        return self._con

    def release(self) -> None:
        if self._con is not None:
            with contextlib.suppress(Exception):
                self._con.close()
            self._con = None

    def stop(self) -> None:
        self.release()

    # ----- loading -------------------------------------------------------------------------
    def create(self) -> None:
        # A fresh file, so that sizes never include blocks freed by an earlier load.
        self.release()
        for leftover in (self.path, self.path.with_name(self.path.name + ".wal"),
                         self.workdir / BATCH_FILE_NAME):
            leftover.unlink(missing_ok=True)
        con = self.connection()
        for statement in read_sql_statements(self.folder() / "ddl.sql"):
            con.execute(statement.format(**self.variant.settings))
        con.execute("CHECKPOINT")

    def loader(self) -> Loader:
        return DuckDBLoader(self)

    def finish_load(self) -> None:
        # Write everything from the WAL into the database file so sizes are final.
        self.connection().execute("CHECKPOINT")

    def native_load(self, files: list[Path]) -> None:
        """`INSERT INTO documents SELECT json FROM read_ndjson_objects([...files])`: one
        statement over all files, as a person would type it."""
        statement = read_sql_statements(self.folder() / "load.sql")[0]
        self.connection().execute(statement, {"path": [str(p) for p in files]})

    def count(self) -> int:
        return int(self.connection().execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])

    def storage(self) -> StorageSize:
        con = self.connection()
        con.execute("CHECKPOINT")
        cursor = con.execute("SELECT * FROM pragma_database_size()")
        names = [d[0] for d in cursor.description]
        size = dict(zip(names, cursor.fetchone(), strict=True))
        block_size = int(size["block_size"])
        table_blocks = con.execute(
            f"""SELECT count(DISTINCT block) FROM (
                  SELECT block_id AS block FROM pragma_storage_info('{TABLE}')
                  WHERE persistent AND block_id >= 0
                  UNION ALL
                  SELECT unnest(additional_block_ids) FROM pragma_storage_info('{TABLE}')
                  WHERE persistent)"""
        ).fetchone()[0]
        data = int(table_blocks) * block_size
        used = int(size["used_blocks"]) * block_size
        detail = {
            "block_size": block_size,
            "total_blocks": int(size["total_blocks"]),
            "used_blocks": int(size["used_blocks"]),
            "free_blocks": int(size["free_blocks"]),
            "table_blocks": int(table_blocks),
            "metadata_bytes": max(used - data, 0),
            "database_file_bytes": self.path.stat().st_size if self.path.exists() else None,
            "wal_size": size.get("wal_size"),
            "compression": [r[0] for r in con.execute(
                f"SELECT DISTINCT compression FROM pragma_storage_info('{TABLE}') ORDER BY 1"
            ).fetchall()],
        }
        return StorageSize(total=used, data=data, index=0, on_disk=directory_size(self.workdir),
                           detail=detail)

    # ----- queries -------------------------------------------------------------------------
    def queries(self) -> list[str]:
        return read_sql_statements(self.folder() / "queries.sql")

    def session_spec(self) -> dict[str, Any]:
        return {"path": str(self.path)}

    @classmethod
    def open_session(cls, spec: dict[str, Any]) -> QuerySession:
        return DuckDBSession(spec)

    def versions(self) -> dict[str, str]:
        version = self.version()
        return {"duckdb": version} if version else {}


SYSTEM = DuckDBSystem
