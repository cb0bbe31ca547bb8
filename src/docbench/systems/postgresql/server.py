"""A PostgreSQL cluster that docbench creates, starts and stops itself.

The cluster lives entirely inside the system's work directory::

    <workdir>/pgdata/          the data directory (initdb), owned by the unprivileged user
    <workdir>/run/             the unix socket directory (mode 0700)
    <workdir>/postgres.log     the server's stderr
    <workdir>/password         the generated password of the cluster's superuser (mode 0600)
    <workdir>/port             the port, kept across restarts

It listens on 127.0.0.1 only, on a free port, and runs as ``postgres -D <pgdata>``: a
:class:`~docbench.servers.managed.ManagedServer`, so that docbench knows its PID and stops it
(fast shutdown) at exit. Nothing outside the work directory is read or written, and no other
cluster on the machine (Debian's ``main`` included) is ever touched.
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import signal
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from docbench.core.machine import machine_memory
from docbench.core.ownership import claim_directory, remove_owned_directory
from docbench.servers import managed as server

SUPERUSER = "docbench"
# Linux limits a unix socket path (sun_path) to 107 bytes.
_SOCKET_PATH_MAX = 107
GiB = 1 << 30
# Connection errors of a server that is still starting (crash recovery included).
_NOT_YET_READY = ("Connection refused", "starting up", "recovery", "shutting down", "timeout")
# Start-up failures worth another try: the port was taken after free_ports(); orphaned backends
# of a killed postmaster still hold the old shared memory.
_TRANSIENT_START_ERRORS = (
    "Address already in use",
    "could not bind",
    "could not create any TCP",
    "shared memory block",
    "is still in use",
)
MiB = 1 << 20
# Overrides the RAM the server is sized for (e.g. `8G`), when the machine is shared.
RAM_OVERRIDE_ENV = "DOCBENCH_POSTGRESQL_RAM"


def find_bin_dir() -> Path | None:
    """The highest-version Debian PostgreSQL binary directory with a server in it."""
    candidates = []
    for path in glob.glob("/usr/lib/postgresql/*/bin"):
        version = Path(path).parent.name
        if (Path(path) / "postgres").exists() and (Path(path) / "initdb").exists():
            with contextlib.suppress(ValueError):
                candidates.append((tuple(int(p) for p in version.split(".")), Path(path)))
    if candidates:
        return max(candidates)[1]
    return None


def has_pg_stat_statements(bin_dir: Path) -> bool:
    """Whether the server's package library directory holds pg_stat_statements."""
    lib = bin_dir.parent / "lib" / "pg_stat_statements.so"
    return lib.exists()


def _mb(nbytes: int) -> str:
    return f"{max(1, nbytes // MiB)}MB"


