"""PostgreSQL in the analytics workload: one JSONB column, a composite expression index on
the five JSONBench paths.

The server (managed cluster or the user's, by URL) is the engine's (``engine.py``); this
adapter creates its table in docbench's own database there, loads and queries it.

The DDL (``ddl.sql``) and the queries (``queries.sql``) are plain SQL files next to this module.
Loading is ``COPY ... FROM STDIN`` in CSV mode with control characters as quote and delimiter,
so the JSON text goes through unescaped; one COPY = one transaction = one batch.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QueryOutcome, QuerySession
from docbench.contracts.common import BatchRejected, StorageSize, Variant, directory_size
from docbench.core.prefetch import prefetched
from docbench.core.sqlfiles import read_ddl, step_name
from docbench.dataset.reader import iter_blocks
from docbench.systems.postgresql.engine import (
    COPY_OPTIONS,
    PostgreSQLEngine,
    copy_buffer,
    copy_line,
    error_message,
    is_content_error,
    psycopg_module,
)

log = logging.getLogger(__name__)


# Plan nodes that read through an index.
INDEX_NODE_TYPES = {"Index Scan", "Index Only Scan", "Bitmap Index Scan"}

# Statistics of one statement kept by pg_stat_statements (deltas are taken around a query).
_STATS_SQL = """
SELECT s.queryid, s.calls, s.total_plan_time + s.total_exec_time,
       s.shared_blks_hit, s.shared_blks_read, s.temp_blks_written,
       (SELECT a.query_id FROM pg_stat_activity a WHERE a.pid = pg_backend_pid())
FROM pg_stat_statements(false) s
WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND s.userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)
"""


def _plain(value: Any) -> Any:
    """Decimals (numeric) become int or float so rows compare and pickle plainly."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


# ----- loading ----------------------------------------------------------------------------


