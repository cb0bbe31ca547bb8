"""docbench's own MariaDB server: mariadb-install-db into the work directory, mariadbd as the
unprivileged user on 127.0.0.1 and a free port (kept across restarts in ``<workdir>/port``), a
:class:`~docbench.servers.managed.ManagedServer`. Never Debian's service or /var/lib/mysql."""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from docbench.core.machine import machine_memory
from docbench.core.ownership import claim_directory, remove_owned_directory
from docbench.servers import managed as server

GiB = 1024**3
MiB = 1024**2
ADMIN_USER = "docbench"
# Overrides the RAM the server is sized for (e.g. `8G`), when the machine is shared.
RAM_OVERRIDE_ENV = "DOCBENCH_MARIADB_RAM"
# sun_path is 108 bytes including the final NUL.
_SOCKET_PATH_MAX = 107


def find_binary(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
        for folder in ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"):
            candidate = Path(folder) / name
            if candidate.exists() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def server_binary() -> str | None:
    return find_binary("mariadbd", "mysqld")


def install_db_binary() -> str | None:
    return find_binary("mariadb-install-db", "mysql_install_db")


def client_binary() -> str | None:
    return find_binary("mariadb", "mysql")


def tuned_options() -> dict[str, str]:
    """Server options sized to this machine (see README)."""
    ram = machine_memory(RAM_OVERRIDE_ENV)
    pool = min(max(ram // 4, 128 * MiB), 4 * GiB)
    pool -= pool % (128 * MiB) or 0
    tmp_table = min(max(ram // 32, 64 * MiB), 1 * GiB)
    return {
        "innodb-buffer-pool-size": str(max(pool, 128 * MiB)),
        # Cold runs are cold: no buffer pool dump at shutdown / reload at start-up.
        "innodb-buffer-pool-dump-at-shutdown": "0",
        "innodb-buffer-pool-load-at-startup": "0",
        # Bulk load: a redo log big enough to avoid checkpoint storms; a bigger sort buffer
        # for the index build (its maximum).
        "innodb-log-file-size": str(1 * GiB),
        "innodb-log-buffer-size": str(64 * MiB),
        "innodb-sort-buffer-size": str(64 * MiB),
        # Durability stays on (commit = fsync of the redo log), as the server ships.
        "innodb-flush-log-at-trx-commit": "1",
        "innodb-compression-algorithm": "zlib",
        # GROUP BY of Q1-Q5 in memory when possible.
        "tmp-table-size": str(tmp_table),
        "max-heap-table-size": str(tmp_table),
        "sort-buffer-size": str(64 * MiB),
        "max-allowed-packet": str(1 * GiB),
        # 64 concurrent query clients (`--clients 64`) beside the run's own connections
        # (the parent, a live-ingest probe and poller): 50 refused the 64th client.
        "max-connections": "200",
        "character-set-server": "utf8mb4",
        "collation-server": "utf8mb4_bin",
        "default-time-zone": "+00:00",
        "local-infile": "1",
        "skip-name-resolve": "1",
        "performance-schema": "0",
    }


class MariaDBServer(server.ManagedServer):
    """One mariadb-install-db'ed data directory in ``workdir`` and the mariadbd serving it.
    SIGTERM is its normal shutdown (InnoDB flushes); SIGKILL after two minutes."""

    display_name = "MariaDB"
    start_timeout = 600.0
    start_tries = 3
    reuse_tries = 1
    stop_timeout = 120.0

    def __init__(self, workdir: Path, options: dict[str, str] | None = None) -> None:
        super().__init__(workdir, workdir / "mariadb.log", user=server.ensure_unprivileged_user())
        self.server_dir = workdir / "mariadb"  # owned by the server user
        self.data_dir = self.server_dir / "data"
        self.run_dir = self.server_dir / "run"
        self.tmp_dir = self.server_dir / "tmp"
        self.password_file = workdir / "password"
        self.options_override = options or {}

    # ----- paths -------------------------------------------------------------------------
    @property
    def socket_path(self) -> Path:
        path = self.run_dir / "mysqld.sock"
        if len(str(path)) <= _SOCKET_PATH_MAX:
            return path
        # A long work directory: the socket goes to a short private directory under /tmp
        # named after the work directory (docbench connects over TCP anyway).
        digest = hashlib.sha1(str(self.workdir).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"docbench-mariadb-{digest}" / "mysqld.sock"

    def password(self) -> str:
        return self.password_file.read_text().strip()

    def _own(self, path: Path) -> None:
        server.chown_tree(path, self.user)

    def _prepare(self) -> None:
        claim_directory(self.workdir)
        if self.user is not None:
            os.chmod(self.workdir, os.stat(self.workdir).st_mode | stat.S_IXOTH)
            blocked = server.first_blocked_ancestor(self.workdir, self.user)
            if blocked:
                raise RuntimeError(
                    f"the MariaDB server runs as user {self.user.pw_name!r}, which cannot enter "
                    f"{blocked}; use a work directory it can reach (e.g. DOCBENCH_HOME under "
                    f"/var/tmp) or `chmod o+x {blocked}`"
                )
        for folder in (self.server_dir, self.run_dir, self.tmp_dir, self.socket_path.parent):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._own(folder)

    # ----- lifecycle ---------------------------------------------------------------------
    def initialized(self) -> bool:
        return (self.data_dir / "mysql" / "global_priv.frm").exists() and self.password_file.exists()

    def init(self) -> None:
        """mariadb-install-db into a fresh data directory (only if there is none yet); docbench's
        account is made at the first start (:meth:`started`)."""
        self._prepare()
        if self.initialized():
            return
        if self.data_dir.exists():  # half-made by an interrupted init: ours, in our workdir
            remove_owned_directory(self.data_dir)
        self.password_file.unlink(missing_ok=True)
        install = install_db_binary()
        if install is None:
            raise RuntimeError("mariadb-install-db not found (run `docbench setup mariadb`)")
        argv = [
            install,
            "--no-defaults",
            f"--datadir={self.data_dir}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ]
        if self.user is not None:
            argv.append(f"--user={self.user.pw_name}")
        out = subprocess.run(argv, capture_output=True, text=True, check=False, cwd="/")
        if out.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed:\n{out.stdout}\n{out.stderr}")
        self._own(self.data_dir)

    def _make_account(self) -> None:
        """First start: root@127.0.0.1 has no password yet; make docbench's own account with a
        generated password and drop the password-less TCP accounts."""
        assert self.port is not None
        password = secrets.token_urlsafe(24)
        import pymysql

        conn = pymysql.connect(
            host="127.0.0.1", port=self.port, user="root", password="", connect_timeout=10, autocommit=True
        )
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT user, host FROM mysql.user WHERE user = 'root' AND host <> 'localhost'")
                others = cur.fetchall()
                cur.execute(f"CREATE USER '{ADMIN_USER}'@'127.0.0.1' IDENTIFIED BY %s", (password,))
                cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO '{ADMIN_USER}'@'127.0.0.1' WITH GRANT OPTION")
                cur.execute("ALTER USER 'root'@'localhost' IDENTIFIED BY %s", (password,))
                for user, host in others:
                    cur.execute("DROP USER %s@%s", (user, host))
        finally:
            conn.close()
        self.password_file.write_text(password + "\n")
        os.chmod(self.password_file, 0o600)

    def options(self, port: int) -> dict[str, str]:
        values = tuned_options()
        values.update(
            {
                "datadir": str(self.data_dir),
                "socket": str(self.socket_path),
                "port": str(port),
                "bind-address": "127.0.0.1",
                "skip-networking": "0",
                "pid-file": str(self.run_dir / "mariadbd.pid"),
                "tmpdir": str(self.tmp_dir),
            }
        )
        values.update(self.options_override)
        return values

    def argv(self, port: int) -> list[str]:
        binary = server_binary()
        if binary is None:
            raise RuntimeError("mariadbd not found (run `docbench setup mariadb`)")
        return [binary, "--no-defaults", *(f"--{k}={v}" for k, v in self.options(port).items())]

    # ----- what the managed-server loop asks of MariaDB -----------------------------------
    def prepare(self) -> None:
        self.init()

    def command(self, ports: tuple[int, ...]) -> list[str]:
        return self.argv(ports[0])

    def ready(self, ports: tuple[int, ...]) -> bool:
        import pymysql

        try:
            # A read timeout too: whatever else listens on a port taken meanwhile may never
            # answer the handshake (the wait must go on to see the server exit).
            pymysql.connect(
                host="127.0.0.1",
                port=ports[0],
                user="nobody-docbench-probe",
                password="x",
                connect_timeout=2,
                read_timeout=2,
            ).close()
        except pymysql.err.OperationalError as error:
            # 1045 access denied = the server answers the protocol: it is up.
            return bool(error.args) and error.args[0] in (1045, 1698)
        return True

    def started(self) -> None:
        if not self.password_file.exists():
            self._make_account()

    def accepting(self) -> bool:
        if not self.running() or self.port is None:
            return False
        import pymysql

        try:
            conn = pymysql.connect(
                host="127.0.0.1", port=self.port, user=ADMIN_USER, password=self.password(), connect_timeout=5
            )
            conn.close()
            return True
        except Exception:  # noqa: BLE001
            return False
