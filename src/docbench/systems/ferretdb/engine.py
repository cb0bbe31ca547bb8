"""FerretDB's engine handle: FerretDB 2 on DocumentDB (PostgreSQL 18), managed; or a user's
MongoDB-compatible server by URL.

``docbench setup ferretdb`` (``setup.sh``) installs DocumentDB (Debian sid's
``postgresql-18-documentdb``) into the postgresql18 system's chroot and builds FerretDB 2 from
the Go module proxy into ``$DOCBENCH_OPT/bin/ferretdb2``. docbench then runs two servers, both
on 127.0.0.1 and free ports, both in the work directory and stopped by PID:

* a PostgreSQL 18 cluster with DocumentDB preloaded (:class:`~docbench.systems.postgresql18.
  cluster.SidCluster` in ``<workdir>/postgresql``; ``CREATE EXTENSION documentdb CASCADE`` in
  its database ``postgres``, which holds every collection);
* FerretDB, the MongoDB wire protocol in front of it (``--no-auth``: it listens on loopback
  only; its PostgreSQL URL, with the cluster's password, is read from a 0600 file, never from
  the command line or a log).

Cold runs restart both. The engine builds on MongoDB's (``docbench/systems/mongodb/engine.py``):
the same pymongo client, database ``docbench`` and buildInfo.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from urllib.parse import quote

from docbench.contracts.common import Availability, command_version, directory_size
from docbench.core import paths
from docbench.core.jsontypes import JsonObject
from docbench.core.ownership import claim_directory
from docbench.servers import managed as server
from docbench.systems.mongodb.engine import (
    PYMONGO_HINT,
    MongoDBEngine,
    import_pymongo,
    mongo_client,
)
from docbench.systems.postgresql18 import cluster as sid

PINNED_VERSION = "v2.7.0"
INSTALL_HINT = (
    "docbench setup ferretdb  (DocumentDB in the PostgreSQL 18 chroot, FerretDB "
    "v2.7.0 from the Go module proxy; needs root and go)"
)
START_TIMEOUT = 60.0
BINARY_NAME = "ferretdb2"
BACKEND = "DocumentDB on PostgreSQL 18"


def find_binary() -> Path | None:
    """The ferretdb2 that ``docbench setup ferretdb`` built."""
    built = paths.opt_dir() / "bin" / BINARY_NAME
    if built.exists() and os.access(built, os.X_OK):
        return built
    found = shutil.which(BINARY_NAME)
    return Path(found) if found else None


def binary_version(binary: Path) -> str | None:
    """``v2.7.0`` from ``ferretdb --version`` (first line ``version: v2.7.0``)."""
    line = command_version([str(binary), "--version"])
    if line and line.startswith("version:"):
        return line.split(":", 1)[1].strip()
    return None


def answers(port: int) -> bool:
    """Whether a FerretDB on 127.0.0.1:port answers a ping."""
    if not server.port_open(port):
        return False
    client = mongo_client(f"mongodb://127.0.0.1:{port}/", serverSelectionTimeoutMS=1000)
    try:
        client.admin.command("ping")
        return True
    finally:
        client.close()


# The application_name FerretDB's connection pool gives its backends (FerretDB sets it itself,
# whatever its URL says): what tells them from any other connection to the cluster (docbench's
# own are "docbench").
POOL_APPLICATION = "FerretDB"


class FerretDBServer(server.ManagedServer):
    """FerretDB 2 (``workdir/ferretdb.log``, ``workdir/state``) on its own DocumentDB cluster
    (``workdir/postgresql``), which starts first and stops last."""

    display_name = "FerretDB"
    start_timeout = START_TIMEOUT

    def __init__(
        self, workdir: Path, binary: Path | None = None, settings: dict[str, str] | None = None
    ) -> None:
        super().__init__(workdir, workdir / "ferretdb.log", cwd=workdir)
        self.binary = binary or find_binary()
        self.cluster = sid.SidCluster(workdir / "postgresql", settings, documentdb=True)
        self.state_dir = workdir / "state"
        self.url_file = workdir / "postgresql-url"

    @property
    def data_dir(self) -> Path:
        """DocumentDB's data: the cluster's data directory."""
        return self.cluster.data_dir

    @property
    def uri(self) -> str:
        if self.port is None:
            raise RuntimeError("FerretDB has not been started")
        return f"mongodb://127.0.0.1:{self.port}/"

    def argv(self, port: int) -> list[str]:
        if self.binary is None:
            raise RuntimeError(f"FerretDB is not installed (run `{INSTALL_HINT.split('  ')[0]}`)")
        return [
            str(self.binary),
            f"--postgresql-url-file={self.url_file}",
            f"--listen-addr=127.0.0.1:{port}",
            "--no-auth",
            "--telemetry=disable",
            "--debug-addr=-",
            f"--state-dir={self.state_dir}",
            "--log-level=warn",
        ]

    def running(self) -> bool:
        return super().running() and self.cluster.running()

    def server_pids(self) -> list[int]:
        """FerretDB, the postmaster, then its children (DocumentDB's backends and workers)."""
        pids = [self.pid] if self.pid else []
        if self.cluster.pid is not None:
            pids += [self.cluster.pid, *self.cluster.children()]
        return pids

    def _start_documentdb(self) -> None:
        import psycopg

        self.cluster.start()
        with psycopg.connect(self.cluster.connection("postgres").conninfo(), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS documentdb CASCADE")
        info = self.cluster.connection("postgres")
        password = quote(info.password_file.read_text().strip(), safe="")
        # FerretDB's own connection pool to DocumentDB; the file is the only place the
        # password goes (mode 0600, docbench's work directory).
        partial = self.url_file.with_name(self.url_file.name + ".tmp")
        partial.write_text(
            f"postgres://{info.user}:{password}@127.0.0.1:{info.port}/postgres?pool_max_conns=20\n"
        )
        os.chmod(partial, 0o600)
        os.replace(partial, self.url_file)

    # ----- what the managed-server loop asks of FerretDB ----------------------------------
    def prepare(self) -> None:
        claim_directory(self.workdir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self._start_documentdb()

    def command(self, ports: tuple[int, ...]) -> list[str]:
        return self.argv(ports[0])

    def ready(self, ports: tuple[int, ...]) -> bool:
        return answers(ports[0])

    def stop(self) -> None:
        super().stop()
        self.cluster.stop()


class FerretDBEngine(MongoDBEngine):
    name = "ferretdb"
    display_name = "FerretDB"
    embedded = False
    url_only = False  # docbench's own FerretDB on DocumentDB, or the user's by URL
    runs_by_default = False
    url_example = "mongodb://user:password@host:27017"
    install_hint = INSTALL_HINT
    notes = (
        "FerretDB v2.7.0 on DocumentDB (PostgreSQL 18 extension, Debian sid's package in "
        "docbench's chroot), both managed on 127.0.0.1; runs the mongodb system's pipelines "
        "unchanged. Sizes come from DocumentDB's collStats (PostgreSQL relation sizes), "
        "explain output is DocumentDB's (PostgreSQL plans), compression is PostgreSQL's "
        "TOAST (pglz or lz4), not WiredTiger's."
    )

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        # The managed servers (None when a user's server is reached by URL).
        self.server: FerretDBServer | None = None if url else FerretDBServer(workdir)

    # ----- discovery ---------------------------------------------------------------------
    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            import_pymongo()
        except ImportError:
            return Availability(False, reason="pymongo is not installed", install_hint=PYMONGO_HINT)
        if url:
            return super().availability(url)
        binary = find_binary()
        if binary is None:
            return Availability(
                False,
                reason=f"no {BINARY_NAME} in {paths.opt_dir() / 'bin'} or on PATH",
                install_hint=INSTALL_HINT,
            )
        version = binary_version(binary)
        if version is None:
            return Availability(False, reason=f"{binary} --version does not run", install_hint=INSTALL_HINT)
        if not sid.installed() or not sid.has_documentdb():
            return Availability(
                False,
                reason=f"no DocumentDB in the PostgreSQL 18 chroot {sid.root_dir()}",
                install_hint=INSTALL_HINT,
            )
        postgres = sid.server_version()
        if postgres is None:
            return Availability(
                False,
                reason="the chroot's PostgreSQL does not run (docbench must run as root to use the chroot)",
                install_hint=INSTALL_HINT,
            )
        return Availability(True, version=f"FerretDB {version} on DocumentDB ({postgres})")

    @property
    def can_restart(self) -> bool:
        """The managed servers restart; a user's server reached by URL does not."""
        return self.server is not None

    @property
    def owns_server(self) -> bool:
        """The managed server is docbench's: its database is marked whatever is in it."""
        return self.server is not None

    # ----- the managed server (public: the adapters use them) -------------------------------
    def uri(self) -> str:
        if self.server is None:
            return super().uri()
        return self.server.uri

    @property
    def data_dir(self) -> Path | None:
        """DocumentDB's PostgreSQL data directory (None for a server reached by URL)."""
        return self.server.data_dir if self.server is not None else None

    def server_pids(self) -> list[int]:
        return self.server.server_pids() if self.server is not None else []

    def query_pids(self) -> list[int]:
        """FerretDB and the PostgreSQL backends of its connection pool (where DocumentDB runs
        the pipelines): not the postmaster, checkpointer or pg_cron's workers. Their peaks are
        summed, so shared buffers several backends touched count once per backend (an upper
        bound)."""
        if self.server is None:
            return []
        pids = [self.server.pid] if self.server.pid else []
        # The pool's backends by the application name FerretDB connects with: any other
        # connection to the cluster (docbench's own, for ANALYZE or a size) is not the
        # query's cost, and ends while the query's figures are read.
        with self.documentdb_connection() as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s ORDER BY pid",
                (POOL_APPLICATION,),
            ).fetchall()
        return pids + [int(row[0]) for row in rows]

    def documentdb_connection(self):
        """An autocommit psycopg connection to DocumentDB's database (managed server only):
        for what the wire protocol does not reach, such as a collection's TOAST compression."""
        import psycopg

        if self.server is None:
            raise RuntimeError("DocumentDB's PostgreSQL is reachable only on docbench's own server")
        return psycopg.connect(self.server.cluster.connection("postgres").conninfo(), autocommit=True)

    def collection_table(self, collection: str) -> str:
        """The PostgreSQL table DocumentDB keeps ``docbench.<collection>`` in."""
        from docbench.systems.mongodb.engine import DATABASE

        with self.documentdb_connection() as conn:
            row = conn.execute(
                "SELECT collection_id FROM documentdb_api_catalog.collections "
                "WHERE database_name = %s AND collection_name = %s",
                (DATABASE, collection),
            ).fetchone()
        if row is None:
            raise RuntimeError(f"DocumentDB has no collection {DATABASE}.{collection}")
        return f"documentdb_data.documents_{int(row[0])}"

    def analyze(self, collection: str) -> str:
        """ANALYZE the collection's table on docbench's own server, the statement run.

        Right after a load, before autovacuum's analyze has come by, PostgreSQL plans DocumentDB's
        queries without statistics: 2,000 uniform finds by a unique key measured p50 15 ms,
        p90 66 ms then, 0.73 ms and 0.95 ms after ANALYZE. docbench analyzes PostgreSQL's own
        tables after a load too (VACUUM ANALYZE), so both are measured in their settled state."""
        table = self.collection_table(collection)
        with self.documentdb_connection() as conn:
            conn.execute(f"ANALYZE {table}")
        return f"ANALYZE {table}"

    # ----- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        if self.server is not None:
            claim_directory(self.workdir)
            self.server.start()
        super().start()

    def stop(self) -> None:
        self.release()
        if self.server is not None:
            self.server.stop()

    def restart(self) -> None:
        """Stop and start both servers (same ports), so the next query finds them cold."""
        if self.server is None:
            return
        self.release()
        self.server.stop()
        self.server.start()

    def is_alive(self) -> bool:
        if self.server is not None and not self.server.running():
            return False
        return super().is_alive()

    # ----- disk --------------------------------------------------------------------------
    def on_disk(self) -> int | None:
        return directory_size(self.server.data_dir) if self.server is not None else None

    def storage_detail(self) -> JsonObject:
        return {"backend": BACKEND}

    # ----- versions ----------------------------------------------------------------------
    def versions(self) -> dict[str, str]:
        found = super().versions()
        if "ferretdb" not in found and self.server is not None and self.server.binary:
            version = binary_version(self.server.binary)
            if version:
                found["ferretdb"] = version
        if self.server is not None and self.server.cluster.running():
            with contextlib.suppress(Exception), self.documentdb_connection() as conn:
                found["postgresql"] = str(conn.execute("SHOW server_version").fetchone()[0])
                row = conn.execute(
                    "SELECT extversion FROM pg_extension WHERE extname = 'documentdb'"
                ).fetchone()
                if row:
                    found["documentdb"] = str(row[0])
        found["ferretdb_backend"] = BACKEND
        return found


ENGINE = FerretDBEngine

__all__ = ["ENGINE", "FerretDBEngine", "FerretDBServer", "binary_version", "find_binary"]