class PostgreSQLLoader(Loader):
    """COPY FROM STDIN, one savepoint per batch in one transaction per file: a refused batch
    leaves nothing behind, a load killed mid-file leaves nothing of that file."""

    # Lines per COPY data message: the server parses one chunk while the next is prepared.
    CHUNK_LINES = 2_000

    def __init__(self, conninfo: str, table: str) -> None:
        psycopg = psycopg_module()
        self.conn = psycopg.connect(conninfo, autocommit=True)
        # Without begin_file (the updates and storage workloads), a batch is its own
        # transaction and skips the wait for the WAL flush, as in a single-transaction bulk
        # load: a crash may lose the last fraction of a second of commits. A file's commit
        # (commit_file) waits for its flush.
        self.conn.execute("SET synchronous_commit = off")
        self.table = table
        self.sql = f"COPY {table} (data) FROM STDIN WITH ({COPY_OPTIONS})"
        # PostgreSQL 17+ skips the rows its input functions refuse (ON_ERROR ignore) and names
        # each in a NOTICE: the whole-file path then sends every block once.
        self.skips_natively = self.conn.info.server_version >= 170000
        self.sql_skipping = (f"COPY {table} (data) FROM STDIN WITH ({COPY_OPTIONS}, "
                             "ON_ERROR ignore, LOG_VERBOSITY verbose)")
        self._notices: list[str] = []
        self._data_type: str | None = None  # the table's column type, asked once
        self._probes_left = 0  # skipped lines of this file whose reason may still be asked
        self.conn.add_notice_handler(lambda diag: self._notices.append(diag.message_primary or ""))

    def begin_file(self, name: str) -> None:
        """A file is one transaction; each batch's own transaction block inside it is a
        savepoint (psycopg nests them so), rolled back alone when the batch is refused."""
        self.conn.execute("BEGIN")

    def commit_file(self) -> None:
        # The file's commit waits for its WAL flush (the batches inside do not): the
        # checkpoint written next must never claim a file a server crash could still lose.
        self.conn.execute("SET LOCAL synchronous_commit = on")
        self.conn.execute("COMMIT")

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        psycopg = psycopg_module()
        step = self.CHUNK_LINES
        try:
            with self.conn.transaction(), self.conn.cursor() as cur, cur.copy(self.sql) as copy:
                for start in range(0, len(lines), step):
                    copy.write(copy_buffer(lines[start:start + step]))
        except psycopg.Error as error:
            if is_content_error(error):
                raise BatchRejected(error_message(error)) from error
            raise

    # Bytes of a file per COPY statement on the whole-file path: a refused document costs a
    # re-send of its block (~9,000 documents), not a bisection of its batch.
    BLOCK_BYTES = 4 << 20
    MAX_REFUSED_PER_BLOCK = 32
    # Skipped lines per file whose reason is asked of the server one by one (ON_ERROR's
    # notices name the line, not the reason): a file of garbage costs no query per line.
    MAX_REASON_PROBES = 100

    def load_file_skipping(self, path: Path, documents: int) -> dict[int, str] | None:
        """The file's raw bytes, block by block, each block one COPY in a savepoint, the way
        ``\\copy`` streams a file (no line is split apart in Python). A refused document
        aborts its block's COPY, whose error names the line ("COPY t, line N"): the block is
        sent again without it, so each refusal costs one block, and its reason is
        PostgreSQL's own. An error that names no line keeps nothing of the file (the driver
        then bisects batches)."""
        psycopg = psycopg_module()
        refused: dict[int, str] = {}
        first = 1  # the file's line number of the block's first line
        self._probes_left = self.MAX_REASON_PROBES
        try:
            with self.conn.transaction():  # all of the file or nothing of it
                loaded = 0
                # The next block is read and scanned in a thread while the server parses
                # this one: without it the server idled ~8 ms per block (1 s per 10m file).
                for data, lines, quote in prefetched(_copy_blocks(path, self.BLOCK_BYTES)):
                    loaded += self._copy_block(data, lines, quote, first, refused)
                    first += lines
                if loaded + len(refused) != documents or first - 1 != documents:
                    raise BatchRejected(f"{path.name}: {loaded} loaded and {len(refused)} refused "
                                        f"of {documents} documents")
        except _NoLineNamed as error:
            raise BatchRejected(str(error)) from None
        except psycopg.Error as error:
            if is_content_error(error):
                raise BatchRejected(error_message(error)) from error
            raise
        return refused

    def _copy_block(self, data: bytes, lines: int, quote: bool, first: int,
                    refused: dict[int, str]) -> int:
        """COPY one block of whole lines (each line quoted when `quote`), again without each
        line PostgreSQL refuses; the number of rows loaded."""
        psycopg = psycopg_module()
        if self.skips_natively:
            try:
                return self._copy_block_skipping(data, lines, quote, first, refused)
            except psycopg.Error as error:
                if not is_content_error(error):
                    raise
                # A refusal ON_ERROR does not cover (a hard error, e.g. the stack depth limit):
                # the block goes again the other way.
        split: list[bytes] | None = None
        skipped: list[int] = []  # block line indexes (0-based) left out, ascending
        while True:
            if quote or skipped:
                if split is None:
                    split = data.split(b"\n")[:lines]
                gone = set(skipped)
                kept = [line for i, line in enumerate(split) if i not in gone]
                body = copy_buffer(kept) if kept else b""
            else:
                body = data
            if not body:
                return 0
            try:
                with self.conn.transaction(), self.conn.cursor() as cur:
                    with cur.copy(self.sql) as copy:
                        copy.write(body)
                    return cur.rowcount
            except psycopg.Error as error:
                if not is_content_error(error):
                    raise
                index = _block_index(copy_line(error), skipped, lines)
                if index is None:
                    raise _NoLineNamed(error_message(error)) from error
                if len(skipped) >= self.MAX_REFUSED_PER_BLOCK:
                    # (each one re-sends the block: a block of garbage is bisected instead)
                    raise _NoLineNamed(f"more than {self.MAX_REFUSED_PER_BLOCK} documents "
                                       "refused in one block") from error
                skipped = sorted([*skipped, index])
                refused[first + index] = error_message(error, where=False)

    def _copy_block_skipping(self, data: bytes, lines: int, quote: bool, first: int,
                             refused: dict[int, str]) -> int:
        """COPY one block with ON_ERROR ignore: the server skips each row its input function
        refuses and names its line in a NOTICE; each skipped line's reason is then PostgreSQL's
        own, from casting that line alone (refusals are rare: one cheap statement each)."""
        split = data.split(b"\n")[:lines]
        body = copy_buffer(split) if quote else data
        self._notices.clear()
        with self.conn.transaction(), self.conn.cursor() as cur:
            with cur.copy(self.sql_skipping) as copy:
                copy.write(body)
            loaded = cur.rowcount
        skipped = [int(found.group(1)) for notice in self._notices
                   if (found := _SKIPPED_LINE.match(notice))]
        for line in skipped:
            if self._probes_left > 0:
                self._probes_left -= 1
                refused[first + line - 1] = self._refusal_reason(split[line - 1])
            else:
                refused[first + line - 1] = ("skipped by COPY ... ON_ERROR ignore (data type "
                                             f"incompatibility; reasons asked for the first "
                                             f"{self.MAX_REASON_PROBES} of a file only)")
        if loaded + len(skipped) != lines:
            raise _NoLineNamed(f"COPY ... ON_ERROR loaded {loaded} and named {len(skipped)} "
                               f"skipped rows of a block of {lines} lines")
        return loaded

    def _refusal_reason(self, line: bytes) -> str:
        """PostgreSQL's error for this one line cast to the table's column type."""
        psycopg = psycopg_module()
        try:
            with self.conn.transaction():
                self.conn.execute(f"SELECT %s::{self._column_type()}",
                                  (line.decode("utf-8", "replace"),))
        except psycopg.Error as error:
            return error_message(error, where=False)
        return "skipped by COPY ... ON_ERROR ignore (accepted alone)"

    def _column_type(self) -> str:
        if self._data_type is None:
            row = self.conn.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                                    "WHERE attrelid = %s::regclass AND attname = 'data'",
                                    (self.table,)).fetchone()
            self._data_type = str(row[0]) if row else "jsonb"
        return self._data_type

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


