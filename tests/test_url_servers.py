"""Servers given by URL (issue #13 C), against real servers the tests start themselves.

* docbench works only in a database (index) it created and marked as its own; a database of
  that name it did not create stops the run and stays as it was;
* passwords come from the URL, the environment or the client's own files, and never reach a
  command line (``ps``), a result, a log or an error message -- also one with ``@`` in it.
* a whole ``docbench run analytics`` by URL on servers holding the user's other databases,
  schemas, roles and users (issue #17) answers right and leaves all of it as it was, row for
  row; its own database is the one thing it adds.

The PostgreSQL and MariaDB servers here are not docbench's: the tests initdb / install them
in a temporary directory from the installed binaries and run them as the unprivileged user,
with a password and (where a test wants one) a user database ``docbench`` holding a table.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from docbench.core.ownership import MARKER, ForeignDatabase
from docbench.core.redact import redact_text, redact_url, url_secrets
from docbench.results.schema import validate
from docbench.servers import managed as server
from docbench.systems.mariadb import engine as mengine
from docbench.systems.mariadb import server as mserver
from docbench.systems.postgresql import server as pgserver
from docbench.systems.postgresql.engine import PostgreSQLEngine, libpq_url
from docbench.systems.postgresql.throughput import _pgpass_line, pgbench_connection

# '@' unencoded in the URLs on purpose: the password ends at the last '@'.
PG_PASSWORD = "Pg@Secret9url"
MY_PASSWORD = "My@Secret9url"
# Pieces that must not show either (a half-hidden password is a shown password).
PIECES = ("Secret9url", "Pg@Secret", "My@Secret")
FOREIGN_ROWS = [(1, "mine"), (2, "also mine")]
# The password of a role of the user's that docbench never sees (nor may show).
OTHER_PASSWORD = "Reader@Other7pw"


# ----- redaction (no server) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("mysql://rel:Secret@9@host", "mysql://rel:***@host"),
        ("mysql://rel:Pass@Secret9@127.0.0.1:1/other", "mysql://rel:***@127.0.0.1:1/other"),
        ("mysql://rel:Se%40cret@h:3306/db", "mysql://rel:***@h:3306/db"),
        ("postgresql://u:p@ss/w#rd?x@h/db", "postgresql://u:***@h/db"),
        (
            "postgresql://u:pw@[::1]:5432/db?sslmode=disable&password=zz",
            "postgresql://u:***@[::1]:5432/db?sslmode=disable&password=***",
        ),
        ("postgresql://h/db?password=zz", "postgresql://h/db?password=***"),
        (
            "mongodb://u:pw@h1:27017,h2:27017/?replicaSet=rs",
            "mongodb://u:***@h1:27017,h2:27017/?replicaSet=rs",
        ),
        ("elastic:changeme@localhost:9200", "elastic:***@localhost:9200"),
        ("https://elastic:a:b@es.local:9200/prefix", "https://elastic:***@es.local:9200/prefix"),
        ("mysql://rel:@h/db", "mysql://rel:***@h/db"),
        # nothing to hide: unchanged
        ("mysql://rel@h/db", "mysql://rel@h/db"),
        ("http://localhost:9200", "http://localhost:9200"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("not a url", "not a url"),
        ("", ""),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_redact_text_hides_the_password_in_every_form() -> None:
    url = "mysql://rel:Se%40cret99@h/db"
    text = f"cannot connect to {url}: user rel, password Se@cret99 (raw Se%40cret99)"
    hidden = redact_text(text, url)
    assert "Se@cret99" not in hidden and "Se%40cret99" not in hidden and "cret99" not in hidden
    assert "mysql://rel:***@h/db" in hidden
    # a short password only where it stands alone (not every "pw" of the text)
    assert redact_text("pw=pw; pwned", "mysql://u:pw@h/") == "***=***; pwned"
    # secrets that no URL shows (from the environment, an option file)
    assert redact_text("auth failed for hunter22", None, ["hunter22"]) == "auth failed for ***"
    assert url_secrets("postgresql://u:a%3Ab@h/?password=c") == ["a%3Ab", "a:b", "c"]


def test_libpq_url_ends_the_password_at_the_last_at() -> None:
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(libpq_url("postgresql://rel:Pg@Sec@ret@127.0.0.1:5/db"))
    assert (params["user"], params["password"], params["host"]) == ("rel", "Pg@Sec@ret", "127.0.0.1")
    for same in (
        "postgresql://rel:x@h/db",
        "postgresql://h/db?user=u",
        "host=h password=p",
        "postgresql://u@h/mail@example",
    ):
        assert libpq_url(same) == same


def test_pgpass_line_escapes() -> None:
    assert _pgpass_line("a:b\\c") == "*:*:*:*:a\\:b\\\\c\n"


def test_mariadb_password_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """URL > ~/.my.cnf [client] > $MYSQL_PWD, as the mariadb client; option-file syntax."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MYSQL_PWD", raising=False)
    url = "mysql://127.0.0.1:3307/x"
    assert mengine.parse_url(url) == {"host": "127.0.0.1", "port": 3307, "user": "root", "password": ""}
    monkeypatch.setenv("MYSQL_PWD", "from-env")
    assert mengine.parse_url(url)["password"] == "from-env"
    (tmp_path / ".my.cnf").write_text(
        "# comment\n!includedir /etc/mysql/conf.d/\n[mysqld]\npassword=server-side\n"
        '[client]\nuser = fileuser\npassword = "pa#ss\\"word"  # trailing comment\n'
        "ssl\n[mysql]\npassword=only-for-mysql\n"
    )
    assert mengine.parse_url(url) == {
        "host": "127.0.0.1",
        "port": 3307,
        "user": "fileuser",
        "password": 'pa#ss"word',
    }
    assert mengine.parse_url("mysql://rel@h/x")["password"] == 'pa#ss"word'
    assert mengine.parse_url("mysql://rel:url%40pw@h/x") == {
        "host": "h",
        "port": 3306,
        "user": "rel",
        "password": "url@pw",
    }
    (tmp_path / ".my.cnf").write_text("[client-mariadb]\npassword=x\\sy\n")
    assert mengine.parse_url(url)["password"] == "x y"


# ----- servers the tests start (not docbench's) --------------------------------------------


def _demote(user):
    if user is None:
        return None

    def drop() -> None:
        os.setgid(user.pw_gid)
        os.initgroups(user.pw_name, user.pw_gid)
        os.setuid(user.pw_uid)

    return drop


