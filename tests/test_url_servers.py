"""Servers given by URL (issue #13 C), against real servers the tests start themselves.

* docbench works only in a database (index) it created and marked as its own; a database of
  that name it did not create stops the run and stays as it was;
* passwords come from the URL, the environment or the client's own files, and never reach a
  command line (``ps``), a result, a log or an error message -- also one with ``@`` in it.

The PostgreSQL and MariaDB servers here are not docbench's: the tests initdb / install them
in a temporary directory from the installed binaries and run them as the unprivileged user,
with a password and (where a test wants one) a user database ``docbench`` holding a table.
"""

from __future__ import annotations

import contextlib
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
from docbench.systems import server
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


# ----- redaction (no server) -------------------------------------------------------------


@pytest.mark.parametrize(("url", "shown"), [
    ("mysql://rel:Secret@9@host", "mysql://rel:***@host"),
    ("mysql://rel:Pass@Secret9@127.0.0.1:1/other", "mysql://rel:***@127.0.0.1:1/other"),
    ("mysql://rel:Se%40cret@h:3306/db", "mysql://rel:***@h:3306/db"),
    ("postgresql://u:p@ss/w#rd?x@h/db", "postgresql://u:***@h/db"),
    ("postgresql://u:pw@[::1]:5432/db?sslmode=disable&password=zz",
     "postgresql://u:***@[::1]:5432/db?sslmode=disable&password=***"),
    ("postgresql://h/db?password=zz", "postgresql://h/db?password=***"),
    ("mongodb://u:pw@h1:27017,h2:27017/?replicaSet=rs", "mongodb://u:***@h1:27017,h2:27017/?replicaSet=rs"),
    ("elastic:changeme@localhost:9200", "elastic:***@localhost:9200"),
    ("https://elastic:a:b@es.local:9200/prefix", "https://elastic:***@es.local:9200/prefix"),
    ("mysql://rel:@h/db", "mysql://rel:***@h/db"),
    # nothing to hide: unchanged
    ("mysql://rel@h/db", "mysql://rel@h/db"),
    ("http://localhost:9200", "http://localhost:9200"),
    ("postgresql://u@h/db", "postgresql://u@h/db"),
    ("not a url", "not a url"),
    ("", ""),
])
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
    for same in ("postgresql://rel:x@h/db", "postgresql://h/db?user=u", "host=h password=p",
                 "postgresql://u@h/mail@example"):
        assert libpq_url(same) == same


def test_pgpass_line_escapes() -> None:
    assert _pgpass_line("a:b\\c") == "*:*:*:*:a\\:b\\\\c\n"


