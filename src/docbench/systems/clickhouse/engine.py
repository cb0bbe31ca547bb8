"""ClickHouse through chDB, its embedded (in-process) form: a persistent database directory
in the work directory (``<workdir>/chdb``).

chDB opens ONE database directory per process, and a directory held by one process cannot be
opened by another (``Cannot lock file .../status``). Within one process, every engine handle
and query / key-value session shares one chDB session per directory (:meth:`ClickHouseEngine.
connect`); opening another directory closes the previous one. :meth:`ClickHouseEngine.release`
closes it so that a worker process can open the directory; the next ``connect()`` reopens it.
docbench cannot make chDB's caches small: ``limit_cache`` raises NotSupported.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docbench.contracts.common import Availability, NotSupported
from docbench.contracts.engine import CacheLimits, Engine
from docbench.core.ownership import claim_directory

if TYPE_CHECKING:
    from chdb.session import Session

DATABASE_DIR = "chdb"  # chDB's database directory inside the work dir
# Lines per writev call (two iovecs per line; IOV_MAX is 1024 on Linux).
IOV_LINES = 512
# How long to wait for the parts replaced by OPTIMIZE FINAL to leave the disk.
OUTDATED_PARTS_WAIT = 30.0
# Background merges have settled when none has run for MERGES_QUIET seconds (a merge is
# scheduled within a second or so of the insert that allows it); waited for at most MERGES_WAIT.
MERGES_QUIET = 3.0
# The open-files limit a chDB process asks for (ClickHouse's server asks for its hard limit).
OPEN_FILES_WANTED = 1 << 20
MERGES_WAIT = 3600.0

# ClickHouse error names (the "(NAME)" at the end of its messages) that mean "the data was
# refused"; anything else (disk full, memory limit, missing file...) is a failure of the system.
CONTENT_ERRORS = frozenset(
    {
        "INCORRECT_DATA",
        "CANNOT_READ_ALL_DATA",
        "ATTEMPT_TO_READ_AFTER_EOF",
        "TYPE_MISMATCH",
        "CANNOT_CONVERT_TYPE",
        "TOO_DEEP_RECURSION",
        "TOO_LARGE_STRING_SIZE",
        "VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE",
        "ARGUMENT_OUT_OF_BOUND",
        "INCORRECT_JSON",
        "CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN",
        "CANNOT_READ_ARRAY_FROM_TEXT",
        "TOO_LARGE_ARRAY_SIZE",
        # a table CHECK on the document (the String representations: isValidJSON)
        "VIOLATED_CONSTRAINT",
    }
)
_ERROR_NAME = re.compile(r"\(([A-Z][A-Z0-9_]+)\)")


def chdb_module():
    """The ``chdb`` module (imported on first use: availability() reports it missing)."""
    import chdb

    return chdb


# ----- one chDB session per database directory and process -------------------------------

_LOCK = threading.RLock()


@dataclass
class _OpenSession:
    """The process's one chDB session, with the directory and server settings it was opened
    with (nothing open: ``session`` None)."""

    path: str | None = None
    server_settings: str = ""
    session: Session | None = None


_OPEN = _OpenSession()


def raise_open_files_limit(wanted: int = OPEN_FILES_WANTED) -> int:
    """Raise this process's limit of open files, as the ClickHouse server does at start: a
    JSON column keeps a file per subcolumn in every part, and a load with merges running
    opened more than 20,000 at 55M documents (EMFILE, the load failed). The hard limit is
    raised too when the process may (root); the limit in force is returned."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else max(hard, wanted)
    with contextlib.suppress(OSError):
        target = min(target, int(Path("/proc/sys/fs/nr_open").read_text()))
    for limits in ((target, target), (min(target, hard), hard)):
        if limits[0] <= soft:
            break
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, limits)
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def _open_session(path: Path, server_settings: str = ""):
    """The process's chDB session on ``path``, opened on first use.

    chDB runs one embedded server per process, bound to one directory: if another directory
    is open (an engine that was never released), it is closed first. ``server_settings``
    (``name=value&name=value``) configure that server; a session opened with other server
    settings is closed and opened again with these.
    """
    key = str(Path(path).resolve())
    connection = _connection_string(key, server_settings)
    with _LOCK:
        if _OPEN.session is not None and _OPEN.path == key and _OPEN.server_settings == server_settings:
            return _OPEN.session
        _close_session()
        from chdb import session as chdb_session

        Path(key).mkdir(parents=True, exist_ok=True)
        raise_open_files_limit()
        _OPEN.session = chdb_session.Session(connection)
        _OPEN.path = key
        _OPEN.server_settings = server_settings
        return _OPEN.session


def _connection_string(key: str, server_settings: str) -> str:
    return f"{key}?{server_settings}" if server_settings else key


def _close_session(path: Path | None = None) -> None:
    """Close the process's chDB session (only if it is on ``path``, when given)."""
    with _LOCK:
        held = _OPEN.session
        if held is None:
            return
        if path is not None and _OPEN.path != str(Path(path).resolve()):
            return
        _OPEN.session = None
        _OPEN.path = None
        _OPEN.server_settings = ""
        with contextlib.suppress(Exception):
            held.close()


# ----- helpers the workload adapters share ----------------------------------------------------


def error_text(error: BaseException) -> str:
    """ClickHouse's message. When it quotes a document that is not valid UTF-8, chDB cannot
    decode it into a str and raises UnicodeDecodeError instead: the raw message is in it."""
    if isinstance(error, UnicodeDecodeError) and isinstance(error.object, (bytes, bytearray)):
        return bytes(error.object).decode("utf-8", "backslashreplace").strip()
    return str(error).strip()