# "skipping row due to data type incompatibility at line 2 for column "data": ..." (PG 17+)
_SKIPPED_LINE = re.compile(r"skipping row due to .* at line (\d+) for column")


def _copy_blocks(path: Path, size: int) -> Iterator[tuple[bytes, int, bool]]:
    """The file's blocks of whole lines as COPY data: the bytes, their line count, and
    whether the lines must be quoted. Raw bytes are the COPY data as they are unless a line
    holds the quote or delimiter byte or a CR (CSV would read them as framing)."""
    for block in iter_blocks(path, size=size):
        data = bytes(block)  # (the block's buffer is reused for the next one)
        lines = data.count(b"\n") + (not data.endswith(b"\n"))
        yield data, lines, b"\x01" in data or b"\x02" in data or b"\r" in data


class _NoLineNamed(Exception):
    """PostgreSQL refused a block without naming the line."""


def _block_index(stream_line: int | None, skipped: list[int], lines: int) -> int | None:
    """The block's line index of the COPY stream's 1-based line, where the stream is the block
    without the ``skipped`` line indexes (ascending); None when there is no such line."""
    if stream_line is None or stream_line < 1:
        return None
    index = stream_line - 1
    for gone in skipped:
        if gone <= index:
            index += 1
    return index if index < lines else None


# ----- query sessions ---------------------------------------------------------------------


