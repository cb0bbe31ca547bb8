"""The MariaDB engine: docbench's own managed server, or the user's server by URL.

Two ways to run:

* **managed** (default): docbench runs ``mariadb-install-db`` into its work directory and
  ``mariadbd --no-defaults`` as an unprivileged user on 127.0.0.1 and a free port
  (``server.py``);
* **URL** (``MariaDBEngine(workdir, url="mysql://user:password@host:3306/db")``,
  ``--mariadb-url``): the user's server. docbench creates and uses its own database
  ``docbench`` there and touches nothing else; it cannot restart or reconfigure that server
  (``can_restart`` is False; :meth:`MariaDBEngine.limit_cache` raises NotSupported). The
  database it creates carries the schema comment ``created by docbench ...``; a database
  ``docbench`` without it is someone else's: :meth:`~MariaDBEngine.ensure_database` stops
  (ForeignDatabase) and changes nothing. A URL without a password takes the one the mariadb
  client would: ``password`` of ``~/.my.cnf`` ([client], [client-server], [client-mariadb]),
  else ``$MYSQL_PWD``; a URL without a user, ``user`` of that file.

Every workload adapter of MariaDB reaches the server through this engine:
:meth:`~MariaDBEngine.params` (PyMySQL connection parameters), :meth:`~MariaDBEngine.connect`,
:meth:`~MariaDBEngine.admin_connection` / :meth:`~MariaDBEngine.execute`, the managed
:attr:`~MariaDBEngine.server` (None by URL), :attr:`~MariaDBEngine.data_dir`, and
:meth:`~MariaDBEngine.table_storage`. The ``LOAD DATA LOCAL INFILE`` batch loader every
adapter loads with is ``loader.py``'s.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import unquote, urlsplit

from docbench.contracts.common import (
    Availability,
    NotSupported,
    StorageSize,
    command_version,
    directory_size,
)
from docbench.contracts.engine import CacheLimits, Engine
from docbench.core.jsontypes import JsonObject, JsonValue, as_int, as_object, as_str
from docbench.core.ownership import MARKER_TEXT, ForeignDatabase, foreign_message, is_marked
from docbench.core.redact import redact_text, redact_url
from docbench.systems.mariadb import server as mserver

if TYPE_CHECKING:
    from pymysql.connections import Connection

DATABASE = "docbench"
INSTALL_HINT = "docbench setup mariadb  (apt-get install mariadb-server mariadb-client)"


def pymysql_module():
    """PyMySQL, imported on first use (docbench runs without it for other systems)."""
    import pymysql

    return pymysql


# The option-file groups the mariadb client reads its [client] settings from.
CLIENT_GROUPS = ("client", "client-server", "client-mariadb")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "s": " ", "\\": "\\", '"': '"', "'": "'"}


def _option_value(raw: str) -> str:
    """An option file's value as the MariaDB client reads it: a ``#`` outside quotes starts a
    comment, surrounding quotes go, backslash escapes (``\\n \\t \\s \\\\ \\"``) apply."""
    quote, escaped = None, False
    for index, char in enumerate(raw):
        if char in "'\"" and quote in (None, char) and not escaped:
            quote = None if quote else char
        elif char == "#" and quote is None:
            raw = raw[:index]
            break
        escaped = bool(quote) and char == "\\" and not escaped
    value = raw.strip()
    if len(value) > 1 and value[0] in "'\"" and value[-1] == value[0]:
        value = value[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), value)


def option_file_settings(path: Path | None = None) -> dict[str, str]:
    """``user`` / ``password`` / ... of the client groups of an option file (``~/.my.cnf``),
    the later group winning as in the client; {} when there is none."""
    path = path if path is not None else Path.home() / ".my.cnf"
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return {}
    found: dict[str, str] = {}
    group = None
    for line in lines:
        text = line.strip()
        if not text or text[0] in "#;!":  # comments, !include (other files: not followed)
            continue
        if text.startswith("[") and "]" in text:
            group = text[1 : text.index("]")].strip().lower()
        elif group in CLIENT_GROUPS and "=" in text:
            key, _, value = text.partition("=")
            found[key.strip().lower().replace("_", "-")] = _option_value(value)
    return found