def is_content_error(error: BaseException) -> bool:
    if isinstance(error, UnicodeDecodeError):
        return True
    names = set(_ERROR_NAME.findall(error_text(error)))
    return any(name in CONTENT_ERRORS or name.startswith("CANNOT_PARSE") for name in names)


def sql_string(value: str) -> str:
    """A ClickHouse string literal's body (without the quotes)."""
    return value.replace("\\", "\\\\").replace("'", "\\'")


def write_lines(path: Path, lines: list[bytes]) -> None:
    """Write lines as ndjson with writev (no joined copy of the batch in Python)."""
    newline = b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for start in range(0, len(lines), IOV_LINES):
            iov: list[bytes] = []
            for line in lines[start : start + IOV_LINES]:
                iov.append(line)
                iov.append(newline)
            expected = sum(len(part) for part in iov)
            written = os.writev(fd, iov)
            if written != expected:  # a short write (rare): finish with plain writes
                os.write(fd, b"".join(iov)[written:])
    finally:
        os.close(fd)


class ClickHouseEngine(Engine, CacheLimits):
    name = "clickhouse"
    display_name = "ClickHouse (chDB)"
    embedded = True
    install_hint = "pip install chdb"
    notes = (
        "Embedded ClickHouse (chDB) with a persistent database directory; one JSON column "
        "with kind, commit.operation, commit.collection, did, time_us as typed paths; "
        "MergeTree sorted by them (time_us as a timestamp). OPTIMIZE TABLE FINAL after the "
        "load. Engine time from chDB's elapsed(); chDB reports no per-query memory."
    )

    #: The embedded server's settings (``name=value&...``, chDB's connection string), set by a
    #: variant that needs them (clickhouse/jsonbench bounds its concurrent merges).
    server_settings: str = ""

    @property
    def path(self) -> Path:
        """chDB's database directory in the work directory."""
        return self.workdir / DATABASE_DIR

    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            chdb = chdb_module()
        except ImportError as error:
            return Availability(
                False, reason=f"the chdb Python package is missing ({error})", install_hint=cls.install_hint
            )
        engine = getattr(chdb, "engine_version", None)
        version = f"{engine} (chDB {chdb.__version__})" if engine else f"chDB {chdb.__version__}"
        return Availability(True, version=version)

    def versions(self) -> dict[str, str]:
        try:
            chdb = chdb_module()
        except ImportError:
            return {}
        out = {"chdb": str(chdb.__version__)}
        engine = getattr(chdb, "engine_version", None)
        if engine:
            out["clickhouse"] = str(engine)
        return out

    # ----- connections -------------------------------------------------------------------
    def connect(self) -> Any:
        """The process's chDB session on this engine's directory (opened on first use, shared
        by every handle and session of the process on the same directory)."""
        claim_directory(self.workdir)
        return _open_session(self.path, self.server_settings)

    def query(self, sql: str, fmt: str = "TSVRaw") -> str:
        """Run one statement on the process's session; the result as text."""
        return str(self.connect().query(sql, fmt))

    def connection_string(self) -> str:
        """What chDB opens for this engine: its directory and server settings."""
        return _connection_string(str(Path(self.path).resolve()), self.server_settings)

    def release(self) -> None:
        _close_session(self.path)

    def outdated_parts(self, database: str, table: str) -> int:
        """Parts a merge replaced that are still on disk (the cleanup thread deletes them)."""
        return int(
            self.query(
                f"SELECT count() FROM system.parts WHERE database = '{sql_string(database)}' "
                f"AND table = '{sql_string(table)}' AND NOT active"
            ).strip()
            or 0
        )

    def wait_for_outdated_parts(
        self, database: str, table: str, timeout: float = OUTDATED_PARTS_WAIT
    ) -> None:
        """Wait (at most ``timeout`` s) until the parts a merge replaced have left the disk."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.outdated_parts(database, table) > 0:
            time.sleep(0.2)

    def _table_rows(self, system_table: str, database: str, table: str, where: str = "") -> int:
        """Rows of a system table (system.merges, system.parts) about one table."""
        return int(
            self.query(
                f"SELECT count() FROM system.{system_table} WHERE database = '{sql_string(database)}' "
                f"AND table = '{sql_string(table)}'{where}"
            ).strip()
            or 0
        )

    def merges_running(self, database: str, table: str) -> int:
        return self._table_rows("merges", database, table)

    def active_parts(self, database: str, table: str) -> int:
        return self._table_rows("parts", database, table, " AND active")

    def wait_for_merges(
        self, database: str, table: str, quiet: float = MERGES_QUIET, timeout: float = MERGES_WAIT
    ) -> None:
        """Wait until no merge of the table has run for ``quiet`` seconds (the background
        merges have settled), at most ``timeout`` seconds. A table of one part (or none) with
        no merge running has nothing to merge: no wait."""
        if self.active_parts(database, table) <= 1 and not self.merges_running(database, table):
            return
        deadline = time.monotonic() + timeout
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            if self.merges_running(database, table):
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= quiet:
                return
            time.sleep(0.5)

    def stop(self) -> None:
        self.release()

    def limit_cache(self, cache_bytes: int) -> str:
        raise NotSupported("ClickHouse (chDB): docbench cannot make the embedded engine's caches small")


ENGINE = ClickHouseEngine
