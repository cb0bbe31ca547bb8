"""MariaDB: one JSON (LONGTEXT + JSON_VALID) column, the five JSONBench paths as VIRTUAL
generated columns, one composite index on them.

Two ways to run:

* **managed** (default): docbench runs ``mariadb-install-db`` into its work directory and
  ``mariadbd --no-defaults`` as an unprivileged user on 127.0.0.1 and a free port
  (``server.py``);
* **URL** (``System(url="mysql://user:password@host:3306/db")``, ``--mariadb-url``): the
  user's server. docbench creates and uses its own database ``docbench`` there and touches
  nothing else; it cannot restart that server (``can_restart = False``).

Loading is ``LOAD DATA LOCAL INFILE`` of the batch (from an in-memory file) with a field
terminator that cannot occur in JSON and no escape character, so each raw line is the column
value, in one transaction per batch. With LOCAL, MariaDB turns per-row errors into warnings
and skips the row: any warning makes the batch roll back and be refused.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import subprocess
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

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
    read_sql_statements,
)
from docbench.systems.mariadb import server as mserver

log = logging.getLogger(__name__)

DATABASE = "docbench"
FINISH_MARKER = "-- @finish_load"
INSTALL_HINT = "docbench setup mariadb  (apt-get install mariadb-server mariadb-client)"

# Each line is one field: \x01 cannot appear raw in valid JSON (a line with one has two
# fields -> a warning -> refused); no enclosing and no escape character, so backslashes are
# data; lines end at \n only (a raw \r, JSON whitespace, stays in the document).
LOAD_OPTIONS = ("CHARACTER SET utf8mb4 FIELDS TERMINATED BY 0x01 ENCLOSED BY '' ESCAPED BY '' "
                "LINES STARTING BY '' TERMINATED BY '\\n' (doc)")


def _pymysql():
    import pymysql

    return pymysql


def _render(sql: str, table: str, table_options: str = "") -> str:
    return sql.replace("{table}", table).replace("{table_options}", table_options)


def _split_sql(text: str) -> list[str]:
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as handle:
        handle.write(text)
    try:
        return read_sql_statements(Path(handle.name))
    finally:
        os.unlink(handle.name)


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def parse_url(url: str) -> dict[str, Any]:
    """mysql://user:password@host:port/db (or mariadb://) -> pymysql connect parameters."""
    parts = urlsplit(url)
    if parts.scheme not in {"mysql", "mariadb", "mysql+pymysql"}:
        raise ValueError(f"not a mysql:// or mariadb:// URL: {parts.scheme}://...")
    return {"host": parts.hostname or "127.0.0.1", "port": parts.port or 3306,
            "user": unquote(parts.username or "root"),
            "password": unquote(parts.password or "")}


def _is_local_host(host: str) -> bool:
    return host in {"localhost", "127.0.0.1", "::1"}


def connect(params: dict[str, Any], database: str | None = DATABASE, **extra: Any):
    pymysql = _pymysql()
    return pymysql.connect(**params, database=database, charset="utf8mb4", autocommit=True,
                           connect_timeout=10, **extra)


# ----- loading ----------------------------------------------------------------------------


def _problems(warnings: list[tuple]) -> list[str]:
    """MariaDB's warnings of a refused LOAD DATA, the reason first: the CHECK (JSON_VALID)
    failure and json_valid's note saying why; the same parse error reported again by the
    virtual columns' JSON_EXTRACT is left out."""
    found = [(str(level), int(code), str(message)) for level, code, message in warnings]
    if any("json_valid" in message for _, _, message in found):
        found = [w for w in found if "'json_extract'" not in w[2]]
    found.sort(key=lambda w: w[1] != 4025)
    return [f"{level} {code}: {message}" for level, code, message in found]