def _base(prefix: str) -> Path:
    """A directory the unprivileged server user can reach (pytest's tmp is 0700 root)."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(base, 0o711)
    return base


class OwnServer:
    """A server process these tests started (stopped by its PID)."""

    proc: subprocess.Popen | None = None
    port = 0

    def _spawn(self, argv: list[str], log: Path, user) -> None:
        with open(log, "ab") as handle:
            self.proc = subprocess.Popen(
                argv,
                stdout=handle,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd="/",
                preexec_fn=_demote(user),
                start_new_session=True,
            )

    def _wait(self, ready, log: Path, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None and self.proc.poll() is None, log.read_text()[-2000:]
            with contextlib.suppress(Exception):
                if ready():
                    return
            time.sleep(0.2)
        raise TimeoutError(log.read_text()[-2000:])

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


class ForeignPostgres(OwnServer):
    """initdb'ed by the test: superuser ``rel`` with :data:`PG_PASSWORD`, scram over TCP."""

    def __init__(self) -> None:
        self.bin_dir = pgserver.find_bin_dir()
        self.user = server.ensure_unprivileged_user()
        self.base = _base("docbench-foreignpg-")
        self.data, self.run, self.log = self.base / "data", self.base / "run", self.base / "log"

    def start(self) -> None:
        assert self.bin_dir is not None
        self.data.mkdir(mode=0o700)
        self.run.mkdir(mode=0o700)
        pwfile = self.base / "pwfile"
        pwfile.write_text(PG_PASSWORD + "\n")
        server.chown_tree(self.base, self.user)
        out = subprocess.run(
            [
                str(self.bin_dir / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "rel",
                f"--pwfile={pwfile}",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C",
                "--no-instructions",
            ],
            capture_output=True,
            text=True,
            cwd="/",
            preexec_fn=_demote(self.user),
            check=False,
        )
        pwfile.unlink()
        assert out.returncode == 0, out.stderr
        self.port = server.free_port()
        self._spawn(
            [
                str(self.bin_dir / "postgres"),
                "-D",
                str(self.data),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                f"port={self.port}",
                "-c",
                f"unix_socket_directories={self.run}",
                "-c",
                "shared_buffers=32MB",
                "-c",
                "max_connections=40",
                "-c",
                "fsync=off",
            ],
            self.log,
            self.user,
        )
        self._wait(lambda: self.connect("postgres").close() or True, self.log)

    def stop(self, sig: int = signal.SIGINT) -> None:  # fast shutdown
        super().stop(sig)

    def url(
        self, password: str | None = PG_PASSWORD, port: int | None = None, database: str = "postgres"
    ) -> str:
        secret = f":{password}" if password is not None else ""
        return f"postgresql://rel{secret}@127.0.0.1:{port or self.port}/{database}"

    def connect(self, dbname: str):
        import psycopg

        return psycopg.connect(
            host="127.0.0.1",
            port=self.port,
            user="rel",
            password=PG_PASSWORD,
            dbname=dbname,
            autocommit=True,
            connect_timeout=5,
        )

    def fresh(self, with_foreign_database: bool) -> None:
        """No database docbench; or the user's own one, with a table named like docbench's."""
        with self.connect("postgres") as conn:
            conn.execute("DROP DATABASE IF EXISTS docbench WITH (FORCE)")
            if with_foreign_database:
                conn.execute("CREATE DATABASE docbench")
        if with_foreign_database:
            with self.connect("docbench") as conn:
                conn.execute("CREATE TABLE bluesky_pglz (id int PRIMARY KEY, note text)")
                conn.execute("INSERT INTO bluesky_pglz VALUES (1, 'mine'), (2, 'also mine')")

    def docbench_database(self) -> tuple[int, str | None] | None:
        """(oid, comment) of the database docbench, or None."""
        with self.connect("postgres") as conn:
            return conn.execute(
                "SELECT oid, shobj_description(oid, 'pg_database') "
                "FROM pg_database WHERE datname = 'docbench'"
            ).fetchone()

    def other_data(self) -> None:
        """The user's own things on the server (made once): a role that logs in and one that
        owns, a database ``appdata`` (a setting, a comment) with a schema ``sales`` of tables,
        a view, a sequence and a function, and a table named like docbench's; a table in
        ``postgres`` and an object in ``template1`` (what every new database copies)."""
        with self.connect("postgres") as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = 'appdata'").fetchone():
                return
            conn.execute("CREATE ROLE app_owner NOLOGIN")
            conn.execute(f"CREATE ROLE app_reader LOGIN PASSWORD '{OTHER_PASSWORD}'")
            conn.execute("CREATE DATABASE appdata OWNER app_owner")
            conn.execute("COMMENT ON DATABASE appdata IS 'the application''s data'")
            conn.execute("ALTER DATABASE appdata SET work_mem = '8MB'")
            conn.execute("CREATE TABLE notes (id int PRIMARY KEY, note text)")
            conn.execute("INSERT INTO notes SELECT i, 'note ' || i FROM generate_series(1, 50) i")
        with self.connect("template1") as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS template_note (note text)")
        with self.connect("appdata") as conn:
            for statement in (
                "CREATE SCHEMA sales AUTHORIZATION app_owner",
                "CREATE TABLE sales.customers (id serial PRIMARY KEY, name text NOT NULL, profile jsonb)",
                "INSERT INTO sales.customers (name, profile) SELECT 'customer ' || i, "
                "jsonb_build_object('tier', i % 3, 'tags', jsonb_build_array('a', i)) "
                "FROM generate_series(1, 300) i",
                "CREATE TABLE sales.orders (id bigserial PRIMARY KEY, customer int REFERENCES "
                "sales.customers, total numeric(10, 2), at timestamptz, doc jsonb)",
                "INSERT INTO sales.orders (customer, total, at, doc) SELECT 1 + i % 300, "
                "i * 1.25, '2024-01-01'::timestamptz + i * interval '1 hour', "
                "jsonb_build_object('kind', 'commit', 'n', i) FROM generate_series(1, 2000) i",
                "CREATE INDEX orders_doc ON sales.orders ((doc ->> 'kind'))",
                "CREATE VIEW sales.big_orders AS SELECT * FROM sales.orders WHERE total > 1000",
                "CREATE FUNCTION sales.order_count() RETURNS bigint LANGUAGE sql "
                "AS 'SELECT count(*) FROM sales.orders'",
                "COMMENT ON TABLE sales.orders IS 'do not touch'",
                "GRANT USAGE ON SCHEMA sales TO app_reader",
                "GRANT SELECT ON ALL TABLES IN SCHEMA sales TO app_reader",
                # the names docbench uses in its own database, here the user's
                "CREATE TABLE public.bluesky_pglz (data jsonb)",
                'INSERT INTO public.bluesky_pglz VALUES (\'{"kind": "mine"}\')',
            ):
                conn.execute(statement)

    def inventory(self) -> dict[str, object]:
        """Everything on the server but docbench's own database: the databases (owner,
        encoding, comment, access), the roles (with their password hashes), per-database and
        per-role settings, the server's settings and ``postgresql.auto.conf`` (ALTER SYSTEM),
        and in every other database its schemas, relations, functions, extensions and a
        digest of every table's rows (each row's text, sorted) and sequence."""
        from psycopg import sql

        found: dict[str, object] = {}
        with self.connect("postgres") as conn:
            found["databases"] = conn.execute(
                "SELECT datname, pg_get_userbyid(datdba), pg_encoding_to_char(encoding), "
                "datcollate, datctype, datistemplate, datallowconn, datconnlimit, datacl::text, "
                "shobj_description(oid, 'pg_database') FROM pg_database "
                "WHERE datname <> 'docbench' ORDER BY 1"
            ).fetchall()
            found["roles"] = conn.execute(
                "SELECT rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, "
                "rolreplication, rolbypassrls, rolconnlimit, rolpassword, rolvaliduntil "
                "FROM pg_authid ORDER BY 1"
            ).fetchall()
            found["memberships"] = conn.execute(
                "SELECT pg_get_userbyid(roleid), pg_get_userbyid(member), admin_option "
                "FROM pg_auth_members ORDER BY 1, 2"
            ).fetchall()
            found["db_role_settings"] = conn.execute(
                "SELECT d.datname, pg_get_userbyid(s.setrole), s.setconfig::text "
                "FROM pg_db_role_setting s LEFT JOIN pg_database d ON d.oid = s.setdatabase "
                "WHERE d.datname IS DISTINCT FROM 'docbench' ORDER BY 1, 2"
            ).fetchall()
            found.update(
                {
                    f"setting {name}": rest
                    for name, *rest in conn.execute(
                        "SELECT name, setting, source FROM pg_settings "
                        "WHERE source NOT IN ('client', 'session')"
                    )
                }
            )
            names = [
                r[0]
                for r in conn.execute(
                    "SELECT datname FROM pg_database WHERE datallowconn AND datname <> 'docbench' ORDER BY 1"
                )
            ]
        found["auto.conf"] = (self.data / "postgresql.auto.conf").read_bytes()
        user_objects = (
            "n.nspname NOT IN ('pg_catalog', 'information_schema') "
            "AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'"
        )
        for name in names:
            with self.connect(name) as conn:
                found[f"{name}: schemas"] = conn.execute(
                    "SELECT nspname, pg_get_userbyid(nspowner), nspacl::text FROM pg_namespace n "
                    f"WHERE {user_objects} ORDER BY 1"
                ).fetchall()
                relations = conn.execute(
                    "SELECT n.nspname, c.relname, c.relkind, pg_get_userbyid(c.relowner), "
                    "c.relacl::text, c.reloptions::text, obj_description(c.oid, 'pg_class'), "
                    "CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END "
                    "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                    f"WHERE {user_objects} ORDER BY 1, 2"
                ).fetchall()
                found[f"{name}: relations"] = relations
                found[f"{name}: functions"] = conn.execute(
                    "SELECT n.nspname, p.proname, pg_get_function_identity_arguments(p.oid), "
                    "md5(p.prosrc) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                    f"WHERE {user_objects} ORDER BY 1, 2, 3"
                ).fetchall()
                found[f"{name}: extensions"] = conn.execute(
                    "SELECT extname, extversion FROM pg_extension ORDER BY 1"
                ).fetchall()
                for schema, relation, kind, *_ in relations:
                    target = sql.Identifier(schema, relation)
                    if kind in ("r", "p", "m"):
                        found[f"{name}: {schema}.{relation}"] = conn.execute(
                            sql.SQL(
                                "SELECT count(*), md5(coalesce(string_agg(t::text, E'\\n' "
                                "ORDER BY t::text), '')) FROM {} t"
                            ).format(target)
                        ).fetchone()
                    elif kind == "S":
                        found[f"{name}: {schema}.{relation}"] = conn.execute(
                            sql.SQL("SELECT last_value, is_called FROM {}").format(target)
                        ).fetchone()
        return found


class ForeignMariaDB(OwnServer):
    """mariadb-install-db'ed by the test: user ``rel``@127.0.0.1 with :data:`MY_PASSWORD`."""

    def __init__(self) -> None:
        self.user = server.ensure_unprivileged_user()
        self.base = _base("docbench-foreignmy-")
        self.data, self.log = self.base / "data", self.base / "log"
        self.socket = self.base / "mysqld.sock"

    def start(self) -> None:
        install, binary = mserver.install_db_binary(), mserver.server_binary()
        assert install and binary
        argv = [
            install,
            "--no-defaults",
            f"--datadir={self.data}",
            "--skip-test-db",
            "--auth-root-authentication-method=normal",
            "--skip-name-resolve",
        ]
        if self.user is not None:
            argv.append(f"--user={self.user.pw_name}")
        out = subprocess.run(argv, capture_output=True, text=True, cwd="/", check=False)
        assert out.returncode == 0, out.stderr
        server.chown_tree(self.base, self.user)
        self.port = server.free_port()
        self._spawn(
            [
                binary,
                "--no-defaults",
                f"--datadir={self.data}",
                f"--socket={self.socket}",
                f"--port={self.port}",
                "--bind-address=127.0.0.1",
                "--skip-name-resolve",
                "--innodb-buffer-pool-size=64M",
                "--innodb-log-file-size=48M",
                f"--pid-file={self.base}/mariadbd.pid",
                f"--tmpdir={self.base}",
                "--performance-schema=0",
                "--local-infile=1",
            ],
            self.log,
            self.user,
        )
        self._wait(lambda: self._root().close() or True, self.log)
        with self._root() as conn, conn.cursor() as cur:
            cur.execute("CREATE USER 'rel'@'127.0.0.1' IDENTIFIED BY %s", (MY_PASSWORD,))
            cur.execute("GRANT ALL PRIVILEGES ON *.* TO 'rel'@'127.0.0.1'")

    def _root(self):
        import pymysql

        # root over TCP from 127.0.0.1 has no password before the test's user exists.
        return pymysql.connect(
            host="127.0.0.1", port=self.port, user="root", password="", autocommit=True, connect_timeout=5
        )

    def url(
        self, password: str | None = MY_PASSWORD, port: int | None = None, database: str = "mysql"
    ) -> str:
        secret = f":{password}" if password is not None else ""
        return f"mysql://rel{secret}@127.0.0.1:{port or self.port}/{database}"

    def fresh(self, with_foreign_database: bool) -> None:
        with self._root() as conn, conn.cursor() as cur:
            cur.execute("DROP DATABASE IF EXISTS docbench")
            if with_foreign_database:
                cur.execute("CREATE DATABASE docbench")
                cur.execute("CREATE TABLE docbench.bluesky_default (id int PRIMARY KEY, note text)")
                cur.execute("INSERT INTO docbench.bluesky_default VALUES (1, 'mine'), (2, 'also mine')")

    def query(self, sql: str) -> list[tuple]:
        with self._root() as conn, conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())

    def schema_comment(self) -> str | None:
        rows = self.query(
            "SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'docbench'"
        )
        return rows[0][0] if rows else None

    def other_data(self) -> None:
        """The user's own things on the server (made once): a user of theirs, a database
        ``shop`` (a comment) with tables, a view, a procedure, a trigger, and a table named
        like docbench's."""
        if self.query("SHOW DATABASES LIKE 'shop'"):
            return
        with self._root() as conn, conn.cursor() as cur:
            for statement in (
                f"CREATE USER 'shop_reader'@'127.0.0.1' IDENTIFIED BY '{OTHER_PASSWORD}'",
                "CREATE DATABASE shop CHARACTER SET utf8mb4 COMMENT 'the shop''s data'",
                "USE shop",
                "CREATE TABLE shop.customers (id int AUTO_INCREMENT PRIMARY KEY, "
                "name varchar(64) NOT NULL, profile JSON) COMMENT 'do not touch'",
                "INSERT INTO shop.customers (name, profile) SELECT CONCAT('customer ', seq), "
                "JSON_OBJECT('tier', seq % 3) FROM seq_1_to_300",
                "CREATE TABLE shop.orders (id bigint AUTO_INCREMENT PRIMARY KEY, customer int, "
                "total decimal(10, 2), at datetime, doc JSON, KEY (customer))",
                "INSERT INTO shop.orders (customer, total, at, doc) SELECT 1 + seq % 300, "
                "seq * 1.25, '2024-01-01' + INTERVAL seq HOUR, JSON_OBJECT('kind', 'commit', "
                "'n', seq) FROM seq_1_to_2000",
                "CREATE VIEW shop.big_orders AS SELECT * FROM shop.orders WHERE total > 1000",
                "CREATE PROCEDURE shop.order_count() SELECT COUNT(*) FROM shop.orders",
                "CREATE TRIGGER shop.no_negative BEFORE INSERT ON shop.orders FOR EACH ROW "
                "SET NEW.total = GREATEST(NEW.total, 0)",
                "GRANT SELECT ON shop.* TO 'shop_reader'@'127.0.0.1'",
                # the name docbench uses in its own database, here the user's
                "CREATE TABLE shop.bluesky_default (doc JSON)",
                'INSERT INTO shop.bluesky_default VALUES (\'{"kind": "mine"}\')',
                "ANALYZE TABLE shop.customers, shop.orders, shop.bluesky_default",
            ):
                cur.execute(statement)
                cur.fetchall()

    # The server's statistics tables: rows about docbench's tables are docbench's own (ANALYZE
    # TABLE writes them), and their time of update is the server's.
    STATISTICS = {"innodb_table_stats", "innodb_index_stats", "table_stats", "column_stats", "index_stats"}
    # Global variables that move by themselves.
    VOLATILE = {
        "gtid_binlog_pos",
        "gtid_current_pos",
        "gtid_binlog_state",
        "innodb_buffer_pool_resize_status",
    }

    def inventory(self) -> dict[str, object]:
        """Everything on the server but docbench's own database: the databases, the global
        variables, every table's definition and a digest of its rows (the ``mysql`` schema's
        users and grants included), views, routines, triggers and events."""
        import hashlib

        outside = "NOT IN ('docbench', 'information_schema', 'performance_schema')"
        found: dict[str, object] = {
            "databases": self.query(
                "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, "
                "DEFAULT_COLLATION_NAME, SCHEMA_COMMENT FROM "
                "information_schema.SCHEMATA WHERE SCHEMA_NAME <> 'docbench' "
                "ORDER BY 1"
            ),
            "columns": self.query(
                "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, "
                "IS_NULLABLE, COLUMN_DEFAULT, EXTRA, GENERATION_EXPRESSION FROM "
                f"information_schema.COLUMNS WHERE TABLE_SCHEMA {outside} "
                "ORDER BY 1, 2, ORDINAL_POSITION"
            ),
            "indexes": self.query(
                "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, "
                "COLUMN_NAME FROM information_schema.STATISTICS "
                f"WHERE TABLE_SCHEMA {outside} ORDER BY 1, 2, 3, 4"
            ),
            "views": self.query(
                "SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION FROM "
                f"information_schema.VIEWS WHERE TABLE_SCHEMA {outside} "
                "ORDER BY 1, 2"
            ),
            "routines": self.query(
                "SELECT ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_DEFINITION FROM "
                f"information_schema.ROUTINES WHERE ROUTINE_SCHEMA {outside} "
                "ORDER BY 1, 2"
            ),
            "triggers": self.query(
                "SELECT TRIGGER_SCHEMA, TRIGGER_NAME, ACTION_STATEMENT FROM "
                "information_schema.TRIGGERS WHERE TRIGGER_SCHEMA "
                f"{outside} ORDER BY 1, 2"
            ),
            "events": self.query(
                "SELECT EVENT_SCHEMA, EVENT_NAME FROM information_schema.EVENTS "
                f"WHERE EVENT_SCHEMA {outside} ORDER BY 1, 2"
            ),
        }
        found.update(
            {
                f"variable {name}": value
                for name, value in self.query("SHOW GLOBAL VARIABLES")
                if name not in self.VOLATILE
            }
        )
        tables = self.query(
            "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE, ROW_FORMAT, "
            "TABLE_COLLATION, CREATE_OPTIONS, TABLE_COMMENT FROM "
            f"information_schema.TABLES WHERE TABLE_SCHEMA {outside} "
            "ORDER BY 1, 2"
        )
        found["tables"] = tables
        for schema, table, kind, *_ in tables:
            if kind not in ("BASE TABLE", "SYSTEM VERSIONED"):
                continue
            with self._root() as conn, conn.cursor() as cur:
                cur.execute(f"SELECT * FROM `{schema}`.`{table}`")
                names = [d[0].lower() for d in cur.description]
                rows = list(cur.fetchall())
            if schema == "mysql" and table in self.STATISTICS:
                where = names.index("database_name" if "database_name" in names else "db_name")
                keep = [i for i, n in enumerate(names) if n != "last_update"]
                rows = [tuple(row[i] for i in keep) for row in rows if row[where] != "docbench"]
            digest = hashlib.sha256("\n".join(sorted(map(repr, rows))).encode()).hexdigest()
            found[f"{schema}.{table}"] = (len(rows), digest)
        return found