class ConnectParams(TypedDict):
    """PyMySQL connection parameters of a server (keywords of ``pymysql.connect``)."""

    host: str
    port: int
    user: str
    password: str


def json_params(value: JsonValue, password: str | None = None) -> ConnectParams:
    """The parameters from a session spec (``json_record(params)``); ``password`` (read from the
    spec's password file) instead of the spec's own, which it then need not carry."""
    params = as_object(value, "params")
    return {
        "host": as_str(params["host"], "host"),
        "port": as_int(params["port"], "port"),
        "user": as_str(params["user"], "user"),
        "password": password if password is not None else as_str(params["password"], "password"),
    }


def parse_url(url: str, option_file: Path | None = None) -> ConnectParams:
    """mysql://user:password@host:port/db (or mariadb://) -> pymysql connect parameters.

    The password ends at the last ``@`` (percent-encoding is decoded). Without one in the URL
    it comes from where the mariadb client finds it: the option file's ``password``, else
    ``$MYSQL_PWD``, else none; without a user, the option file's ``user``, else root.
    """
    parts = urlsplit(url)
    if parts.scheme not in {"mysql", "mariadb", "mysql+pymysql"}:
        raise ValueError(f"not a mysql:// or mariadb:// URL: {parts.scheme}://...")
    options = option_file_settings(option_file) if parts.password is None or parts.username is None else {}
    user = unquote(parts.username) if parts.username else options.get("user", "root")
    if parts.password is not None:
        password = unquote(parts.password)
    else:
        password = options.get("password", os.environ.get("MYSQL_PWD", ""))
    return {
        "host": parts.hostname or "127.0.0.1",
        "port": parts.port or 3306,
        "user": user,
        "password": password,
    }


def _secrets(url: str) -> list[str]:
    """The password a URL connects with (maybe from ~/.my.cnf or $MYSQL_PWD, where the URL
    does not show it): hidden from error messages too."""
    try:
        password = parse_url(url)["password"]
    except ValueError:
        return []
    return [password] if password else []


def is_local_host(host: str) -> bool:
    return host in {"localhost", "127.0.0.1", "::1"}


def connect(params: ConnectParams, database: str | None = DATABASE, **extra: Any):
    """A new autocommit PyMySQL connection with these parameters (utf8mb4)."""
    pymysql = pymysql_module()
    return pymysql.connect(
        **params, database=database, charset="utf8mb4", autocommit=True, connect_timeout=10, **extra
    )


# ----- the engine --------------------------------------------------------------------------


