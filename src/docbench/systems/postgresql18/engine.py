"""PostgreSQL 18 (Debian sid's build, in docbench's chroot) beside Debian's PostgreSQL 15.

The postgresql system's engine with another managed cluster (:class:`~.cluster.SidCluster`):
same database, DDL, queries, loader and adapters, so results compare the two versions on the
same data. By URL (``--postgresql18-url``) it is any PostgreSQL 18 the user has. Client
programs (psql for the native load, pgbench for the throughput reference) are the host's:
libpq and both programs speak to a newer server.
"""

from __future__ import annotations

from pathlib import Path

from docbench.contracts.common import Availability
from docbench.systems.postgresql import server as pgserver
from docbench.systems.postgresql.engine import PostgreSQLEngine
from docbench.systems.postgresql18 import cluster as sid


class PostgreSQL18Engine(PostgreSQLEngine):
    name = "postgresql18"
    display_name = "PostgreSQL 18"
    runs_by_default = False
    url_example = "postgresql://user@localhost:5432/postgres"
    install_hint = sid.INSTALL_HINT
    notes = (
        "PostgreSQL 18 (Debian sid's postgresql-18, built --with-lz4) in a chroot docbench "
        "makes with debootstrap, managed like PostgreSQL 15 (initdb, 127.0.0.1, own port); "
        "the postgresql system's DDL, queries and adapters unchanged."
    )

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        self.cluster = None if url else sid.SidCluster(workdir)

    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        if url:
            return super().availability(url)
        if not sid.installed():
            return Availability(
                False, reason=f"no PostgreSQL 18 chroot at {sid.root_dir()}", install_hint=sid.INSTALL_HINT
            )
        version = sid.server_version()
        if version is None:
            return Availability(
                False,
                reason="the chroot's postgres does not run (docbench must run as root to use the chroot)",
                install_hint=sid.INSTALL_HINT,
            )
        return Availability(True, version=version)

    @property
    def bin_dir(self) -> Path | None:
        """The host's client programs (the server's own run only inside the chroot)."""
        return pgserver.find_bin_dir()


ENGINE = PostgreSQL18Engine

__all__ = ["ENGINE", "PostgreSQL18Engine"]
