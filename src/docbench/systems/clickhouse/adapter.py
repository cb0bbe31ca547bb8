"""ClickHouse through chDB, its embedded (in-process) form: a persistent database directory
under the work dir, one JSON column with the five JSONBench paths typed, a MergeTree sorted by
them.

DDL, load statements and queries are plain SQL files next to this module (``ddl.sql``,
``load.sql``, ``queries.sql``). chDB opens ONE database directory per process, and a directory
held by one process cannot be opened by another: the parent creates and loads the table, then
``release()`` closes its session so that the query worker can open the directory; the parent
reopens it lazily when it needs it again (count, storage). Within one process all objects
share one chDB session per directory (see :func:`_session`).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import stat
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import orjson

from docbench.systems.base import (
    Availability,
    BatchRejected,
    Loader,
    QueryOutcome,
    QuerySession,
    StorageSize,
    System,
    Variant,
    read_sql_statements,
)

DATABASE_DIR = "chdb"  # chDB's database directory inside the work dir
BATCH_FILE_NAME = "load-batch.ndjson"
DATABASE = "docbench"
TABLE = "bluesky"
QUALIFIED = f"{DATABASE}.{TABLE}"
# Lines per writev call (two iovecs per line; IOV_MAX is 1024 on Linux).
IOV_LINES = 512
# How long finish_load waits for the parts replaced by OPTIMIZE FINAL to leave the disk.
OUTDATED_PARTS_WAIT = 30.0

# ClickHouse error names (the "(NAME)" at the end of its messages) that mean "the data was
# refused"; anything else (disk full, memory limit, missing file...) is a failure of the system.
CONTENT_ERRORS = frozenset({
    "INCORRECT_DATA", "CANNOT_READ_ALL_DATA", "ATTEMPT_TO_READ_AFTER_EOF", "TYPE_MISMATCH",
    "CANNOT_CONVERT_TYPE", "TOO_DEEP_RECURSION", "TOO_LARGE_STRING_SIZE",
    "VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE", "ARGUMENT_OUT_OF_BOUND", "INCORRECT_JSON",
    "CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN", "CANNOT_READ_ARRAY_FROM_TEXT",
    "TOO_LARGE_ARRAY_SIZE",
})
_ERROR_NAME = re.compile(r"\(([A-Z][A-Z0-9_]+)\)")

# Q2-Q5 filter on the leading sort key columns: their plan must show the primary key in use.
INDEXED_QUERIES = frozenset({2, 3, 4, 5})


def _chdb():
    import chdb

    return chdb


# ----- one chDB session per database directory and process -------------------------------

_LOCK = threading.RLock()
_OPEN: dict[str, Any] = {"path": None, "session": None}


def _session(path: Path):
    """The process's chDB session on ``path``, opened on first use.

    chDB runs one embedded server per process, bound to one directory: if another directory
    is open (an object that was never released), it is closed first.
    """
    key = str(Path(path).resolve())
    with _LOCK:
        if _OPEN["session"] is not None and _OPEN["path"] == key:
            return _OPEN["session"]
        _close_session()
        from chdb import session as chdb_session

        Path(key).mkdir(parents=True, exist_ok=True)
        _OPEN["session"] = chdb_session.Session(key)
        _OPEN["path"] = key
        return _OPEN["session"]


def _close_session(path: Path | None = None) -> None:
    """Close the process's chDB session (only if it is on ``path``, when given)."""
    with _LOCK:
        held = _OPEN["session"]
        if held is None:
            return
        if path is not None and _OPEN["path"] != str(Path(path).resolve()):
            return
        _OPEN["session"] = None
        _OPEN["path"] = None
        with contextlib.suppress(Exception):
            held.close()


# ----- helpers ------------------------------------------------------------------------------


def _error_text(error: BaseException) -> str:
    """ClickHouse's message. When it quotes a document that is not valid UTF-8, chDB cannot
    decode it into a str and raises UnicodeDecodeError instead: the raw message is in it."""
    if isinstance(error, UnicodeDecodeError) and isinstance(error.object, (bytes, bytearray)):
        return bytes(error.object).decode("utf-8", "backslashreplace").strip()
    return str(error).strip()