@contextlib.contextmanager
def _running(own: OwnServer) -> Iterator[OwnServer]:
    try:
        own.start()  # type: ignore[attr-defined]
        yield own
    finally:
        own.stop()
        shutil.rmtree(own.base, ignore_errors=True)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def pg() -> Iterator[ForeignPostgres]:
    if not PostgreSQLEngine.availability().ok:
        pytest.skip("PostgreSQL server binaries not installed")
    with _running(ForeignPostgres()) as own:
        yield own  # type: ignore[misc]


@pytest.fixture(scope="module")
def my() -> Iterator[ForeignMariaDB]:
    if mserver.server_binary() is None or mserver.install_db_binary() is None:
        pytest.skip("MariaDB server not installed (docbench setup mariadb)")
    with _running(ForeignMariaDB()) as own:
        yield own  # type: ignore[misc]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's DOCBENCH_HOME (work directories, cache) beside its results."""
    from docbench.core import paths

    monkeypatch.setenv("DOCBENCH_OPT", str(paths.opt_dir()))
    monkeypatch.setenv("DOCBENCH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def small_data(real_data_dir: Path, tmp_path: Path) -> Path:
    """1,000 real events in one file."""
    target = tmp_path / "data"
    target.mkdir()
    shutil.copy(real_data_dir / "jsonbench_file_0001_first1000.jsonl", target / "file_0001.json")
    return target


def docbench(
    argv: list[str], env: dict[str, str] | None = None, timeout: float = 900
) -> subprocess.CompletedProcess:
    """``docbench ARGV`` in a process of its own (as a person runs it)."""
    command = [sys.executable, "-c", "from docbench.cli import main; main()", *argv]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "250", **(env or {})},
        check=False,
    )