class MariaDBLoader(Loader):
    """LOAD DATA LOCAL INFILE of each batch from a memfd, one transaction per batch."""

    def __init__(self, params: dict[str, Any], table: str) -> None:
        self.conn = connect(params, local_infile=True)
        self.table = table
        with self.conn.cursor() as cur:
            # The batch is refused on a warning; make sure none is hidden.
            cur.execute("SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,"
                        "NO_ENGINE_SUBSTITUTION', sql_notes = 1")

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        fd = os.memfd_create("docbench-batch")
        try:
            with os.fdopen(os.dup(fd), "wb", buffering=0) as handle:
                handle.write(b"\n".join(lines) + b"\n")
            path = f"/proc/{os.getpid()}/fd/{fd}"
            self._load(path, len(lines))
        finally:
            os.close(fd)

    def _load(self, path: str, expected: int) -> None:
        pymysql = _pymysql()
        conn = self.conn
        try:
            conn.begin()
            with conn.cursor() as cur:
                loaded = cur.execute(f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE {self.table} "
                                     f"{LOAD_OPTIONS}")
                cur.execute("SELECT @@warning_count")
                warnings = int(cur.fetchone()[0])
                problems: list[str] = []
                if warnings:
                    cur.execute("SHOW WARNINGS LIMIT 5")
                    problems = _problems(cur.fetchall())
                elif loaded != expected:
                    problems = [f"{loaded} of {expected} lines loaded"]
            if problems:
                conn.rollback()
                raise BatchRejected(" | ".join(problems))
            conn.commit()
        except pymysql.err.DataError as error:
            with contextlib.suppress(Exception):
                conn.rollback()
            raise BatchRejected(f"{error.args[0]}: {error.args[1]}") from error
        except pymysql.err.IntegrityError as error:
            with contextlib.suppress(Exception):
                conn.rollback()
            raise BatchRejected(f"{error.args[0]}: {error.args[1]}") from error

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


# ----- query sessions ---------------------------------------------------------------------