class MariaDBEngine(Engine, CacheLimits):
    name = "mariadb"
    display_name = "MariaDB"
    embedded = False
    runs_by_default = False
    url_example = "mysql://user:password@host:3306/db"
    install_hint = INSTALL_HINT
    notes = (
        "MariaDB JSON (LONGTEXT + JSON_VALID) + VIRTUAL generated columns for the five "
        "paths with one composite InnoDB index; managed server (mariadb-install-db, "
        "127.0.0.1, own port) or the user's server via URL. JSON nested deeper than 32 "
        "levels is refused."
    )

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        # docbench's own server; None for a user's server reached by URL.
        self.server: mserver.MariaDBServer | None = None if url else mserver.MariaDBServer(workdir)
        # The admin connection of this process (docbench's database).
        self._conn: Connection[Any] | None = None
        self._pool_before: int | None = None  # buffer pool size before limit_cache()

    # ----- discovery ---------------------------------------------------------------------
    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            pymysql = pymysql_module()
        except ImportError:
            return Availability(False, reason="PyMySQL is not installed", install_hint="pip install PyMySQL")
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
                message = redact_text(" ".join(str(error).split()), url, _secrets(url))
                return Availability(False, reason=f"cannot connect to {redact_url(url)}: {message}")
        binary = mserver.server_binary()
        if binary is None or mserver.install_db_binary() is None:
            return Availability(
                False, reason="mariadbd / mariadb-install-db not found", install_hint=INSTALL_HINT
            )
        version = command_version([binary, "--version"])
        if version is None:
            return Availability(False, reason=f"{binary} does not run", install_hint=INSTALL_HINT)
        match = re.search(r"Ver (\S+)", version)
        return Availability(True, version=f"MariaDB {match.group(1).split('-')[0] if match else version}")

    def running_version(self) -> str | None:
        return str(self.execute("SELECT VERSION()")[0][0])

    def versions(self) -> dict[str, str]:
        return super().versions() | {"pymysql": pymysql_module().__version__}

    # ----- where things are --------------------------------------------------------------
    @property
    def data_dir(self) -> Path | None:
        """The managed server's data directory (None by URL)."""
        return self.server.data_dir if self.server is not None else None

    @property
    def password_file(self) -> Path | None:
        """The managed server's password file (mode 0600; None by URL)."""
        return self.server.password_file if self.server is not None else None

    # ----- connections -------------------------------------------------------------------
    def params(self) -> ConnectParams:
        """PyMySQL connection parameters of the server (password included)."""
        if self.url:
            return parse_url(self.url)
        assert self.server is not None
        if self.server.port is None:
            raise RuntimeError("the MariaDB server has not been started")
        return {
            "host": "127.0.0.1",
            "port": self.server.port,
            "user": mserver.ADMIN_USER,
            "password": self.server.password(),
        }

    def is_local(self) -> bool:
        return is_local_host(str(self.params()["host"]))

    def served_url(self) -> str | None:
        if self.url:
            return self.url
        from urllib.parse import quote

        params = self.params()
        return (
            f"mysql://{quote(str(params['user']), safe='')}:{quote(str(params['password']), safe='')}"
            f"@{params['host']}:{params['port']}/"
        )

    def connect(self, database: str | None = DATABASE, **extra: Any):
        """A new autocommit connection to docbench's database (``database=None``: none)."""
        return connect(self.params(), database=database, **extra)

    def admin_connection(self):
        """This process's shared autocommit connection to docbench's database; reopened when
        closed, closed by :meth:`release`, a restart and :meth:`stop`."""
        if self._conn is None or not self._conn.open:
            self._conn = self.connect()
        return self._conn

    def execute(self, sql: str, args: Any = None) -> list[tuple]:
        """Run one statement on the admin connection; its rows."""
        with self.admin_connection().cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())

    def ensure_database(self) -> None:
        """Create docbench's own database (utf8mb4_bin, the schema comment marking it as
        docbench's) if it is not there. On a server by URL a database of that name without the
        comment is someone else's: :class:`ForeignDatabase`, and nothing is changed. On
        docbench's own server an unmarked one (an older docbench's) is marked."""
        conn = self.connect(database=None)
        try:
            with conn.cursor() as cur:
                cur.execute(
                    "SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = %s",
                    (DATABASE,),
                )
                row = cur.fetchone()
                if row is not None and not is_marked(row[0]) and self.server is None:
                    raise ForeignDatabase(self.foreign_message())
                if row is None:
                    cur.execute(
                        f"CREATE DATABASE {DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin COMMENT %s",
                        (MARKER_TEXT,),
                    )
                elif not is_marked(row[0]):
                    cur.execute(f"ALTER DATABASE {DATABASE} COMMENT %s", (MARKER_TEXT,))
        finally:
            conn.close()

    def foreign_message(self) -> str:
        params = self.params()
        return foreign_message(
            f"MariaDB database {DATABASE!r}",
            f"{params['host']}:{params['port']}",
            f"DROP DATABASE {DATABASE};",
            f"ALTER DATABASE {DATABASE} COMMENT 'created by docbench';",
        )

    def client_binary(self) -> str:
        client = mserver.client_binary()
        if client is None:
            raise RuntimeError("the mariadb client is not installed (docbench setup mariadb)")
        return client

    # ----- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        if self.server is not None:
            self.server.start()
        self.ensure_database()

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
            self.connect(database=None).close()
            return True
        except Exception:  # noqa: BLE001
            return False

    def release(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    def server_pids(self) -> list[int]:
        """mariadbd (one process, threads inside); [] by URL."""
        pid = self.server.pid if self.server is not None else None
        return [pid] if pid else []

    # ----- cache limits (the throughput workload's io scenario) --------------------------
    def limit_cache(self, cache_bytes: int) -> str:
        """Shrink the InnoDB buffer pool (a dynamic resize, no restart): managed server only."""
        if self.server is None:
            raise NotSupported("the buffer pool of a server reached by URL is not docbench's to resize")
        if self._pool_before is None:
            self._pool_before = int(self.execute("SELECT @@innodb_buffer_pool_size")[0][0])
        return f"innodb_buffer_pool_size = {self._resize_pool(cache_bytes):,} bytes (resized)"

    def restore_cache(self) -> None:
        if self._pool_before:
            self._resize_pool(self._pool_before)
            self._pool_before = None

    def _resize_pool(self, size: int) -> int:
        self.execute(f"SET GLOBAL innodb_buffer_pool_size = {int(size)}")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the resize runs in the background
            status = self.execute("SHOW STATUS LIKE 'Innodb_buffer_pool_resize_status'")
            if not status or "complete" in str(status[0][1]).lower() or not status[0][1]:
                break
            time.sleep(0.2)
        return int(self.execute("SELECT @@innodb_buffer_pool_size")[0][0])

    # ----- sizes -------------------------------------------------------------------------
    def table_storage(self, table: str, table_options: str = "") -> StorageSize:
        """Sizes of a table of docbench's database: information_schema.TABLES (data_length,
        index_length: logical page sizes) and INNODB_SYS_TABLESPACES (file_size,
        allocated_size of the table's .ibd). With page compression only the allocated size
        shrinks: total is the allocated size of the .ibd and data/index are scaled by
        allocated/file_size. ``table_options`` is recorded in the detail."""
        # Write the table's dirty pages to its .ibd first (after a load they are mostly in the
        # buffer pool and the redo log; page compression happens only when a page is written).
        with contextlib.suppress(Exception):
            self.execute(f"FLUSH TABLES {table} FOR EXPORT")
        with contextlib.suppress(Exception):
            self.execute("UNLOCK TABLES")
        self.execute(f"ANALYZE TABLE {table}")
        data, index, free, row_format, options = self.execute(
            "SELECT DATA_LENGTH, INDEX_LENGTH, DATA_FREE, ROW_FORMAT, CREATE_OPTIONS "
            "FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
            (DATABASE, table),
        )[0]
        data, index, free = int(data), int(index), int(free or 0)
        space = self.execute(
            "SELECT FILE_SIZE, ALLOCATED_SIZE FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME = %s",
            (f"{DATABASE}/{table}",),
        )
        detail: JsonObject = {
            "data_length": data,
            "index_length": index,
            "data_free": free,
            "row_format": row_format,
            "create_options": options,
            "table_options": table_options,
        }
        total = data + index
        if space and space[0][0]:
            file_size, allocated = int(space[0][0]), int(space[0][1])
            detail.update({"ibd_file_size": file_size, "ibd_allocated": allocated})
            if allocated and allocated < file_size:
                ratio = allocated / file_size
                data, index = int(data * ratio), int(index * ratio)
            total = allocated
        on_disk = None
        if self.data_dir is not None:
            on_disk = directory_size(self.data_dir)
            ibd = self.data_dir / DATABASE / f"{table}.ibd"
            detail["ibd_path"] = str(ibd)
            detail["ibd_on_disk"] = directory_size(ibd.parent) if ibd.exists() else None
            with contextlib.suppress(FileNotFoundError):
                detail["ibd_on_disk"] = ibd.stat().st_blocks * 512
        return StorageSize(total=total, data=data, index=index, on_disk=on_disk, detail=detail)


ENGINE = MariaDBEngine

__all__ = ["DATABASE", "ENGINE", "MariaDBEngine", "connect", "parse_url", "pymysql_module"]