def _files_holding(folders: list[Path], secrets: tuple[str, ...]) -> list[str]:
    """Files under ``folders`` whose bytes hold any secret (password or piece of it)."""
    found = []
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                found += [f"{path}: {s}" for s in secrets if s.encode() in data]
    return found


def _analytics(
    url_option: str,
    url: str,
    variant: str,
    data: Path,
    results: Path,
    env: dict[str, str] | None = None,
    by_env: bool = False,
) -> subprocess.CompletedProcess:
    system = url_option.split("-")[2]
    argv = [
        "run",
        "analytics",
        "--systems",
        system,
        "--variants",
        variant,
        "--data",
        str(data),
        "--tries",
        "1",
        "--timeout",
        "60",
        "--results",
        str(results),
    ]
    if by_env:
        env = {**(env or {}), f"DOCBENCH_{system.upper()}_URL": url}
    else:
        argv += [url_option, url]
    return docbench(argv, env)


# ----- PostgreSQL ---------------------------------------------------------------------------


def test_postgresql_foreign_database_stops_the_run_untouched(
    pg: ForeignPostgres, home: Path, small_data: Path, tmp_path: Path
):
    pg.fresh(with_foreign_database=True)
    before = pg.docbench_database()
    out = _analytics("--postgresql-url", pg.url(), "pglz", small_data, tmp_path / "results")
    said = " ".join((out.stdout + out.stderr).split())  # the terminal's line breaks
    assert out.returncode != 0, said
    assert "PostgreSQL database 'docbench' on 127.0.0.1" in said and "not created by docbench" in said
    assert "DROP DATABASE docbench" in said  # how to proceed
    with pg.connect("docbench") as conn:
        assert conn.execute("SELECT id, note FROM bluesky_pglz ORDER BY id").fetchall() == FOREIGN_ROWS
        tables = conn.execute(
            "SELECT relname FROM pg_class WHERE relkind IN ('r', 'i', 'v', 'm') "
            "AND relnamespace = 'public'::regnamespace ORDER BY 1"
        ).fetchall()
        assert tables == [("bluesky_pglz",), ("bluesky_pglz_pkey",)]
        assert conn.execute(
            "SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'"
        ).fetchone() == (0,)
    assert pg.docbench_database() == before and before[1] is None  # not even marked
    assert not any(p in said for p in PIECES)
    assert not _files_holding([tmp_path], PIECES)