def test_mariadb_password_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """URL > ~/.my.cnf [client] > $MYSQL_PWD, as the mariadb client; option-file syntax."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MYSQL_PWD", raising=False)
    url = "mysql://127.0.0.1:3307/x"
    assert mengine.parse_url(url) == {"host": "127.0.0.1", "port": 3307, "user": "root",
                                      "password": ""}
    monkeypatch.setenv("MYSQL_PWD", "from-env")
    assert mengine.parse_url(url)["password"] == "from-env"
    (tmp_path / ".my.cnf").write_text(
        "# comment\n!includedir /etc/mysql/conf.d/\n[mysqld]\npassword=server-side\n"
        "[client]\nuser = fileuser\npassword = \"pa#ss\\\"word\"  # trailing comment\n"
        "ssl\n[mysql]\npassword=only-for-mysql\n")
    assert mengine.parse_url(url) == {"host": "127.0.0.1", "port": 3307, "user": "fileuser",
                                      "password": 'pa#ss"word'}
    assert mengine.parse_url("mysql://rel@h/x")["password"] == 'pa#ss"word'
    assert mengine.parse_url("mysql://rel:url%40pw@h/x") == {
        "host": "h", "port": 3306, "user": "rel", "password": "url@pw"}
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
            self.proc = subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd="/",
                                         preexec_fn=_demote(user), start_new_session=True)

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
        out = subprocess.run([str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", "rel",
                              f"--pwfile={pwfile}", "--auth-local=trust",
                              "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C",
                              "--no-instructions"], capture_output=True, text=True, cwd="/",
                             preexec_fn=_demote(self.user), check=False)
        pwfile.unlink()
        assert out.returncode == 0, out.stderr
        self.port = server.free_port()
        self._spawn([str(self.bin_dir / "postgres"), "-D", str(self.data),
                     "-c", "listen_addresses=127.0.0.1", "-c", f"port={self.port}",
                     "-c", f"unix_socket_directories={self.run}", "-c", "shared_buffers=32MB",
                     "-c", "max_connections=40", "-c", "fsync=off"], self.log, self.user)
        self._wait(lambda: self.connect("postgres").close() or True, self.log)

    def stop(self, sig: int = signal.SIGINT) -> None:  # fast shutdown
        super().stop(sig)

    def url(self, password: str | None = PG_PASSWORD, port: int | None = None) -> str:
        secret = f":{password}" if password is not None else ""
        return f"postgresql://rel{secret}@127.0.0.1:{port or self.port}/postgres"

    def connect(self, dbname: str):
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user="rel", password=PG_PASSWORD,
                               dbname=dbname, autocommit=True, connect_timeout=5)

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
            return conn.execute("SELECT oid, shobj_description(oid, 'pg_database') "
                                "FROM pg_database WHERE datname = 'docbench'").fetchone()


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
        argv = [install, "--no-defaults", f"--datadir={self.data}", "--skip-test-db",
                "--auth-root-authentication-method=normal", "--skip-name-resolve"]
        if self.user is not None:
            argv.append(f"--user={self.user.pw_name}")
        out = subprocess.run(argv, capture_output=True, text=True, cwd="/", check=False)
        assert out.returncode == 0, out.stderr
        server.chown_tree(self.base, self.user)
        self.port = server.free_port()
        self._spawn([binary, "--no-defaults", f"--datadir={self.data}", f"--socket={self.socket}",
                     f"--port={self.port}", "--bind-address=127.0.0.1", "--skip-name-resolve",
                     "--innodb-buffer-pool-size=64M", "--innodb-log-file-size=48M",
                     f"--pid-file={self.base}/mariadbd.pid", f"--tmpdir={self.base}",
                     "--performance-schema=0", "--local-infile=1"], self.log, self.user)
        self._wait(lambda: self._root().close() or True, self.log)
        with self._root() as conn, conn.cursor() as cur:
            cur.execute("CREATE USER 'rel'@'127.0.0.1' IDENTIFIED BY %s", (MY_PASSWORD,))
            cur.execute("GRANT ALL PRIVILEGES ON *.* TO 'rel'@'127.0.0.1'")

    def _root(self):
        import pymysql

        # root over TCP from 127.0.0.1 has no password before the test's user exists.
        return pymysql.connect(host="127.0.0.1", port=self.port, user="root", password="",
                               autocommit=True, connect_timeout=5)

    def url(self, password: str | None = MY_PASSWORD, port: int | None = None) -> str:
        secret = f":{password}" if password is not None else ""
        return f"mysql://rel{secret}@127.0.0.1:{port or self.port}/mysql"

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
        rows = self.query("SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA "
                          "WHERE SCHEMA_NAME = 'docbench'")
        return rows[0][0] if rows else None


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
    from docbench import paths

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


def docbench(argv: list[str], env: dict[str, str] | None = None,
             timeout: float = 900) -> subprocess.CompletedProcess:
    """``docbench ARGV`` in a process of its own (as a person runs it)."""
    command = [sys.executable, "-c", "from docbench.cli import main; main()", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "250", **(env or {})}, check=False)


def _files_holding(folders: list[Path], secrets: tuple[str, ...]) -> list[str]:
    """Files under ``folders`` whose bytes hold any secret (password or piece of it)."""
    found = []
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                found += [f"{path}: {s}" for s in secrets if s.encode() in data]
    return found


def _analytics(url_option: str, url: str, variant: str, data: Path, results: Path,
               env: dict[str, str] | None = None, by_env: bool = False) -> subprocess.CompletedProcess:
    system = url_option.split("-")[2]
    argv = ["run", "analytics", "--systems", system, "--variants", variant, "--data", str(data),
            "--tries", "1", "--timeout", "60", "--results", str(results)]
    if by_env:
        env = {**(env or {}), f"DOCBENCH_{system.upper()}_URL": url}
    else:
        argv += [url_option, url]
    return docbench(argv, env)


# ----- PostgreSQL ---------------------------------------------------------------------------


def test_postgresql_foreign_database_stops_the_run_untouched(pg: ForeignPostgres, home: Path,
                                                             small_data: Path, tmp_path: Path):
    pg.fresh(with_foreign_database=True)
    before = pg.docbench_database()
    out = _analytics("--postgresql-url", pg.url(), "pglz", small_data, tmp_path / "results")
    said = " ".join((out.stdout + out.stderr).split())  # the terminal's line breaks
    assert out.returncode != 0, said
    assert "PostgreSQL database 'docbench' on 127.0.0.1" in said and "not created by docbench" in said
    assert "DROP DATABASE docbench" in said  # how to proceed
    with pg.connect("docbench") as conn:
        assert conn.execute("SELECT id, note FROM bluesky_pglz ORDER BY id").fetchall() == FOREIGN_ROWS
        tables = conn.execute("SELECT relname FROM pg_class WHERE relkind IN ('r', 'i', 'v', 'm') "
                              "AND relnamespace = 'public'::regnamespace ORDER BY 1").fetchall()
        assert tables == [("bluesky_pglz",), ("bluesky_pglz_pkey",)]
        assert conn.execute("SELECT count(*) FROM pg_extension WHERE extname = "
                            "'pg_stat_statements'").fetchone() == (0,)
    assert pg.docbench_database() == before and before[1] is None  # not even marked
    assert not any(p in said for p in PIECES)
    assert not _files_holding([tmp_path], PIECES)


def test_postgresql_database_is_created_marked_and_reused(pg: ForeignPostgres, home: Path,
                                                          small_data: Path, tmp_path: Path):
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
        pg: ForeignPostgres, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
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
        out = subprocess.run([engine.pgbench_path(), "-n", "-t", "1", "-f", str(script), conninfo],
                             capture_output=True, text=True, env=env, check=False)
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
            out = subprocess.run(["ps", "-eww", "-o", "args="], capture_output=True, text=True,
                                 check=False)
            self.lines.update(out.stdout.splitlines())
            for path in self.home.rglob("password") if self.home else []:
                with contextlib.suppress(OSError):
                    self.passwords.add(path.read_text().strip())
            time.sleep(0.05)

    def __enter__(self) -> _PsWatcher:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _throughput(results: Path, env: dict[str, str], extra: list[str] | None = None):
    return docbench(["run", "throughput", "--systems", "postgresql", "--docs", "2000",
                     "--clients", "2", "--duration", "3", "--warmup", "0", "--mix", "read-write",
                     "--no-ceiling", "--results", str(results), *(extra or [])], env)


def _pgbench_runs(lines: set[str]) -> list[str]:
    return [line for line in lines if "pgbench" in line.split(" ", 1)[0]]


def test_pgbench_gets_no_password_on_its_command_line_by_url(pg: ForeignPostgres, home: Path,
                                                               tmp_path: Path):
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


def test_connection_errors_hide_a_password_with_at(pg: ForeignPostgres, home: Path,
                                                   tmp_path: Path, small_data: Path):
    closed = server.free_port()
    cases = [("--postgresql-url", f"postgresql://rel:Pass@Secret9url@127.0.0.1:{closed}/other",
              f"postgresql://rel:***@127.0.0.1:{closed}/other"),
             ("--mariadb-url", "mysql://rel:Pass@Secret9url@127.0.0.1:1/other",
              "mysql://rel:***@127.0.0.1:1/other"),
             ("--postgresql-url", f"postgresql://rel:Wrong@Secret9url@127.0.0.1:{pg.port}/postgres",
              f"postgresql://rel:***@127.0.0.1:{pg.port}/postgres")]
    for option, url, shown in cases:
        out = _analytics(option, url, "default" if "mariadb" in option else "pglz", small_data,
                         tmp_path / "results", by_env=True)
        said = out.stdout + out.stderr
        assert out.returncode != 0 and shown in " ".join(said.split()), said
        assert "Secret9url" not in said and "Pass@" not in said and "Wrong@" not in said
    assert "password authentication failed" in " ".join(said.split())
    assert not _files_holding([tmp_path], ("Secret9url",))


# ----- MariaDB ------------------------------------------------------------------------------


def test_mariadb_foreign_database_stops_the_run_untouched(my: ForeignMariaDB, home: Path,
                                                          small_data: Path, tmp_path: Path):
    my.fresh(with_foreign_database=True)
    out = _analytics("--mariadb-url", my.url(), "default", small_data, tmp_path / "results",
                     by_env=True)
    said = " ".join((out.stdout + out.stderr).split())  # the terminal's line breaks
    assert out.returncode != 0, said
    assert "MariaDB database 'docbench' on 127.0.0.1" in said and "not created by docbench" in said
    assert my.query("SELECT id, note FROM docbench.bluesky_default ORDER BY id") == FOREIGN_ROWS
    assert my.query("SELECT TABLE_NAME FROM information_schema.TABLES "
                    "WHERE TABLE_SCHEMA = 'docbench'") == [("bluesky_default",)]
    assert not my.schema_comment()
    with pytest.raises(ForeignDatabase):
        mengine.MariaDBEngine(tmp_path / "w", url=my.url()).start()
    assert not any(p in said for p in PIECES)
    assert not _files_holding([tmp_path], PIECES)


def test_mariadb_database_is_created_marked_and_reused_with_password_from_the_environment(
        my: ForeignMariaDB, home: Path, small_data: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch):
    my.fresh(with_foreign_database=False)
    url = my.url(password=None)
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    monkeypatch.delenv("MYSQL_PWD", raising=False)
    assert not mengine.MariaDBEngine.availability(url).ok  # no password: refused
    # ~/.my.cnf [client]
    (tmp_path / "userhome").mkdir()
    (tmp_path / "userhome" / ".my.cnf").write_text(f"[client]\npassword=\"{MY_PASSWORD}\"\n")
    engine = mengine.MariaDBEngine(tmp_path / "w1", url=url)
    engine.start()
    engine.stop()
    comment = my.schema_comment()
    assert comment and comment.startswith(MARKER)
    (tmp_path / "userhome" / ".my.cnf").unlink()
    # MYSQL_PWD, through a whole run whose URL comes from the environment too
    results = tmp_path / "results"
    out = _analytics("--mariadb-url", url, "default", small_data, results,
                     env={"MYSQL_PWD": MY_PASSWORD, "HOME": str(tmp_path / "userhome")},
                     by_env=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert my.schema_comment() == comment
    assert my.query("SELECT COUNT(*) FROM docbench.bluesky_default")[0][0] > 900
    assert not any(p in out.stdout + out.stderr for p in PIECES)
    assert not _files_holding([results, home], PIECES)


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