def _is_content_error(error: BaseException) -> bool:
    if isinstance(error, UnicodeDecodeError):
        return True
    names = set(_ERROR_NAME.findall(_error_text(error)))
    return any(name in CONTENT_ERRORS or name.startswith("CANNOT_PARSE") for name in names)


def _sql_string(value: str) -> str:
    """A ClickHouse string literal's body (without the quotes)."""
    return value.replace("\\", "\\\\").replace("'", "\\'")


def _write_lines(path: Path, lines: list[bytes]) -> None:
    """Write lines as ndjson with writev (no joined copy of the batch in Python)."""
    newline = b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for start in range(0, len(lines), IOV_LINES):
            iov: list[bytes] = []
            for line in lines[start:start + IOV_LINES]:
                iov.append(line)
                iov.append(newline)
            expected = sum(len(part) for part in iov)
            written = os.writev(fd, iov)
            if written != expected:  # a short write (rare): finish with plain writes
                os.write(fd, b"".join(iov)[written:])
    finally:
        os.close(fd)


def _directory_size(path: Path) -> int:
    """Like base.directory_size (st_blocks * 512 of the regular files), but tolerant of the
    directories ClickHouse's cleanup thread removes while the walk runs."""
    total = 0
    for root, _dirs, names in os.walk(path):
        for name in names:
            try:
                info = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                total += info.st_blocks * 512
    return total


def _result_stats(result) -> dict[str, Any]:
    stats: dict[str, Any] = {}
    for name in ("rows_read", "bytes_read", "storage_rows_read", "storage_bytes_read"):
        method = getattr(result, name, None)
        if method is not None:
            with contextlib.suppress(Exception):
                stats[name] = int(method())
    return stats


# ----- loading --------------------------------------------------------------------------------


class ClickHouseLoader(Loader):
    """Each batch is written to a temporary ndjson file in the work dir and inserted with
    ``INSERT ... FROM INFILE ... FORMAT JSONAsObject`` as one insert block: all or nothing."""

    def __init__(self, system: ClickHouseSystem) -> None:
        self.system = system
        self.batch_path = system.workdir / BATCH_FILE_NAME
        self.template = read_sql_statements(system.folder() / "load.sql")[0]
        self.rows_written = 0

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        _write_lines(self.batch_path, lines)
        self._insert_file(self.batch_path)

    def load_file(self, path: Path, documents: int) -> bool:
        """The whole file with INSERT ... FROM INFILE, as by hand; the statement's settings
        make it one insert block, so it is all or nothing like a batch."""
        if documents > self.system.load_batch_size:
            return False  # keep the memory of one insert block bounded, as for batches
        self._insert_file(path)
        return True

    def _insert_file(self, path: Path) -> None:
        con = self.system.session()
        statement = self.template.replace("{path}", _sql_string(str(path)))
        try:
            result = con.query(statement, "TSV")
        except Exception as error:
            if _is_content_error(error):
                raise BatchRejected(_error_text(error)) from error
            raise
        with contextlib.suppress(Exception):
            self.rows_written += int(result.rows_written())

    def close(self) -> None:
        self.batch_path.unlink(missing_ok=True)


# ----- queries --------------------------------------------------------------------------------