def test_postgresql_database_is_created_marked_and_reused(
    pg: ForeignPostgres, home: Path, small_data: Path, tmp_path: Path
):
    pg.fresh(with_foreign_database=False)
    results = tmp_path / "results"
    first = _analytics("--postgresql-url", pg.url(), "pglz", small_data, results)
    assert first.returncode == 0, first.stdout + first.stderr
    oid, comment = pg.docbench_database()
    assert comment and comment.startswith(MARKER)
    # the password came with an unencoded '@': the run connected, and shows none of it
    second = _analytics("--postgresql-url", pg.url(), "pglz", small_data, results)
    assert second.returncode == 0, second.stdout + second.stderr
    assert pg.docbench_database() == (oid, comment)  # the same database, reused
    with pg.connect("docbench") as conn:
        assert conn.execute("SELECT count(*) FROM bluesky_pglz").fetchone()[0] > 900
    assert len(list(results.rglob("*.json*"))) >= 2
    for out in (first, second):
        assert not any(p in out.stdout + out.stderr for p in PIECES)
    assert not _files_holding([tmp_path], PIECES)


def test_postgresql_url_without_password_uses_pgpassword_and_pgpass(
    pg: ForeignPostgres, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    pg.fresh(with_foreign_database=False)
    url = pg.url(password=None)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    refused = PostgreSQLEngine.availability(url)
    assert not refused.ok and "password" in refused.reason  # the test can fail: no password, no way in
    monkeypatch.setenv("PGPASSWORD", PG_PASSWORD)
    engine = PostgreSQLEngine(tmp_path / "w1", url=url)
    engine.start()
    engine.stop()
    assert pg.docbench_database()[1].startswith(MARKER)
    monkeypatch.delenv("PGPASSWORD")
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{pg.port}:*:rel:{PG_PASSWORD}\n")
    passfile.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    engine = PostgreSQLEngine(tmp_path / "w2", url=url)
    assert PostgreSQLEngine.availability(url).ok
    engine.start()
    # pgbench gets no password from docbench here: libpq's own file must reach it.
    script = tmp_path / "one.sql"
    script.write_text("SELECT 1;\n")
    with pgbench_connection(engine, "docbench") as (conninfo, env):
        assert "password" not in conninfo and env.get("PGPASSFILE") == str(passfile)
        out = subprocess.run(
            [engine.pgbench_path(), "-n", "-t", "1", "-f", str(script), conninfo],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    assert out.returncode == 0, out.stderr
    engine.stop()


class _PsWatcher:
    """``ps`` every 50 ms while a run goes on: every command line seen (and the passwords of
    managed servers under ``home``, whose work directories go at the end of the run)."""

    def __init__(self, home: Path | None = None) -> None:
        self.lines: set[str] = set()
        self.passwords: set[str] = set()
        self.home = home
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            out = subprocess.run(["ps", "-eww", "-o", "args="], capture_output=True, text=True, check=False)
            self.lines.update(out.stdout.splitlines())
            for path in self._password_files():
                with contextlib.suppress(OSError):
                    self.passwords.add(path.read_text().strip())
            time.sleep(0.05)

    def _password_files(self) -> list[Path]:
        if self.home is None:
            return []
        try:
            return list(self.home.rglob("password"))
        except OSError:  # a work directory removed while it was walked (CI: the watcher died)
            return []

    def __enter__(self) -> _PsWatcher:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _throughput(results: Path, env: dict[str, str], extra: list[str] | None = None):
    return docbench(
        [
            "run",
            "throughput",
            "--systems",
            "postgresql",
            "--docs",
            "2000",
            "--clients",
            "2",
            "--duration",
            "3",
            "--warmup",
            "0",
            "--mix",
            "read-write",
            "--no-ceiling",
            "--results",
            str(results),
            *(extra or []),
        ],
        env,
    )


class _FileWatcher:
    """Reads the files under ``folders`` every 0.2 s while a run goes on: every one that held
    a secret at any moment (the run lock, a checkpoint, a log may be gone or emptied by the
    end of the run)."""

    def __init__(self, folders: list[Path], secrets: tuple[str, ...]) -> None:
        self.folders, self.secrets = folders, secrets
        self.found: set[str] = set()
        self.reads = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            with contextlib.suppress(OSError):  # a file replaced while read
                self.found.update(_files_holding(self.folders, self.secrets))
                self.reads += 1

    def __enter__(self) -> _FileWatcher:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _pgbench_runs(lines: set[str]) -> list[str]:
    return [line for line in lines if "pgbench" in line.split(" ", 1)[0]]


def test_pgbench_gets_no_password_on_its_command_line_by_url(pg: ForeignPostgres, home: Path, tmp_path: Path):
    pg.fresh(with_foreign_database=False)
    results = tmp_path / "results"
    # The URL from the environment (DOCBENCH_POSTGRESQL_URL): not on docbench's command line.
    with _PsWatcher() as ps:
        out = _throughput(results, {"DOCBENCH_POSTGRESQL_URL": pg.url()})
    said = out.stdout + out.stderr
    assert out.returncode == 0, said
    runs = _pgbench_runs(ps.lines)
    assert runs, "pgbench was never seen running"
    assert not [line for line in ps.lines if any(p in line for p in PIECES)]
    assert all("password=" not in line for line in runs), runs
    assert not any(p in said for p in PIECES)
    assert not _files_holding([tmp_path], PIECES)
    assert '"tps": ' in "".join(p.read_text() for p in results.rglob("*.json"))


def test_pgbench_gets_no_password_on_its_command_line_managed(home: Path, tmp_path: Path):
    """docbench's own cluster: its generated password stays in its 0600 file."""
    if not PostgreSQLEngine.availability().ok:
        pytest.skip("PostgreSQL server binaries not installed")
    results = tmp_path / "results"
    with _PsWatcher(home) as ps:
        out = _throughput(results, {})
    assert out.returncode == 0, out.stdout + out.stderr
    passwords = {p for p in ps.passwords if len(p) >= 16}  # the generated one
    assert passwords, "the managed cluster's password file was never seen"
    runs = _pgbench_runs(ps.lines)
    assert any(" -b " in line for line in runs) and any(" -f " in line for line in runs), runs
    assert not [line for line in ps.lines if any(p in line for p in passwords)]
    assert all("password=" not in line for line in runs), runs


def test_connection_errors_hide_a_password_with_at(
    pg: ForeignPostgres, home: Path, tmp_path: Path, small_data: Path
):
    closed = server.free_port()
    cases = [
        (
            "--postgresql-url",
            f"postgresql://rel:Pass@Secret9url@127.0.0.1:{closed}/other",
            f"postgresql://rel:***@127.0.0.1:{closed}/other",
        ),
        (
            "--mariadb-url",
            "mysql://rel:Pass@Secret9url@127.0.0.1:1/other",
            "mysql://rel:***@127.0.0.1:1/other",
        ),
        (
            "--postgresql-url",
            f"postgresql://rel:Wrong@Secret9url@127.0.0.1:{pg.port}/postgres",
            f"postgresql://rel:***@127.0.0.1:{pg.port}/postgres",
        ),
    ]
    for option, url, shown in cases:
        out = _analytics(
            option,
            url,
            "default" if "mariadb" in option else "pglz",
            small_data,
            tmp_path / "results",
            by_env=True,
        )
        said = out.stdout + out.stderr
        assert out.returncode != 0 and shown in " ".join(said.split()), said
        assert "Secret9url" not in said and "Pass@" not in said and "Wrong@" not in said
    assert "password authentication failed" in " ".join(said.split())
    assert not _files_holding([tmp_path], ("Secret9url",))


# ----- MariaDB ------------------------------------------------------------------------------


def test_mariadb_foreign_database_stops_the_run_untouched(
    my: ForeignMariaDB, home: Path, small_data: Path, tmp_path: Path
):
    my.fresh(with_foreign_database=True)
    out = _analytics("--mariadb-url", my.url(), "default", small_data, tmp_path / "results", by_env=True)
    said = " ".join((out.stdout + out.stderr).split())  # the terminal's line breaks
    assert out.returncode != 0, said
    assert "MariaDB database 'docbench' on 127.0.0.1" in said and "not created by docbench" in said
    assert my.query("SELECT id, note FROM docbench.bluesky_default ORDER BY id") == FOREIGN_ROWS
    assert my.query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'docbench'") == [
        ("bluesky_default",)
    ]
    assert not my.schema_comment()
    with pytest.raises(ForeignDatabase):
        mengine.MariaDBEngine(tmp_path / "w", url=my.url()).start()
    assert not any(p in said for p in PIECES)
    assert not _files_holding([tmp_path], PIECES)


def test_mariadb_database_is_created_marked_and_reused_with_password_from_the_environment(
    my: ForeignMariaDB, home: Path, small_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    my.fresh(with_foreign_database=False)
    url = my.url(password=None)
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    monkeypatch.delenv("MYSQL_PWD", raising=False)
    assert not mengine.MariaDBEngine.availability(url).ok  # no password: refused
    # ~/.my.cnf [client]
    (tmp_path / "userhome").mkdir()
    (tmp_path / "userhome" / ".my.cnf").write_text(f'[client]\npassword="{MY_PASSWORD}"\n')
    engine = mengine.MariaDBEngine(tmp_path / "w1", url=url)
    engine.start()
    engine.stop()
    comment = my.schema_comment()
    assert comment and comment.startswith(MARKER)
    (tmp_path / "userhome" / ".my.cnf").unlink()
    # MYSQL_PWD, through a whole run whose URL comes from the environment too
    results = tmp_path / "results"
    out = _analytics(
        "--mariadb-url",
        url,
        "default",
        small_data,
        results,
        env={"MYSQL_PWD": MY_PASSWORD, "HOME": str(tmp_path / "userhome")},
        by_env=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert my.schema_comment() == comment
    assert my.query("SELECT COUNT(*) FROM docbench.bluesky_default")[0][0] > 900
    assert not any(p in out.stdout + out.stderr for p in PIECES)
    assert not _files_holding([results, home], PIECES)


# ----- both servers: the user's data around docbench's database ---------------------------


def _changes(before: dict[str, object], after: dict[str, object]) -> list[str]:
    return [
        f"{key}: {before.get(key)!r} -> {after.get(key)!r}"
        for key in sorted(before.keys() | after.keys())
        if before.get(key) != after.get(key)
    ]


def test_analytics_by_url_touches_nothing_but_its_own_database(
    pg: ForeignPostgres, my: ForeignMariaDB, home: Path, small_data: Path, tmp_path: Path
):
    """``docbench run analytics`` with --postgresql-url / --mariadb-url on servers that hold
    the user's other databases, schemas, roles and users: every answer right, docbench's
    database ``docbench`` the only thing added (and kept, marked, after the run), everything
    else row for row as it was, and no password in what the run printed or wrote."""
    for own in (pg, my):
        own.fresh(with_foreign_database=False)
        own.other_data()
    before = {"postgresql": pg.inventory(), "mariadb": my.inventory()}
    results = tmp_path / "results"
    # every 6 characters in a row of docbench's passwords (a half-shown password is shown)
    secrets = (
        *sorted(
            {password[i : i + 6] for password in (PG_PASSWORD, MY_PASSWORD) for i in range(len(password) - 5)}
        ),
        OTHER_PASSWORD,
    )
    # The URLs name the user's databases: docbench connects there only to create its own.
    with _FileWatcher([results, home], secrets) as watcher:
        out = docbench(
            [
                "run",
                "analytics",
                "--systems",
                "postgresql,mariadb",
                "--variants",
                "pglz,default",
                "--data",
                str(small_data),
                "--tries",
                "2",
                "--timeout",
                "60",
                "--results",
                str(results),
                "--postgresql-url",
                pg.url(database="appdata"),
                "--mariadb-url",
                my.url(database="shop"),
            ]
        )
    said = out.stdout + out.stderr
    assert out.returncode == 0, said
    documents = {}
    for path in results.rglob("analytics.*.json"):
        document = json.loads(path.read_text())
        validate(document)
        documents[document["system"]] = document
    assert sorted(documents) == ["mariadb", "postgresql"], said
    for name, document in documents.items():
        assert document["complete"] and not document.get("error"), (name, document.get("error"))
        assert [a["status"] for a in document["answers"]] == ["ok"] * 5, (name, document["answers"])
        assert document["num_loaded_documents"] == 1000, name

    # (a) everything but docbench's database as it was: databases, roles, users, settings,
    # every table's rows
    after = {"postgresql": pg.inventory(), "mariadb": my.inventory()}
    for name in before:
        assert not _changes(before[name], after[name]), (name, _changes(before[name], after[name]))
    # (what was compared: the user's data, users and settings among it)
    assert before["postgresql"]["appdata: sales.orders"][0] == 2000
    assert {
        "appdata: public.bluesky_pglz",
        "appdata: sales.orders_id_seq",
        "postgres: public.notes",
        "template1: public.template_note",
        "setting work_mem",
    } <= before["postgresql"].keys()
    assert "app_reader" in {role[0] for role in before["postgresql"]["roles"]}
    assert before["mariadb"]["shop.orders"][0] == 2000
    assert {
        "shop.customers",
        "shop.bluesky_default",
        "mysql.global_priv",
        "mysql.innodb_table_stats",
        "variable local_infile",
    } <= before["mariadb"].keys()

    # (b) docbench's own database is the one thing added, marked, and stays after the run with
    # the variant's table (the next run drops and re-creates the table)
    with pg.connect("postgres") as conn:
        added = conn.execute("SELECT datname FROM pg_database").fetchall()
    assert sorted(set(added) - {(row[0],) for row in before["postgresql"]["databases"]}) == [("docbench",)]
    assert pg.docbench_database()[1].startswith(MARKER)
    with pg.connect("docbench") as conn:
        assert conn.execute("SELECT count(*) FROM bluesky_pglz").fetchone() == (1000,)
        tables = conn.execute(
            "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'v', 'm') "
            "AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
            "ORDER BY 2"
        ).fetchall()
        assert [t for t in tables if not t[1].startswith("pg_stat_statements")] == [
            ("public", "bluesky_pglz")
        ], tables
        extensions = conn.execute("SELECT extname FROM pg_extension ORDER BY 1").fetchall()
        assert set(extensions) <= {("plpgsql",), ("pg_stat_statements",)}, extensions
    shown = [row[0] for row in my.query("SHOW DATABASES")]
    assert sorted(set(shown) - {row[0] for row in before["mariadb"]["databases"]}) == ["docbench"]
    assert my.schema_comment().startswith(MARKER)
    assert my.query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'docbench'") == [
        ("bluesky_default",)
    ]
    assert my.query("SELECT COUNT(*) FROM docbench.bluesky_default") == [(1000,)]

    # (c) no password, nor a piece of one, in what docbench printed, its results, its work
    # and log directories (DOCBENCH_HOME) -- during the run or after it
    assert {p.parent.name for p in home.glob("work/*/load-checkpoint.json")} == {
        "postgresql-pglz",
        "mariadb-default",
    }  # the variants' work directories stay
    assert not [p for p in secrets if p in said], said
    assert watcher.reads > 3 and not watcher.found, watcher.found
    assert not _files_holding([tmp_path], secrets)  # results/, home/ (DOCBENCH_HOME), data/


# ----- MongoDB (a FerretDB the test starts) and FerretDB's managed server -----------------


@pytest.fixture(scope="module")
def ferret() -> Iterator[str]:
    """A FerretDB 2 on DocumentDB of its own (the managed server class, in a directory of this
    test): to the mongodb engine below it is someone else's server, reached by URL."""
    from docbench.systems.ferretdb.engine import FerretDBEngine, FerretDBServer

    if not FerretDBEngine.availability().ok:
        pytest.skip("FerretDB not installed (docbench setup ferretdb)")
    base = _base("docbench-foreignferret-")
    own = FerretDBServer(base)
    own.start()
    try:
        yield own.uri
    finally:
        own.stop()
        shutil.rmtree(base, ignore_errors=True)


def test_mongodb_foreign_database_is_left_alone(ferret: str, tmp_path: Path):
    from docbench.systems.mongodb.engine import MARKER_COLLECTION, MongoDBEngine, mongo_client

    client = mongo_client(ferret)
    try:
        client.drop_database("docbench")
        client["docbench"]["ycsb"].insert_many([{"_id": 1, "note": "mine"}, {"_id": 2}])
        engine = MongoDBEngine(tmp_path / "w", url=ferret)
        with pytest.raises(ForeignDatabase, match="MongoDB database 'docbench' on mongodb://127"):
            engine.start()
        engine.stop()
        assert client["docbench"].list_collection_names() == ["ycsb"]
        assert client["docbench"]["ycsb"].count_documents({}) == 2
        client.drop_database("docbench")  # the user drops it
        engine = MongoDBEngine(tmp_path / "w", url=ferret)
        engine.start()  # creates and marks
        mark = client["docbench"][MARKER_COLLECTION].find_one({"_id": "docbench"})
        assert mark and mark["created_by"].startswith(MARKER)
        engine.database()["ycsb"].insert_one({"_id": 3})
        engine.stop()
        engine = MongoDBEngine(tmp_path / "w", url=ferret)
        engine.start()  # recognised: its collections are docbench's
        engine.stop()
    finally:
        client.drop_database("docbench")
        client.close()


def test_ferretdb_managed_server_marks_its_database(tmp_path: Path):
    from docbench.systems.ferretdb.engine import FerretDBEngine
    from docbench.systems.mongodb.engine import MARKER_COLLECTION

    if not FerretDBEngine.availability().ok:
        pytest.skip("FerretDB not installed (docbench setup ferretdb)")
    engine = FerretDBEngine(tmp_path / "w")
    try:
        engine.start()
        db = engine.database()
        assert db[MARKER_COLLECTION].find_one({"_id": "docbench"})
        # an older docbench's database on its own server: no mark, yet docbench's
        db.drop_collection(MARKER_COLLECTION)
        db["ycsb"].insert_one({"_id": 1})
        engine.stop()
        engine.start()
        assert engine.database()[MARKER_COLLECTION].find_one({"_id": "docbench"})
        assert engine.database()["ycsb"].count_documents({}) == 1
    finally:
        engine.stop()


# ----- Elasticsearch / OpenSearch (one node, the code is shared) ---------------------------


@pytest.fixture(scope="module")
def search_node() -> Iterator:
    from docbench.systems import engine_class

    for name in ("opensearch", "elasticsearch"):
        cls = engine_class(name)
        if cls.availability().ok:
            break
    else:
        pytest.skip("neither OpenSearch nor Elasticsearch is installed")
    base = _base("docbench-urlsearch-")
    with pytest.MonkeyPatch.context() as monkey:
        monkey.setenv("DOCBENCH_SEARCH_HEAP", "512m")  # a small heap starts sooner
        engine = cls(base / "node")
        try:
            engine.start()
            yield engine
        finally:
            engine.stop()
            shutil.rmtree(base, ignore_errors=True)


def test_search_engine_index_of_the_same_name_is_left_alone(search_node, tmp_path: Path):
    from docbench.systems.searchengine import index as search_index
    from docbench.systems.searchengine.updates import INDEX, index_definition

    managed = search_node
    client = managed.client()
    client.request("DELETE", f"/{INDEX}", ok=(200, 404))
    client.request("PUT", f"/{INDEX}", {"settings": {"number_of_replicas": 0}})
    client.request("PUT", f"/{INDEX}/_doc/1?refresh=true", {"note": "mine"}, ok=(200, 201))
    by_url = type(managed)(tmp_path / "url", url=managed.base_url)
    by_url.start()
    with pytest.raises(ForeignDatabase, match=f"index '{INDEX}' on 127.0.0.1"):
        search_index.recreate(by_url.client(), INDEX, index_definition())
    assert search_index.count(client, INDEX) == 1
    assert search_index.state(client, INDEX) == "foreign"
    # a docbench that did not mark yet left it on its own node: the node's start marks it
    managed.stop()
    managed.start()
    assert search_index.state(managed.client(), INDEX) == "docbench"
    search_index.recreate(by_url.client(), INDEX, index_definition())  # now docbench's
    assert search_index.count(by_url.client(), INDEX) == 0
    assert search_index.state(by_url.client(), INDEX) == "docbench"
    by_url.stop()
    managed.client().request("DELETE", f"/{INDEX}")