def tuned_settings(ram: int | None = None, cores: int | None = None) -> dict[str, str]:
    """Server settings sized to the machine (see README.md for the reasoning)."""
    ram = ram if ram is not None else machine_memory(RAM_OVERRIDE_ENV)
    cores = cores if cores is not None else (os.cpu_count() or 1)
    return {
        # Memory: 25% of RAM for the buffer cache (capped at 16 GB, past which the OS page
        # cache does the job as well), the rest is left to the page cache.
        "shared_buffers": _mb(min(max(ram // 4, 128 * MiB), 16 * GiB)),
        "effective_cache_size": _mb(max(ram * 3 // 4, 256 * MiB)),
        # One client runs one query at a time: sorts and hashes may use RAM/64 each.
        "work_mem": _mb(min(max(ram // 64, 4 * MiB), 1 * GiB)),
        "maintenance_work_mem": _mb(min(max(ram // 16, 64 * MiB), 2 * GiB)),
        # Bulk load: no checkpoint storm during COPY, no WAL for the index build.
        "max_wal_size": "16GB",
        "min_wal_size": "1GB",
        "checkpoint_timeout": "30min",
        "wal_level": "minimal",
        "max_wal_senders": "0",
        "archive_mode": "off",
        # Durability stays on: a benchmark of a database that may lose data is not one.
        "fsync": "on",
        "synchronous_commit": "on",
        "full_page_writes": "on",
        # Parallelism: as many workers as cores.
        "max_worker_processes": str(max(8, cores)),
        "max_parallel_workers": str(cores),
        "max_parallel_workers_per_gather": str(max(1, min(cores, 8))),
        "max_parallel_maintenance_workers": str(max(1, min(cores, 4))),
        # Storage is SSD or page cache here.
        "random_page_cost": "1.1",
        "effective_io_concurrency": "200",
        # 64 concurrent query clients (`--clients 64`) beside the run's own connections
        # (the parent, a live-ingest probe and poller); PostgreSQL's default is 100.
        "max_connections": "200",
        "timezone": "UTC",
        "lc_messages": "C",
        "log_min_messages": "warning",
        "log_checkpoints": "off",
    }


def _quote_conf(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class _Postmaster(server.ManagedProcess):
    """``postgres -D``: stopped by a fast shutdown (SIGINT) rather than a smart one (SIGTERM),
    which would wait for every client to disconnect -- also when stopped at interpreter exit,
    and when docbench dies (its death signal: the clients of a killed docbench, e.g. a query
    worker, may linger). It may inherit a descriptor of its data directory (see
    :meth:`Cluster.data_reference`)."""

    stop_signal = signal.SIGINT


@dataclass
class ConnectionInfo:
    host: str
    port: int
    user: str
    dbname: str
    password_file: Path

    def conninfo(self, dbname: str | None = None) -> str:
        from psycopg.conninfo import make_conninfo

        return make_conninfo(
            host=self.host,
            port=self.port,
            user=self.user,
            dbname=dbname or self.dbname,
            password=self.password_file.read_text().strip(),
            connect_timeout=10,
            application_name="docbench",
        )


class Cluster(server.ManagedServer):
    """One initdb'ed cluster in ``workdir``: create, start, stop, restart after a crash.

    After a crash the start includes PostgreSQL's crash recovery (WAL replay: up to
    ``max_wal_size`` of it after a big load, hence the generous start timeout). A postmaster
    that exits during start-up is tried again for a minute when the reason is transient: the
    port was taken meanwhile, or orphaned backends of a killed postmaster keep the old shared
    memory until they notice and exit."""

    display_name = "PostgreSQL"
    process_class = _Postmaster
    start_timeout = 900.0
    start_tries = 30
    reuse_tries = 3
    retry_for = 60.0
    stop_timeout = 60.0

    def __init__(
        self, workdir: Path, bin_dir: Path | None = None, settings: dict[str, str] | None = None
    ) -> None:
        super().__init__(workdir, workdir / "postgres.log", user=server.ensure_unprivileged_user())
        self.bin_dir = bin_dir or find_bin_dir()
        self.data_dir = workdir / "pgdata"
        self.run_dir = workdir / "run"
        self.password_file = workdir / "password"
        self.settings_override = settings or {}
        self.reachable = True  # whether the server user can walk to the work directory
        self.blocked_by: str | None = None
        # Where initdb and postgres run: None on the host; a chroot for a build of another
        # distribution (the postgresql18 system's), with the work directory bound inside it.
        self.jail: server.Jail | None = None

    # ----- paths and binaries ----------------------------------------------------------
    def binary(self, name: str) -> str:
        if self.bin_dir is None:
            raise RuntimeError(
                "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin "
                "(run `docbench setup postgresql`)"
            )
        return str(self.bin_dir / name)

    def connection(self, dbname: str = "postgres") -> ConnectionInfo:
        if self.port is None:
            raise RuntimeError("the cluster has not been started")
        return ConnectionInfo("127.0.0.1", self.port, SUPERUSER, dbname, self.password_file)

    def environment(self) -> dict[str, str]:
        return {**os.environ, "LC_ALL": "C", "LANG": "C"}

    def _prepare_workdir(self) -> None:
        """Create the work directory; find out whether the server user can walk to it."""
        claim_directory(self.workdir)
        self.reachable = True
        if self.user is None:
            return
        # The work directory is docbench's own: let the server user traverse it.
        os.chmod(self.workdir, os.stat(self.workdir).st_mode | stat.S_IXOTH)
        self.blocked_by = server.first_blocked_ancestor(self.workdir, self.user)
        self.reachable = self.blocked_by is None

    @contextlib.contextmanager
    def data_reference(self):
        """(data directory, socket directory, descriptors to pass) as the server user sees them.

        Normally the real paths. When an ancestor of the work directory is closed to the server
        user (a DOCBENCH_HOME under /root or in pytest's 0700 temp directory, with docbench
        running as root), docbench opens both directories itself and hands the descriptors to
        initdb/postgres, which use ``/proc/self/fd/N``: the kernel follows that link without
        walking the closed ancestors, and no permission outside the work directory changes.
        Forked backends inherit the descriptors.
        """
        if self.reachable:
            yield str(self.data_dir), str(self.run_dir), ()
            return
        data_fd = os.open(self.data_dir, os.O_RDONLY | os.O_DIRECTORY)
        run_fd = os.open(self.run_dir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            yield f"/proc/self/fd/{data_fd}", f"/proc/self/fd/{run_fd}", (data_fd, run_fd)
        finally:
            os.close(data_fd)
            os.close(run_fd)

    @staticmethod
    def _socket_dir(run_ref: str, port: int) -> str:
        """The socket directory setting: none when the socket path would be too long."""
        return run_ref if len(f"{run_ref}/.s.PGSQL.{port}") <= _SOCKET_PATH_MAX else ""

    # ----- lifecycle -------------------------------------------------------------------
    def initialized(self) -> bool:
        return (self.data_dir / "PG_VERSION").exists()

    def init(self) -> None:
        """initdb a fresh cluster (only if the data directory has none yet)."""
        self._prepare_workdir()
        if self.initialized():
            return
        if self.data_dir.exists():
            # A half-made data directory from an interrupted initdb (ours: it is in our workdir).
            remove_owned_directory(self.data_dir)
        self.data_dir.mkdir(mode=0o700)
        self.run_dir.mkdir(mode=0o700, exist_ok=True)
        password = secrets.token_urlsafe(24)
        self.password_file.write_text(password + "\n")
        os.chmod(self.password_file, 0o600)
        pwfile = self.workdir / "pgdata.pwfile"
        pwfile.write_text(password + "\n")
        os.chmod(pwfile, 0o600)
        server.chown_tree(self.data_dir, self.user)
        server.chown_tree(self.run_dir, self.user)
        if self.user is not None:
            os.lchown(pwfile, self.user.pw_uid, self.user.pw_gid)
        try:
            with self.data_reference() as (data_ref, _run_ref, fds):
                out = subprocess.run(
                    [
                        self.binary("initdb"),
                        "-D",
                        data_ref,
                        "-U",
                        SUPERUSER,
                        "--encoding=UTF8",
                        "--locale=C",
                        "--auth-local=trust",
                        "--auth-host=scram-sha-256",
                        f"--pwfile={data_ref}/../{pwfile.name}",
                        "--no-instructions",
                    ],
                    capture_output=True,
                    text=True,
                    check=False,
                    pass_fds=fds,
                    cwd="/",
                    preexec_fn=server.jailed(self.user, self.jail),
                    env=self.environment(),
                )
        finally:
            pwfile.unlink(missing_ok=True)
        if out.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{out.stdout}\n{out.stderr}")
        conf = self.data_dir / "postgresql.conf"
        with conf.open("a") as handle:
            handle.write("\n# docbench: settings written at each start\ninclude 'docbench.conf'\n")

    def settings(self, port: int, run_ref: str | None = None) -> dict[str, str]:
        values = tuned_settings()
        values.update(
            {
                "listen_addresses": "127.0.0.1",
                "port": str(port),
                "unix_socket_directories": self._socket_dir(run_ref or str(self.run_dir), port),
                "unix_socket_permissions": "0700",
                "logging_collector": "off",
            }
        )
        if self.bin_dir is not None and has_pg_stat_statements(self.bin_dir):
            values.update(
                {
                    "shared_preload_libraries": "pg_stat_statements",
                    "compute_query_id": "on",
                    "pg_stat_statements.track": "top",
                    "pg_stat_statements.track_planning": "on",
                    "pg_stat_statements.save": "off",
                }
            )
        values.update(self.settings_override)
        return values

    def _write_settings(self, port: int, run_ref: str) -> None:
        lines = [f"{name} = {_quote_conf(value)}" for name, value in self.settings(port, run_ref).items()]
        path = self.data_dir / "docbench.conf"
        path.write_text("# written by docbench at each start; edits are lost\n" + "\n".join(lines) + "\n")
        server.chown_tree(path, self.user)

    # ----- what the managed-server loop asks of PostgreSQL --------------------------------
    def prepare(self) -> None:
        self.init()

    def launch(self, ports: tuple[int, ...]) -> server.ManagedProcess:
        (port,) = ports
        with self.data_reference() as (data_ref, run_ref, fds):
            self._write_settings(port, run_ref)
            argv = [self.binary("postgres"), "-D", data_ref]
            if data_ref != str(self.data_dir):
                # A placeholder setting, so that `ps` shows which cluster this is.
                argv += ["-c", f"docbench.data_directory={self.data_dir}"]
            process = self.process_class(
                argv,
                self.log_path,
                user=self.user,
                cwd=self.cwd,
                env=self.environment(),
                pass_fds=fds,
                jail=self.jail,
            )
            process.start()
        return process

    def ready(self, ports: tuple[int, ...]) -> bool:
        """Accepting connections -- or answering with an error that waiting will not cure
        (then the next connection raises it, instead of waiting out the start timeout)."""
        import psycopg

        try:
            return self._accepts(ports[0])
        except psycopg.OperationalError as error:
            return not any(m in str(error) for m in _NOT_YET_READY)

    def retryable(self, error: server.ServerExited) -> bool:
        return any(marker in str(error) for marker in _TRANSIENT_START_ERRORS)

    def _accepts(self, port: int) -> bool:
        import psycopg

        info = ConnectionInfo("127.0.0.1", port, SUPERUSER, "postgres", self.password_file)
        with psycopg.connect(info.conninfo(), connect_timeout=2) as conn:
            conn.execute("SELECT 1")
        return True

    def accepting(self) -> bool:
        if not self.running() or self.port is None:
            return False
        try:
            return self._accepts(self.port)
        except Exception:
            return False

    def children(self) -> list[int]:
        """PIDs of the postmaster's child processes (backends, checkpointer, workers...)."""
        if self.pid is None:
            return []
        return child_pids(self.pid)


def child_pids(parent: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            pids.append(int(entry.name))
    return pids