class ClickHouseSession(QuerySession):
    """A chDB session in the query worker. Rows come back as JSONCompact (64-bit integers
    unquoted) and are parsed with orjson; the engine time is chDB's own ``elapsed()``."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.path = Path(spec["path"])
        self.con = _session(self.path)
        settings = {
            # No result cache (it is off by default; said explicitly, as JSONBench requires).
            "use_query_cache": 0,
            "output_format_json_quote_64bit_integers": 0,
            "output_format_json_quote_64bit_floats": 0,
        }
        timeout = spec.get("timeout")
        if timeout:
            settings["max_execution_time"] = max(1, math.ceil(float(timeout)))
        for name, value in settings.items():
            self.con.query(f"SET {name} = {value}")

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        result = self.con.query(text, "JSONCompact")
        payload = result.bytes()
        rows = orjson.loads(payload)["data"] if payload else []
        extra = _result_stats(result)
        seconds = None
        with contextlib.suppress(Exception):
            seconds = float(result.elapsed())
        return QueryOutcome(rows=[tuple(row) for row in rows], engine_seconds=seconds,
                            engine_memory=None, extra=extra)

    def explain(self, query_number: int, text: str) -> str | None:
        plan = str(self.con.query(f"EXPLAIN indexes = 1 {text}", "TSVRaw")).rstrip()
        with contextlib.suppress(Exception):
            pipeline = str(self.con.query(f"EXPLAIN PIPELINE {text}", "TSVRaw")).rstrip()
            plan += "\n\n-- EXPLAIN PIPELINE\n" + pipeline
        return plan

    def cancel(self) -> None:
        """chDB has no way to interrupt a running ``query()`` from another thread; the
        session's ``max_execution_time`` (from the spec's ``timeout``) stops it, and the runner
        kills the worker process."""

    def close(self) -> None:
        _close_session(self.path)


# ----- the system -----------------------------------------------------------------------------


def _variant(name: str, description: str, role: str, json_parameters: str, codec: str) -> Variant:
    return Variant(name, description, role=role,
                   settings={"json_parameters": json_parameters, "codec": codec})


class ClickHouseSystem(System):
    name = "clickhouse"
    display_name = "ClickHouse (chDB)"
    embedded = True
    retains_structure = True
    variants: ClassVar[list[Variant]] = [
        _variant("lz4", "JSON column with the JSONBench paths typed, CODEC(LZ4) (JSONBench's "
                 "LZ4 configuration; ClickHouse 26.9 without a codec writes parts of 100 MB or "
                 "more with ZSTD(3))", "default", "", "CODEC(LZ4)"),
        _variant("zstd", "the same with CODEC(ZSTD(3)), the smallest measured (JSONBench's "
                 "published DDL, ZSTD(1) with max_dynamic_paths = 0, was 3% larger)", "best",
                 "", "CODEC(ZSTD(3))"),
    ]
    # JSONBench inserts 1M-row blocks. Smaller batches mean more, smaller parts and more
    # merging: 100k-line batches loaded a 1M-document file 1.85x slower than the native insert
    # (2.4x with OPTIMIZE FINAL), 1M-line batches 0.96-1.19x (README).
    load_batch_size = 1_000_000
    notes = ("Embedded ClickHouse (chDB) with a persistent database directory; one JSON column "
             "with kind, commit.operation, commit.collection, did, time_us as typed paths; "
             "MergeTree sorted by them (time_us as a timestamp). OPTIMIZE TABLE FINAL after the "
             "load. Engine time from chDB's elapsed(); chDB reports no per-query memory.")

    @property
    def path(self) -> Path:
        return self.workdir / DATABASE_DIR

    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            chdb = _chdb()
        except ImportError as error:
            return Availability(False, reason=f"the chdb Python package is missing ({error})",
                                install_hint="pip install chdb")
        engine = getattr(chdb, "engine_version", None)
        version = f"{engine} (chDB {chdb.__version__})" if engine else f"chDB {chdb.__version__}"
        return Availability(True, version=version)

    def versions(self) -> dict[str, str]:
        try:
            chdb = _chdb()
        except ImportError:
            return {}
        out = {"chdb": str(chdb.__version__)}
        engine = getattr(chdb, "engine_version", None)
        if engine:
            out["clickhouse"] = str(engine)
        return out

    # ----- connections -------------------------------------------------------------------
    def session(self):
        self.workdir.mkdir(parents=True, exist_ok=True)
        return _session(self.path)

    def query(self, sql: str, fmt: str = "TSVRaw") -> str:
        return str(self.session().query(sql, fmt))

    def release(self) -> None:
        _close_session(self.path)

    def stop(self) -> None:
        self.release()

    # ----- loading -------------------------------------------------------------------------
    def create(self) -> None:
        # A fresh directory: no leftovers of an earlier load in the sizes.
        self.release()
        shutil.rmtree(self.path, ignore_errors=True)
        (self.workdir / BATCH_FILE_NAME).unlink(missing_ok=True)
        con = self.session()
        for statement in read_sql_statements(self.folder() / "ddl.sql"):
            con.query(statement.format(**self.variant.settings))

    def loader(self) -> Loader:
        return ClickHouseLoader(self)

    def finish_load(self) -> None:
        """Merge every part into one (JSONBench does not, its server merges in the background;
        one part makes sizes and query times independent of merge timing), then wait until
        the replaced parts are gone from the disk."""
        con = self.session()
        con.query(f"OPTIMIZE TABLE {QUALIFIED} FINAL")
        self._wait_for_outdated_parts()

    def _wait_for_outdated_parts(self) -> None:
        deadline = time.monotonic() + OUTDATED_PARTS_WAIT
        while time.monotonic() < deadline and self._outdated_parts() > 0:
            time.sleep(0.2)

    def _outdated_parts(self) -> int:
        return int(self.query(
            f"SELECT count() FROM system.parts WHERE database = '{DATABASE}' "
            f"AND table = '{TABLE}' AND NOT active").strip() or 0)

    def native_load(self, files: list[Path]) -> None:
        """JSONBench's load_data.sh: ``INSERT INTO ... FORMAT JSONAsObject`` per file (here
        ``FROM INFILE``, read by chDB itself); a file whose insert fails is inserted again with
        the bad rows skipped (``input_format_allow_errors_num``)."""
        statements = read_sql_statements(self.folder() / "load.sql")
        first, second = statements[1], statements[2]
        con = self.session()
        for path in files:
            literal = _sql_string(str(Path(path).resolve()))
            try:
                con.query(first.replace("{path}", literal))
            except Exception as error:
                if not _is_content_error(error):
                    raise
                con.query(second.replace("{path}", literal))

    def count(self) -> int:
        return int(self.query(f"SELECT count() FROM {QUALIFIED}").strip())

    def storage(self) -> StorageSize:
        """JSONBench's figures from system.parts (active parts): total = bytes_on_disk, data =
        data_compressed_bytes, index = primary_key_size + marks_bytes (the sparse primary
        index file and the mark files that map it to the column files)."""
        self._wait_for_outdated_parts()
        text = self.query(
            "SELECT count(), sum(rows), sum(bytes_on_disk), sum(data_compressed_bytes), "
            "sum(data_uncompressed_bytes), sum(primary_key_size), sum(marks_bytes), "
            "sum(primary_key_bytes_in_memory), groupUniqArray(part_type), "
            "groupUniqArray(default_compression_codec) "
            f"FROM system.parts WHERE database = '{DATABASE}' AND table = '{TABLE}' AND active",
            "JSONCompact")
        row = orjson.loads(text)["data"][0]
        parts, rows, total, data, uncompressed, pk, marks, pk_memory, part_types, part_codecs = row
        codec = self.query(
            f"SELECT compression_codec FROM system.columns WHERE database = '{DATABASE}' "
            f"AND table = '{TABLE}' AND name = 'data'").strip()
        detail = {
            "parts": int(parts),
            "rows": int(rows),
            "part_types": sorted(part_types),
            "data_uncompressed_bytes": int(uncompressed),
            "primary_key_size": int(pk),
            "marks_bytes": int(marks),
            "primary_key_bytes_in_memory": int(pk_memory),
            "outdated_parts": self._outdated_parts(),
            "codec": codec or "none (size-aware default)",
            "parts_default_codec": sorted(part_codecs),
            "json_parameters": self.variant.settings.get("json_parameters", "").strip(" ,"),
        }
        return StorageSize(total=int(total), data=int(data), index=int(pk) + int(marks),
                           on_disk=_directory_size(self.workdir), detail=detail)

    # ----- queries -------------------------------------------------------------------------
    def queries(self) -> list[str]:
        return read_sql_statements(self.folder() / "queries.sql")

    def session_spec(self) -> dict[str, Any]:
        return {"path": str(self.path)}

    @classmethod
    def open_session(cls, spec: dict[str, Any]) -> QuerySession:
        return ClickHouseSession(spec)

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """Q2-Q5 filter on kind and commit.operation (the sort key's first columns): the
        primary key must appear in the plan with a real condition (not ``true``)."""
        if query_number not in INDEXED_QUERIES or not plan:
            return None
        section = plan.split("-- EXPLAIN PIPELINE")[0]
        match = re.search(r"PrimaryKey\s*\n(.*?)(?:\n\s*Ranges:|\Z)", section, re.S)
        if not match:
            return f"Q{query_number}: the plan does not use the primary key"
        condition = re.search(r"Condition:\s*(.+)", match.group(1))
        if condition is None or condition.group(1).strip() == "true":
            return f"Q{query_number}: the primary key is not used to filter (condition: true)"
        return None


SYSTEM = ClickHouseSystem