class PostgreSQLSession(QuerySession):
    """A psycopg connection in the query worker.

    engine_seconds = planning + execution time of the query as pg_stat_statements recorded it
    (the delta of its entry around the query); None when pg_stat_statements is not available.
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        psycopg = psycopg_module()
        self.spec = spec
        self.conn = psycopg.connect(spec_conninfo(spec), autocommit=True)
        timeout = spec.get("timeout")
        if timeout:
            self.conn.execute(f"SET statement_timeout = {max(1, int(float(timeout) * 1000))}")
        # Optional planner/session settings (e.g. {"enable_seqscan": "off"} to study plans).
        for name, value in (spec.get("session_settings") or {}).items():
            self.conn.execute("SELECT set_config(%s, %s, false)", (name, str(value)))
        self.backend_pid = int(self.conn.execute("SELECT pg_backend_pid()").fetchone()[0])
        self._own_query_ids: set[int] = set()
        self.stats_available = self._probe_stats()

    # pg_stat_statements -----------------------------------------------------------------
    def _probe_stats(self) -> bool:
        try:
            self._snapshot()
            self._snapshot()  # the second one records the first: learn our own query id
            return True
        except Exception:  # noqa: BLE001 - not loaded, not installed, no permission
            return False

    def _snapshot(self) -> dict[int, tuple[float, ...]]:
        rows = self.conn.execute(_STATS_SQL).fetchall()
        stats: dict[int, tuple[float, ...]] = {}
        for queryid, calls, ms, hit, read, temp, own in rows:
            if own is not None:
                self._own_query_ids.add(int(own))
            if queryid is None:
                continue
            old = stats.get(int(queryid), (0, 0.0, 0, 0, 0))
            stats[int(queryid)] = (old[0] + calls, old[1] + ms, old[2] + hit, old[3] + read,
                                   old[4] + temp)
        return stats

    def _delta(self, before: dict[int, tuple[float, ...]],
               after: dict[int, tuple[float, ...]]) -> tuple[float, ...] | None:
        best = None
        for queryid, now in after.items():
            if queryid in self._own_query_ids:
                continue
            old = before.get(queryid, (0, 0.0, 0, 0, 0))
            if now[0] - old[0] >= 1:
                delta = tuple(n - o for n, o in zip(now, old, strict=True))
                if best is None or delta[1] > best[1]:
                    best = delta
        return best

    # QuerySession -----------------------------------------------------------------------
    def execute(self, query_number: int, text: str) -> QueryOutcome:
        before = self._snapshot() if self.stats_available else None
        rows = self.conn.execute(text).fetchall()
        outcome = QueryOutcome(rows=[tuple(_plain(v) for v in row) for row in rows])
        if before is not None:
            with contextlib.suppress(Exception):
                delta = self._delta(before, self._snapshot())
                if delta is not None:
                    outcome.engine_seconds = delta[1] / 1000.0
                    outcome.extra.update({"shared_blks_hit": int(delta[2]),
                                          "shared_blks_read": int(delta[3]),
                                          "temp_blks_written": int(delta[4])})
        return outcome

    def explain(self, query_number: int, text: str) -> str | None:
        plan = self.conn.execute(f"EXPLAIN (FORMAT JSON) {text}").fetchone()[0]
        if isinstance(plan, str):
            plan = json.loads(plan)
        return json.dumps(plan, indent=1)

    def engine_pids(self) -> list[int]:
        # The backend serving this connection. Parallel workers are separate, short-lived
        # processes started per query: their memory and reads are not included (README).
        # A backend PID of another machine means nothing here.
        if not self.spec.get("local", True):
            return []
        try:
            cmdline = Path(f"/proc/{self.backend_pid}/cmdline").read_bytes()
        except OSError:
            return []
        return [self.backend_pid] if cmdline.startswith(b"postgres") else []

    def cancel(self) -> None:
        with contextlib.suppress(Exception):
            cancel = getattr(self.conn, "cancel_safe", None) or self.conn.cancel
            cancel()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


# ----- the adapter ------------------------------------------------------------------------

VARIANTS: list[Variant] = [
    Variant("pglz", "JSONB column, TOAST compression pglz (PostgreSQL's default)",
            role="default", settings={"compression": "pglz"}),
    Variant("lz4", "JSONB column, TOAST compression lz4", role="best",
            settings={"compression": "lz4"}),
]


class PostgreSQLAnalytics(AnalyticsAdapter):
    variants: ClassVar[list[Variant]] = VARIANTS
    retains_structure = True
    # A refused batch is re-sent as ~2x its size while bisecting; 20k documents (~10 MB)
    # keep that under a second and already amortise the per-COPY/commit overhead.
    load_batch_size = 20_000
    time_precision_us = 1
    engine: PostgreSQLEngine

    def __init__(self, engine: PostgreSQLEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.table = f"bluesky_{variant.name}"
        self.index = f"{self.table}_paths"
        self.compression = str(variant.settings.get("compression", "pglz"))

    # ----- loading -----------------------------------------------------------------------
    def _ddl(self) -> tuple[list[str], list[str]]:
        return read_ddl(self.engine.system_file("ddl.sql"), table=self.table,
                        compression=self.compression)

    def create(self) -> None:
        conn = self.engine.admin_connection()
        for statement in self._ddl()[0]:
            conn.execute(statement)

    def loader(self) -> Loader:
        return PostgreSQLLoader(self.engine.conninfo(), self.table)

    def finish_load(self) -> None:
        conn = self.engine.admin_connection()
        for statement in self._ddl()[1]:
            self.finish_step(step_name(statement), lambda s=statement: conn.execute(s))

    def native_load(self, files: list[Path]) -> None:
        """What a person types: ``psql -c "\\copy t (data) FROM 'file' WITH (...)"`` per file.

        A file with a document PostgreSQL refuses is lost as a whole (one transaction per
        file), as it is by hand; a warning is logged and the next file is loaded.
        """
        params = self.engine.conninfo_params()
        env = {**os.environ, "PGCLIENTENCODING": "UTF8"}
        password = params.pop("password", None)
        if password:
            env["PGPASSWORD"] = str(password)  # not on the command line
        from psycopg.conninfo import make_conninfo

        psql = self.engine.psql_path()
        for path in files:
            source = _copy_source(path)
            command = f"\\copy {self.table} (data) FROM {source} WITH ({COPY_OPTIONS})"
            out = subprocess.run([psql, "-X", "-q", "-v", "ON_ERROR_STOP=1",
                                  "-d", make_conninfo(**params), "-c", command],
                                 capture_output=True, text=True, env=env, check=False)
            if out.returncode == 0:
                continue
            message = " ".join(out.stderr.split())[:500]
            if out.returncode in (1, 3) and "ERROR:" in out.stderr:
                # As by hand: one refused document loses the whole file (its transaction),
                # and the next file is loaded. Connection or psql failures are raised.
                log.warning("psql \\copy of %s refused, file not loaded: %s", path.name, message)
                continue
            raise RuntimeError(f"psql \\copy of {path.name} failed: {message}")

    def count(self) -> int:
        return int(self.engine.admin_connection().execute(
            f"SELECT count(*) FROM {self.table}").fetchone()[0])

    def storage(self) -> StorageSize:
        conn = self.engine.admin_connection()
        row = conn.execute(
            "SELECT pg_total_relation_size(c.oid), pg_table_size(c.oid), pg_indexes_size(c.oid),"
            " pg_relation_size(c.oid),"
            " CASE WHEN c.reltoastrelid <> 0 THEN pg_total_relation_size(c.reltoastrelid) END,"
            " pg_database_size(current_database())"
            " FROM pg_class c WHERE c.oid = %s::regclass", (self.table,)).fetchone()
        total, data, index, heap, toast, database = (int(v) if v is not None else None
                                                     for v in row)
        compressed = conn.execute(
            f"SELECT count(*) FILTER (WHERE pg_column_compression(data) IS NOT NULL), count(*)"
            f" FROM {self.table}").fetchone()
        detail: dict[str, Any] = {
            "heap_bytes": heap, "toast_bytes": toast, "database_bytes": database,
            "compression": self.compression,
            "compressed_documents": int(compressed[0]), "documents": int(compressed[1]),
        }
        on_disk = None
        data_dir = self.engine.data_dir
        if data_dir is not None:
            on_disk = directory_size(data_dir)
            detail["wal_bytes"] = directory_size(data_dir / "pg_wal")
        return StorageSize(total=total, data=data, index=index, on_disk=on_disk, detail=detail)

    # ----- queries -----------------------------------------------------------------------
    def sql_names(self) -> dict[str, str]:
        return {"table": self.table}

    def session_spec(self) -> dict[str, Any]:
        params = self.engine.conninfo_params()
        spec: dict[str, Any] = {"table": self.table, "index": self.index,
                                "local": self.engine.is_local()}
        password_file = self.engine.password_file
        if password_file is not None:
            # The password stays in its file (mode 0600); the worker reads it.
            params.pop("password", None)
            spec["password_file"] = str(password_file)
        spec["conninfo"] = params
        return spec

    @classmethod
    def open_session(cls, spec: dict[str, Any]) -> QuerySession:
        return PostgreSQLSession(spec)

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """Q2-Q5 filter on the indexed paths: warn unless a scan of our index is in the plan.
        Q1 reads every document, so a (parallel) sequential scan is what it should do."""
        if query_number == 1:
            return None
        if not plan:
            return f"Q{query_number}: no plan to check"
        try:
            nodes = list(_plan_nodes(json.loads(plan)))
        except (ValueError, TypeError):
            return f"Q{query_number}: the plan is not EXPLAIN JSON"
        if any(n.get("Node Type") in INDEX_NODE_TYPES and n.get("Index Name") == self.index
               for n in nodes):
            return None
        scans = sorted({f"{n.get('Node Type')}"
                        + (f" on {n['Index Name']}" if n.get("Index Name") else "")
                        for n in nodes if "Scan" in str(n.get("Node Type"))})
        return (f"Q{query_number}: the planner does not use the index {self.index} "
                f"(scans: {', '.join(scans) or 'none'})")


# ----- helpers ----------------------------------------------------------------------------


def spec_conninfo(spec: dict[str, Any]) -> str:
    """The conninfo of a session spec, with the password read from its file."""
    from psycopg.conninfo import make_conninfo

    params = dict(spec["conninfo"])
    if spec.get("password_file"):
        params["password"] = Path(spec["password_file"]).read_text().strip()
    return make_conninfo(**params)


def _plan_nodes(plan: Any):
    """Every node of an EXPLAIN (FORMAT JSON) document."""
    if isinstance(plan, list):
        for item in plan:
            yield from _plan_nodes(item)
    elif isinstance(plan, dict):
        if "Node Type" in plan:
            yield plan
        for key in ("Plan", "Plans"):
            if key in plan:
                yield from _plan_nodes(plan[key])


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _copy_source(path: Path) -> str:
    """The FROM clause of psql's \\copy: the file, or a decompressing program for it."""
    programs = {".gz": "gzip -dc", ".zst": "zstd -dc", ".zstd": "zstd -dc", ".lz4": "lz4 -dc"}
    program = programs.get(path.suffix)
    if program is None:
        return _sql_literal(str(path))
    return "PROGRAM " + _sql_literal(f"{program} {shlex.quote(str(path))}")


ADAPTER = PostgreSQLAnalytics

__all__ = ["ADAPTER", "VARIANTS", "PostgreSQLAnalytics", "PostgreSQLLoader", "PostgreSQLSession",
           "copy_buffer"]
