"""PostgreSQL 18 from Debian sid, run in docbench's own chroot (``setup.sh`` makes it).

:class:`SidCluster` is the postgresql system's :class:`~docbench.systems.postgresql.server.Cluster`
with its programs run inside the chroot: the work directory is bind-mounted at
``/srv/docbench`` in a mount namespace of the server's own (``server.Jail``), so initdb and
postgres see ``/srv/docbench/pgdata`` and ``/srv/docbench/run`` while docbench reads and sizes
the same files at ``<workdir>/pgdata`` on the host. Nothing stays mounted after the server's
processes end. The unprivileged ``docbench`` user gets the same uid/gid inside the chroot (its
files are the host's). With ``documentdb=True`` the cluster preloads DocumentDB (the
ferretdb system's engine).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from docbench.contracts.common import command_version
from docbench.core import paths
from docbench.servers import managed as server
from docbench.systems.postgresql.server import Cluster

BIN_DIR = Path("/usr/lib/postgresql/18/bin")  # inside the chroot
MOUNT_POINT = "/srv/docbench"
INSTALL_HINT = "docbench setup postgresql18  (Debian sid chroot by debootstrap; needs root)"
# DocumentDB's libraries and what they need (pg_cron's background workers; its own
# connections through the socket, as the superuser).
DOCUMENTDB_SETTINGS = {
    "shared_preload_libraries": "pg_stat_statements,pg_cron,pg_documentdb_core,pg_documentdb",
    "cron.database_name": "postgres",
    "cron.use_background_workers": "on",
    "max_worker_processes": "16",
    "documentdb.localhost_connection_string": f"host={MOUNT_POINT}/run",
    "documentdb.maxWriteBatchSize": "100000",
}


def root_dir() -> Path:
    """The chroot: ``$DOCBENCH_OPT/sid``."""
    return paths.opt_dir() / "sid"


def installed(root: Path | None = None) -> bool:
    root = root or root_dir()
    done = root / ".docbench-debootstrap-done"
    return done.exists() and (root / BIN_DIR.relative_to("/") / "postgres").exists()


def server_version(root: Path | None = None) -> str | None:
    """``PostgreSQL 18.x`` of the chroot's server (run inside it), None when it does not run."""
    root = root or root_dir()
    if os.geteuid() != 0 or not installed(root):
        return None
    line = command_version(["chroot", str(root), str(BIN_DIR / "postgres"), "--version"])
    return line.replace("postgres (PostgreSQL) ", "PostgreSQL ").split(" (")[0] if line else None


def has_documentdb(root: Path | None = None) -> bool:
    root = root or root_dir()
    return (root / "usr/share/postgresql/18/extension/documentdb.control").exists()


class SidCluster(Cluster):
    """A docbench cluster of the chroot's PostgreSQL 18."""

    def __init__(
        self,
        workdir: Path,
        settings: dict[str, str] | None = None,
        *,
        documentdb: bool = False,
        root: Path | None = None,
    ) -> None:
        super().__init__(workdir, bin_dir=BIN_DIR, settings=settings)
        self.root = root or root_dir()
        self.documentdb = documentdb
        self.jail = server.Jail(self.root, ((workdir, MOUNT_POINT),))

    def binary(self, name: str) -> str:
        if not installed(self.root):
            raise RuntimeError(
                f"PostgreSQL 18 is not installed in {self.root} (run `{INSTALL_HINT.split('  ')[0]}`)"
            )
        return str(BIN_DIR / name)

    def _prepare_workdir(self) -> None:
        super()._prepare_workdir()
        self.reachable = True  # the server walks the bind mount, not the host's path
        self._ensure_user_in_root()

    def _ensure_user_in_root(self) -> None:
        """The server user's passwd and group lines inside the chroot (initdb looks itself up)."""
        if self.user is None:
            return
        name, uid, gid = self.user.pw_name, self.user.pw_uid, self.user.pw_gid
        passwd = f"{name}:x:{uid}:{gid}:docbench:/nonexistent:/usr/sbin/nologin\n"
        for file, line in (
            (self.root / "etc/group", f"{name}:x:{gid}:\n"),
            (self.root / "etc/passwd", passwd),
        ):
            current = file.read_text()
            if not any(entry.split(":")[0] == name for entry in current.splitlines()):
                with file.open("a") as handle:
                    handle.write(line)

    @contextlib.contextmanager
    def data_reference(self):
        yield f"{MOUNT_POINT}/pgdata", f"{MOUNT_POINT}/run", ()

    def settings(self, port: int, run_ref: str | None = None) -> dict[str, str]:
        values = super().settings(port, run_ref)
        # sid's build: pg_stat_statements is in the server package; dynamic shared memory as
        # System V segments (the chroot has no /dev/shm of its own), no huge pages.
        values.update(
            {
                "shared_preload_libraries": "pg_stat_statements",
                "compute_query_id": "on",
                "pg_stat_statements.track": "top",
                "pg_stat_statements.track_planning": "on",
                "pg_stat_statements.save": "off",
                "dynamic_shared_memory_type": "sysv",
                "huge_pages": "off",
            }
        )
        if self.documentdb:
            values.update(DOCUMENTDB_SETTINGS)
        values.update(self.settings_override)
        return values


__all__ = [
    "BIN_DIR",
    "INSTALL_HINT",
    "SidCluster",
    "has_documentdb",
    "installed",
    "root_dir",
    "server_version",
]
