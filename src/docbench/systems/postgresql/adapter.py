"""PostgreSQL: one JSONB column, a composite expression index on the five JSONBench paths.

Two ways to run:

* **managed** (default): docbench initdb's its own cluster in the work directory and runs it
  as an unprivileged user on 127.0.0.1 and a free port (see ``server.py``);
* **URL** (``System(url=...)``, ``docbench run --postgresql-url``): the user's server. docbench
  creates and uses its own database ``docbench`` there and touches nothing else; it cannot
  restart that server, so cold runs are not cold (``can_restart = False``).

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
from decimal import Decimal
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
    command_version,
    directory_size,
)
from docbench.systems.postgresql import server as pgserver

log = logging.getLogger(__name__)

DATABASE = "docbench"
FINISH_MARKER = "-- @finish_load"
INSTALL_HINT = "docbench setup postgresql  (apt-get install postgresql postgresql-contrib)"

# CSV with \x01 as quote and \x02 as delimiter: neither can appear unescaped in valid JSON,
# and in CSV mode a backslash is an ordinary character, so JSON needs no escaping at all.
# Every line is sent quoted, so a raw carriage return (JSON whitespace) or a line that reads
# "\." stays data; a \x01 inside a line is doubled (it is invalid JSON and gets refused).
COPY_OPTIONS = "FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02'"

# SQLSTATE classes that mean "the engine refused the content": 22 data exception (invalid
# JSON, \u0000, invalid UTF-8, numeric overflow, bad COPY data), 23 integrity constraint,
# 54 program limit exceeded (nesting beyond the stack depth limit, jsonb too large).
CONTENT_SQLSTATE_CLASSES = ("22", "23", "54")

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


def _psycopg():
    import psycopg

    return psycopg


def _render(sql: str, table: str, compression: str = "pglz") -> str:
    # Plain replacement, not str.format: SQL is full of braces (regex quantifiers, arrays).
    return sql.replace("{table}", table).replace("{compression}", compression)


def _is_content_error(error: Exception) -> bool:
    state = getattr(error, "sqlstate", None) or ""
    return state[:2] in CONTENT_SQLSTATE_CLASSES


def _error_message(error: Exception) -> str:
    """PostgreSQL's own words: primary message, detail, and where (COPY line)."""
    diag = getattr(error, "diag", None)
    if diag is None or not diag.message_primary:
        return str(error).strip()
    parts = [diag.message_primary]
    if diag.message_detail:
        parts.append(diag.message_detail)
    if diag.context:
        # "JSON data, line 1: ...\nCOPY t, line 5, column data: "<the document>"": keep the
        # COPY line number, not the document again.
        where = [ln for ln in diag.context.splitlines() if ln.startswith("COPY")]
        if where:
            parts.append(where[0].split(", column")[0])
    text = " | ".join(parts)
    return f"{text} [SQLSTATE {error.sqlstate}]" if getattr(error, "sqlstate", None) else text


def _plain(value: Any) -> Any:
    """Decimals (numeric) become int or float so rows compare and pickle plainly."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def copy_buffer(lines: list[bytes]) -> bytes:
    """The COPY data for these raw lines: every line one quoted CSV field."""
    if any(b"\x01" in line for line in lines):
        lines = [line.replace(b"\x01", b"\x01\x01") for line in lines]
    return b"\x01" + b"\x01\n\x01".join(lines) + b"\x01\n"


def _is_local_host(conninfo: dict[str, Any]) -> bool:
    host = str(conninfo.get("host") or conninfo.get("hostaddr") or "")
    return host == "" or host.startswith("/") or host in {"localhost", "127.0.0.1", "::1"}


# ----- loading ----------------------------------------------------------------------------


class PostgreSQLLoader(Loader):
    """COPY FROM STDIN, one transaction per batch: a refused batch leaves nothing behind."""

    # Lines per COPY data message: the server parses one chunk while the next is prepared.
    CHUNK_LINES = 2_000

    def __init__(self, conninfo: str, table: str) -> None:
        psycopg = _psycopg()
        self.conn = psycopg.connect(conninfo, autocommit=True)
        # A batch is still atomic (one transaction); only the wait for the WAL flush at each
        # commit is skipped, as in a single-transaction bulk load. A server crash loses
        # nothing that was committed; an OS crash may lose the last fraction of a second.
        self.conn.execute("SET synchronous_commit = off")
        self.sql = f"COPY {table} (data) FROM STDIN WITH ({COPY_OPTIONS})"

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        psycopg = _psycopg()
        step = self.CHUNK_LINES
        try:
            with self.conn.transaction(), self.conn.cursor() as cur, cur.copy(self.sql) as copy:
                for start in range(0, len(lines), step):
                    copy.write(copy_buffer(lines[start:start + step]))
        except psycopg.Error as error:
            if _is_content_error(error):
                raise BatchRejected(_error_message(error)) from error
            raise

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


# ----- query sessions ---------------------------------------------------------------------


class PostgreSQLSession(QuerySession):
    """A psycopg connection in the query worker.

    engine_seconds = planning + execution time of the query as pg_stat_statements recorded it
    (the delta of its entry around the query); None when pg_stat_statements is not available.
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        psycopg = _psycopg()
        self.spec = spec
        self.conn = psycopg.connect(PostgreSQL.spec_conninfo(spec), autocommit=True)
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