class MariaDBSession(QuerySession):
    """A PyMySQL connection in the query worker.

    engine_seconds = the statement's duration from MariaDB's session profiling
    (``SET profiling = 1``; ``SHOW PROFILES``): cheap, no performance_schema needed.
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.params = MariaDB.spec_params(spec)
        self.conn = connect(self.params)
        with self.conn.cursor() as cur:
            timeout = spec.get("timeout")
            if timeout:
                cur.execute(f"SET SESSION max_statement_time = {float(timeout):.3f}")
            for name, value in (spec.get("session_settings") or {}).items():
                if not re.fullmatch(r"[a-z_]+", name):
                    raise ValueError(f"bad session setting name {name!r}")
                cur.execute(f"SET SESSION {name} = %s", (value,))
            try:
                cur.execute("SET SESSION profiling = 1, profiling_history_size = 10")
                self.profiling = True
            except Exception:  # noqa: BLE001 - a server built without profiling
                self.profiling = False
        self.thread_id = self.conn.thread_id()

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        with self.conn.cursor() as cur:
            cur.execute(text)
            rows = cur.fetchall()
            outcome = QueryOutcome(rows=[tuple(_plain(v) for v in row) for row in rows])
            if self.profiling:
                with contextlib.suppress(Exception):
                    cur.execute("SHOW PROFILES")
                    profiles = cur.fetchall()
                    if profiles:
                        outcome.engine_seconds = float(profiles[-1][1])
        return outcome

    def explain(self, query_number: int, text: str) -> str | None:
        with self.conn.cursor() as cur:
            cur.execute(f"EXPLAIN FORMAT=JSON {text}")
            plan = cur.fetchone()[0]
        return plan if isinstance(plan, str) else plan.decode()

    def engine_pids(self) -> list[int]:
        pid = self.spec.get("server_pid")
        if pid and Path(f"/proc/{pid}").exists():
            return [int(pid)]
        return []

    def cancel(self) -> None:
        with contextlib.suppress(Exception):
            other = connect(self.params, database=None)
            try:
                with other.cursor() as cur:
                    cur.execute(f"KILL QUERY {int(self.thread_id)}")
            finally:
                other.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


# ----- the system -------------------------------------------------------------------------


class MariaDB(System):
    name = "mariadb"
    display_name = "MariaDB"
    embedded = False
    retains_structure = True
    runs_by_default = False
    url_example = "mysql://user:password@host:3306/db"
    variants: ClassVar[list[Variant]] = [
        Variant("default", "JSON (LONGTEXT) column, InnoDB ROW_FORMAT=DYNAMIC, uncompressed",
                role="default", settings={"table_options": "ROW_FORMAT=DYNAMIC"}),
        Variant("compressed", "JSON (LONGTEXT) column, InnoDB page compression (zlib)",
                role="best", settings={"table_options": "ROW_FORMAT=DYNAMIC PAGE_COMPRESSED=1"}),
    ]
    load_batch_size = 20_000
    time_precision_us = 1
    notes = ("MariaDB JSON (LONGTEXT + JSON_VALID) + VIRTUAL generated columns for the five "
             "paths with one composite InnoDB index; managed server (mariadb-install-db, "
             "127.0.0.1, own port) or the user's server via URL. JSON nested deeper than 32 "
             "levels is refused.")

    def __init__(self, workdir: Path, variant: Variant, url: str | None = None) -> None:
        super().__init__(workdir, variant, url)
        self.table = f"bluesky_{variant.name}"
        self.index = f"{self.table}_paths"
        self.table_options = str(variant.settings.get("table_options", ""))
        self.server = None if url else mserver.MariaDBServer(workdir)
        self.can_restart = url is None
        self._conn = None

    # ----- discovery -------------------------------------------------------------------
    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            pymysql = _pymysql()
        except ImportError:
            return Availability(False, reason="PyMySQL is not installed",
                                install_hint="pip install PyMySQL")
        if url:
            try:
                conn = pymysql.connect(**parse_url(url), connect_timeout=5)
                try:
                    with conn.cursor() as cur:
                        cur.execute("SELECT VERSION()")
                        version = cur.fetchone()[0]
                finally:
                    conn.close()
                return Availability(True, version=f"MariaDB {version.split('-')[0]}")
            except Exception as error:  # noqa: BLE001
                return Availability(False, reason=f"cannot connect to {cls._redact(url)}: "
                                                  f"{' '.join(str(error).split())}")
        binary = mserver.server_binary()
        if binary is None or mserver.install_db_binary() is None:
            return Availability(False, reason="mariadbd / mariadb-install-db not found",
                                install_hint=INSTALL_HINT)
        version = command_version([binary, "--version"])
        if version is None:
            return Availability(False, reason=f"{binary} does not run", install_hint=INSTALL_HINT)
        match = re.search(r"Ver (\S+)", version)
        return Availability(True, version=f"MariaDB {match.group(1).split('-')[0] if match else version}")

    @staticmethod
    def _redact(url: str) -> str:
        return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)

    def versions(self) -> dict[str, str]:
        found: dict[str, str] = {}
        with contextlib.suppress(Exception), self._connection().cursor() as cur:
            cur.execute("SELECT VERSION()")
            found["mariadb"] = cur.fetchone()[0]
        if "mariadb" not in found:
            version = self.version()
            if version:
                found["mariadb"] = version
        found["pymysql"] = _pymysql().__version__
        return found

    # ----- connections -------------------------------------------------------------------
    def _params(self) -> dict[str, Any]:
        if self.url:
            return parse_url(self.url)
        assert self.server is not None
        if self.server.port is None:
            raise RuntimeError("the MariaDB server has not been started")
        return {"host": "127.0.0.1", "port": self.server.port, "user": mserver.ADMIN_USER,
                "password": self.server.password()}

    def _connection(self):
        if self._conn is None or not self._conn.open:
            self._conn = connect(self._params())
        return self._conn

    def _execute(self, sql: str, args: Any = None) -> list[tuple]:
        with self._connection().cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())

    def _ensure_database(self) -> None:
        conn = connect(self._params(), database=None)
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE IF NOT EXISTS {DATABASE} "
                            "CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
        finally:
            conn.close()

    # ----- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        if self.server is not None:
            self.server.start()
        self._ensure_database()

    def stop(self) -> None:
        self.release()
        if self.server is not None:
            self.server.stop()

    def restart(self) -> None:
        """Managed: normal shutdown and start on the same port (empty buffer pool: no dump or
        reload of it). A server reached by URL is not restarted (``can_restart`` is False)."""
        if not self.can_restart or self.server is None:
            return
        self.release()
        self.server.stop()
        self.server.start()

    def is_alive(self) -> bool:
        if self.server is not None:
            return self.server.accepting()
        try:
            connect(self._params(), database=None).close()
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
        text = _render((self.folder() / "ddl.sql").read_text(), self.table, self.table_options)
        create, _, finish = text.partition(FINISH_MARKER)
        return _split_sql(create), _split_sql(finish)

    def create(self) -> None:
        self._ensure_database()
        for statement in self._ddl()[0]:
            self._execute(statement)

    def loader(self) -> Loader:
        return MariaDBLoader(self._params(), self.table)

    def finish_load(self) -> None:
        for statement in self._ddl()[1]:
            self._execute(statement)

    def _client_argv(self, defaults_file: Path) -> list[str]:
        client = mserver.client_binary()
        if client is None:
            raise RuntimeError("the mariadb client is not installed (docbench setup mariadb)")
        params = self._params()
        return [client, f"--defaults-file={defaults_file}", "--local-infile=1",
                "--batch", "-h", str(params["host"]), "-P", str(params["port"]),
                "-u", str(params["user"]), DATABASE]

    def native_load(self, files: list[Path]) -> None:
        """What a person types: ``mariadb --local-infile=1 -e "LOAD DATA LOCAL INFILE 'file'
        INTO TABLE t FIELDS TERMINATED BY 0x01 ESCAPED BY '' ... (doc)"`` per file (a
        compressed file is piped in through ``/dev/stdin``). As by hand, MariaDB skips a row
        it refuses with a warning and keeps the rest of the file."""
        from docbench.dataset.reader import compression_of

        decompress = {"gzip": ["gzip", "-dc"], "zstd": ["zstd", "-dc"], "lz4": ["lz4", "-dc"]}
        with tempfile.TemporaryDirectory(prefix="docbench-mariadb-") as tmp:
            defaults = Path(tmp) / "client.cnf"
            defaults.write_text(f"[client]\npassword={self._params()['password']}\n")
            os.chmod(defaults, 0o600)
            argv = self._client_argv(defaults)
            for path in files:
                kind = compression_of(path)
                source = str(path.resolve()) if kind == "none" else "/dev/stdin"
                sql = (f"LOAD DATA LOCAL INFILE '{source}' INTO TABLE {self.table} "
                       f"{LOAD_OPTIONS}")
                if kind == "none":
                    out = subprocess.run([*argv, "-e", sql], capture_output=True, text=True,
                                         check=False)
                else:
                    feeder = subprocess.Popen([*decompress[kind], str(path)],
                                              stdout=subprocess.PIPE)
                    out = subprocess.run([*argv, "-e", sql], stdin=feeder.stdout,
                                         capture_output=True, text=True, check=False)
                    feeder.stdout.close()  # type: ignore[union-attr]
                    feeder.wait()
                if out.returncode != 0:
                    message = " ".join(out.stderr.split())[:500]
                    raise RuntimeError(f"mariadb LOAD DATA of {path.name} failed: {message}")

    def count(self) -> int:
        return int(self._execute(f"SELECT COUNT(*) FROM {self.table}")[0][0])

    def storage(self) -> StorageSize:
        """information_schema.TABLES (data_length, index_length: logical page sizes) and
        INNODB_SYS_TABLESPACES (file_size, allocated_size of the table's .ibd). With page
        compression only the allocated size shrinks: total is the allocated size of the .ibd
        and data/index are scaled by allocated/file_size."""
        # Write the table's dirty pages to its .ibd first (after a load they are mostly in the
        # buffer pool and the redo log; page compression happens only when a page is written).
        with contextlib.suppress(Exception):
            self._execute(f"FLUSH TABLES {self.table} FOR EXPORT")
        with contextlib.suppress(Exception):
            self._execute("UNLOCK TABLES")
        self._execute(f"ANALYZE TABLE {self.table}")
        data, index, free, row_format, options = self._execute(
            "SELECT DATA_LENGTH, INDEX_LENGTH, DATA_FREE, ROW_FORMAT, CREATE_OPTIONS "
            "FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
            (DATABASE, self.table))[0]
        data, index, free = int(data), int(index), int(free or 0)
        space = self._execute(
            "SELECT FILE_SIZE, ALLOCATED_SIZE FROM information_schema.INNODB_SYS_TABLESPACES "
            "WHERE NAME = %s", (f"{DATABASE}/{self.table}",))
        detail: dict[str, Any] = {"data_length": data, "index_length": index,
                                  "data_free": free, "row_format": row_format,
                                  "create_options": options,
                                  "table_options": self.table_options}
        total = data + index
        if space and space[0][0]:
            file_size, allocated = int(space[0][0]), int(space[0][1])
            detail.update({"ibd_file_size": file_size, "ibd_allocated": allocated})
            if allocated and allocated < file_size:
                ratio = allocated / file_size
                data, index = int(data * ratio), int(index * ratio)
            total = allocated
        on_disk = None
        if self.server is not None:
            on_disk = directory_size(self.server.data_dir)
            ibd = self.server.data_dir / DATABASE / f"{self.table}.ibd"
            detail["ibd_path"] = str(ibd)
            detail["ibd_on_disk"] = directory_size(ibd.parent) if ibd.exists() else None
            with contextlib.suppress(FileNotFoundError):
                detail["ibd_on_disk"] = ibd.stat().st_blocks * 512
        return StorageSize(total=total, data=data, index=index, on_disk=on_disk, detail=detail)

    # ----- queries -----------------------------------------------------------------------
    def queries(self) -> list[str]:
        return _split_sql(_render((self.folder() / "queries.sql").read_text(), self.table))

    def session_spec(self) -> dict[str, Any]:
        params = self._params()
        spec: dict[str, Any] = {"table": self.table, "index": self.index,
                                "local": _is_local_host(str(params["host"]))}
        if self.server is not None:
            params.pop("password", None)
            spec["password_file"] = str(self.server.password_file)
            spec["server_pid"] = self.server.pid
        spec["params"] = params
        return spec

    @staticmethod
    def spec_params(spec: dict[str, Any]) -> dict[str, Any]:
        params = dict(spec["params"])
        if spec.get("password_file"):
            params["password"] = Path(spec["password_file"]).read_text().strip()
        return params

    @classmethod
    def open_session(cls, spec: dict[str, Any]) -> QuerySession:
        return MariaDBSession(spec)

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """Q2-Q5 filter on the indexed paths: warn unless our table is read through our index.
        Q1 reads every document (a full index scan is fine, a table scan too)."""
        if query_number == 1:
            return None
        if not plan:
            return f"Q{query_number}: no plan to check"
        try:
            tables = [t for t in _plan_tables(json.loads(plan))
                      if t.get("table_name") == self.table]
        except (ValueError, TypeError):
            return f"Q{query_number}: the plan is not EXPLAIN FORMAT=JSON"
        if any(t.get("key") == self.index for t in tables):
            return None
        scans = sorted({f"{t.get('access_type')}" + (f" on {t['key']}" if t.get("key") else "")
                        for t in tables})
        return (f"Q{query_number}: the optimizer does not use the index {self.index} "
                f"(access: {', '.join(scans) or 'none'})")


def _plan_tables(node: Any):
    """Every "table" object of an EXPLAIN FORMAT=JSON plan."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "table" and isinstance(value, dict):
                yield value
            yield from _plan_tables(value)
    elif isinstance(node, list):
        for item in node:
            yield from _plan_tables(item)


SYSTEM = MariaDB