# ----- the system -------------------------------------------------------------------------


class PostgreSQL(System):
    name = "postgresql"
    display_name = "PostgreSQL"
    embedded = False
    retains_structure = True
    variants: ClassVar[list[Variant]] = [
        Variant("pglz", "JSONB column, TOAST compression pglz (PostgreSQL's default)",
                role="default", settings={"compression": "pglz"}),
        Variant("lz4", "JSONB column, TOAST compression lz4", role="best",
                settings={"compression": "lz4"}),
    ]
    # A refused batch is re-sent as ~2x its size while bisecting; 20k documents (~10 MB)
    # keep that under a second and already amortise the per-COPY/commit overhead.
    load_batch_size = 20_000
    time_precision_us = 1
    notes = ("PostgreSQL JSONB + composite expression btree index on the five paths; managed "
             "cluster (initdb, 127.0.0.1, own port) or the user's server via URL. TOAST "
             "compresses only rows over ~2 kB, so most documents are stored uncompressed.")
    # Whether restart() can restart the server (False for a user's server reached by URL).
    can_restart: bool = True

    def __init__(self, workdir: Path, variant: Variant, url: str | None = None) -> None:
        super().__init__(workdir, variant, url)
        self.table = f"bluesky_{variant.name}"
        self.index = f"{self.table}_paths"
        self.compression = str(variant.settings.get("compression", "pglz"))
        self.cluster = None if url else pgserver.Cluster(workdir)
        self.can_restart = url is None
        self._conn = None  # the parent's connection to our database

    # ----- discovery -------------------------------------------------------------------
    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            _psycopg()
        except ImportError:
            return Availability(False, reason="psycopg is not installed",
                                install_hint="pip install 'psycopg[binary]'")
        if url:
            try:
                with _psycopg().connect(url, connect_timeout=5) as conn:
                    version = conn.execute("SELECT version()").fetchone()[0]
                return Availability(True, version=version.split(",")[0])
            except Exception as error:  # noqa: BLE001
                return Availability(False, reason=f"cannot connect to {cls._redact(url)}: "
                                                  f"{' '.join(str(error).split())}")
        bin_dir = pgserver.find_bin_dir()
        if bin_dir is None:
            return Availability(False, reason="no PostgreSQL server binaries under "
                                              "/usr/lib/postgresql/*/bin", install_hint=INSTALL_HINT)
        version = command_version([str(bin_dir / "postgres"), "--version"])
        if version is None:
            return Availability(False, reason=f"{bin_dir}/postgres does not run",
                                install_hint=INSTALL_HINT)
        return Availability(True, version=version.replace("postgres (PostgreSQL) ", "PostgreSQL "))

    @staticmethod
    def _redact(url: str) -> str:
        return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)

    def versions(self) -> dict[str, str]:
        found = {}
        with contextlib.suppress(Exception):
            found["postgresql"] = self._connection().execute("SHOW server_version").fetchone()[0]
        if "postgresql" not in found:
            version = self.version()
            if version:
                found["postgresql"] = version
        found["psycopg"] = _psycopg().__version__
        return found

    # ----- connections -------------------------------------------------------------------
    def _conninfo_dict(self, dbname: str = DATABASE) -> dict[str, Any]:
        from psycopg.conninfo import conninfo_to_dict

        if self.url:
            params = conninfo_to_dict(self.url)
            params["dbname"] = dbname
            params.setdefault("connect_timeout", 10)
        else:
            assert self.cluster is not None
            params = conninfo_to_dict(self.cluster.connection(dbname).conninfo())
        params["client_encoding"] = "UTF8"
        params.setdefault("application_name", "docbench")
        return params

    def conninfo(self, dbname: str = DATABASE) -> str:
        from psycopg.conninfo import make_conninfo

        return make_conninfo(**self._conninfo_dict(dbname))

    def _connection(self):
        if self._conn is None or self._conn.closed:
            self._conn = _psycopg().connect(self.conninfo(), autocommit=True)
        return self._conn

    def _ensure_database(self) -> None:
        """Create docbench's own database (UTF8, C collation) if it is not there."""
        psycopg = _psycopg()
        maintenance = "postgres"
        if self.url:
            from psycopg.conninfo import conninfo_to_dict

            # The URL's database, unless it names ours (which may not exist yet).
            given = conninfo_to_dict(self.url).get("dbname")
            maintenance = given if given and given != DATABASE else "postgres"
        with psycopg.connect(self.conninfo(maintenance), autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                  (DATABASE,)).fetchone()
            if not exists:
                conn.execute(f"CREATE DATABASE {DATABASE} ENCODING 'UTF8' TEMPLATE template0 "
                             "LC_COLLATE 'C' LC_CTYPE 'C'")
        with psycopg.connect(self.conninfo(), autocommit=True) as conn:
            encoding = conn.execute("SHOW server_encoding").fetchone()[0]
            if encoding.upper() not in {"UTF8", "UTF-8"}:
                raise RuntimeError(f"database {DATABASE!r} has encoding {encoding}, not UTF8; "
                                   f"drop it or let docbench create it")
            # Engine-side query timings; needs the library preloaded (managed: always).
            with contextlib.suppress(psycopg.Error):
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")

    # ----- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        if self.cluster is not None:
            self.cluster.start()
        self._ensure_database()

    def stop(self) -> None:
        self.release()
        if self.cluster is not None:
            self.cluster.stop()

    def restart(self) -> None:
        """Managed: stop (fast shutdown) and start again, so caches are empty. A server reached
        by URL cannot be restarted: nothing happens (``can_restart`` is False)."""
        if not self.can_restart or self.cluster is None:
            return
        self.release()
        self.cluster.stop()
        self.cluster.start()

    def is_alive(self) -> bool:
        if self.cluster is not None:
            return self.cluster.accepting()
        try:
            with _psycopg().connect(self.conninfo(), connect_timeout=5) as conn:
                conn.execute("SELECT 1")
            return True
        except Exception:  # noqa: BLE001
            return False

    def release(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    # ----- loading -----------------------------------------------------------------------
    def _ddl(self) -> tuple[list[str], list[str]]:
        text = _render((self.folder() / "ddl.sql").read_text(), self.table, self.compression)
        create, _, finish = text.partition(FINISH_MARKER)
        return _split_sql(create), _split_sql(finish)

    def create(self) -> None:
        conn = self._connection()
        for statement in self._ddl()[0]:
            conn.execute(statement)

    def loader(self) -> Loader:
        return PostgreSQLLoader(self.conninfo(), self.table)

    def finish_load(self) -> None:
        conn = self._connection()
        for statement in self._ddl()[1]:
            conn.execute(statement)

    def native_load(self, files: list[Path]) -> None:
        """What a person types: ``psql -c "\\copy t (data) FROM 'file' WITH (...)"`` per file.

        A file with a document PostgreSQL refuses is lost as a whole (one transaction per
        file), as it is by hand; a warning is logged and the next file is loaded.
        """
        params = self._conninfo_dict()
        env = {**os.environ, "PGCLIENTENCODING": "UTF8"}
        password = params.pop("password", None)
        if password:
            env["PGPASSWORD"] = str(password)  # not on the command line
        from psycopg.conninfo import make_conninfo

        psql = self._psql()
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

    def _psql(self) -> str:
        bin_dir = self.cluster.bin_dir if self.cluster else pgserver.find_bin_dir()
        if bin_dir is not None and (bin_dir / "psql").exists():
            return str(bin_dir / "psql")
        return "psql"

    def count(self) -> int:
        return int(self._connection().execute(f"SELECT count(*) FROM {self.table}").fetchone()[0])

    def storage(self) -> StorageSize:
        conn = self._connection()
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
        if self.cluster is not None:
            on_disk = directory_size(self.cluster.data_dir)
            detail["wal_bytes"] = directory_size(self.cluster.data_dir / "pg_wal")
        return StorageSize(total=total, data=data, index=index, on_disk=on_disk, detail=detail)

    # ----- queries -----------------------------------------------------------------------
    def queries(self) -> list[str]:
        text = _render((self.folder() / "queries.sql").read_text(), self.table)
        return _split_sql(text)

    def session_spec(self) -> dict[str, Any]:
        params = self._conninfo_dict()
        spec: dict[str, Any] = {"table": self.table, "index": self.index,
                                "local": _is_local_host(params)}
        if self.cluster is not None:
            # The password stays in its file (mode 0600); the worker reads it.
            params.pop("password", None)
            spec["password_file"] = str(self.cluster.password_file)
        spec["conninfo"] = params
        return spec

    @staticmethod
    def spec_conninfo(spec: dict[str, Any]) -> str:
        from psycopg.conninfo import make_conninfo

        params = dict(spec["conninfo"])
        if spec.get("password_file"):
            params["password"] = Path(spec["password_file"]).read_text().strip()
        return make_conninfo(**params)

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


def _split_sql(text: str) -> list[str]:
    """Statements of a rendered .sql text, split as base.read_sql_statements splits a file."""
    statements = []
    for chunk in text.split(";\n"):
        lines = [ln for ln in chunk.strip().splitlines() if not ln.strip().startswith("--")]
        statement = "\n".join(lines).strip().rstrip(";").strip()
        if statement:
            statements.append(statement)
    return statements


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


SYSTEM = PostgreSQL

__all__ = ["SYSTEM", "PostgreSQL", "PostgreSQLLoader", "PostgreSQLSession", "copy_buffer"]

