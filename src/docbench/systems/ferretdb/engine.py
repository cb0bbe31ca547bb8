"""FerretDB's engine handle: a managed FerretDB v1 server over SQLite (or a user's by URL).

``docbench setup ferretdb`` builds the server from the Go module proxy (``setup.sh``) into
``$DOCBENCH_OPT/bin/ferretdb``. docbench starts it with its SQLite backend on 127.0.0.1 and a
free port, telemetry and the debug HTTP listener off, its data (one SQLite file per database)
and state in the work directory, and stops it by PID (``ManagedProcess``). Cold runs restart it
on the same port. With a URL (``--ferretdb-url``) it is the user's server instead, as MongoDB's.

The engine builds on MongoDB's (``docbench/systems/mongodb/engine.py``): the same pymongo
client, database ``docbench`` and buildInfo; what differs is the managed server, its PID and
its data directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

from docbench import paths
from docbench.contracts.common import Availability, command_version, directory_size
from docbench.systems import server
from docbench.systems.mongodb.engine import (
    PYMONGO_HINT,
    MongoDBEngine,
    import_pymongo,
    mongo_client,
)

PINNED_VERSION = "v1.24.0"
INSTALL_HINT = "docbench setup ferretdb  (builds FerretDB v1.24.0 from the Go module proxy; needs go)"
START_TIMEOUT = 60.0
BACKEND = "sqlite"


def find_binary() -> Path | None:
    """The ferretdb that ``docbench setup ferretdb`` built, else one on PATH."""
    built = paths.opt_dir() / "bin" / "ferretdb"
    if built.exists() and os.access(built, os.X_OK):
        return built
    found = shutil.which("ferretdb")
    return Path(found) if found else None


def binary_version(binary: Path) -> str | None:
    """``v1.24.0`` from ``ferretdb --version`` (first line ``version: v1.24.0``)."""
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


class FerretDBServer:
    """One FerretDB process with its SQLite data in ``workdir/data``."""

    def __init__(self, workdir: Path, binary: Path | None = None) -> None:
        self.workdir = workdir
        self.binary = binary or find_binary()
        self.data_dir = workdir / "data"
        self.state_dir = workdir / "state"
        self.log_path = workdir / "ferretdb.log"
        self.port_file = workdir / "port"
        self.process: server.ManagedProcess | None = None
        self.port: int | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process and self.process.alive() else None

    @property
    def uri(self) -> str:
        if self.port is None:
            raise RuntimeError("FerretDB has not been started")
        return f"mongodb://127.0.0.1:{self.port}/"

    def argv(self, port: int) -> list[str]:
        if self.binary is None:
            raise RuntimeError(f"FerretDB is not installed (run `{INSTALL_HINT.split('  ')[0]}`)")
        return [str(self.binary), "--handler=sqlite", f"--sqlite-url=file:{self.data_dir}/",
                f"--listen-addr=127.0.0.1:{port}", "--telemetry=disable",
                "--debug-addr=-", f"--state-dir={self.state_dir}", "--log-level=warn",
                "--mode=normal"]

    def running(self) -> bool:
        return self.process is not None and self.process.alive()

    def start(self) -> None:
        if self.running():
            return
        # A FerretDB an earlier docbench left running on these SQLite files goes first.
        server.reap_leftovers(server.pid_file_in(self.workdir))
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if self.port is None and self.port_file.exists():
            # The port of an earlier start, so session specs handed out stay valid.
            with contextlib.suppress(ValueError):
                self.port = int(self.port_file.read_text())
        last_error: Exception | None = None
        for attempt in range(4):
            if self.port and attempt < 2 and not server.port_open(self.port):
                port = self.port
            else:
                port = server.free_port()
            process = server.ManagedProcess(self.argv(port), self.log_path, cwd=self.workdir)
            process.start()
            try:
                process.wait_until(lambda p=port: answers(p), START_TIMEOUT, "FerretDB")
            except RuntimeError as error:  # exited during start-up (port taken?)
                process.stop()
                last_error = error
                continue
            except TimeoutError:
                process.stop()
                raise
            self.process = process
            self.port = port
            self.port_file.write_text(str(port))
            return
        raise RuntimeError(f"FerretDB did not start: {last_error}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop(timeout=30)
            self.process = None


class FerretDBEngine(MongoDBEngine):
    name = "ferretdb"
    display_name = "FerretDB"
    embedded = False
    runs_by_default = False
    url_example = "mongodb://user:password@host:27017"
    install_hint = INSTALL_HINT
    notes = ("FerretDB v1.24.0 (built from source by `docbench setup ferretdb`), SQLite backend, "
             "managed on 127.0.0.1; runs the mongodb system's pipelines unchanged, so what "
             "FerretDB v1 lacks ($cond, $hour, $min/$max...) fails or comes out wrong. FerretDB v1 "
             "refuses keys starting with '$' (every Bluesky record has \"$type\"): variant "
             "'default' counts those refusals, variant 'escaped-keys' stores them as U+FF04 '＄'.")

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        # The managed server (None when a user's server is reached by URL).
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
            return Availability(False, reason=f"no ferretdb binary in {paths.opt_dir() / 'bin'} "
                                              "or on PATH", install_hint=INSTALL_HINT)
        version = binary_version(binary)
        if version is None:
            return Availability(False, reason=f"{binary} --version does not run",
                                install_hint=INSTALL_HINT)
        return Availability(True, version=f"FerretDB {version}")

    @property
    def can_restart(self) -> bool:
        """The managed server restarts; a user's server reached by URL does not."""
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
        """The managed server's SQLite directory (None for a server reached by URL)."""
        return self.server.data_dir if self.server is not None else None

    def server_pids(self) -> list[int]:
        pid = self.server.pid if self.server is not None else None
        return [pid] if pid else []

    # ----- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        if self.server is not None:
            self.workdir.mkdir(parents=True, exist_ok=True)
            self.server.start()
        super().start()

    def stop(self) -> None:
        self.release()
        if self.server is not None:
            self.server.stop()

    def restart(self) -> None:
        """Stop and start the server (same port), so the next query finds it cold."""
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

    def storage_detail(self) -> dict[str, Any]:
        detail: dict[str, Any] = {"backend": BACKEND}
        if self.server is not None:
            detail["sqlite_files"] = {
                p.name: p.stat().st_size for p in sorted(self.server.data_dir.glob("*"))
                if p.is_file()}
        return detail

    # ----- versions ----------------------------------------------------------------------
    def versions(self) -> dict[str, str]:
        found = super().versions()
        if "ferretdb" not in found and self.server is not None and self.server.binary:
            version = binary_version(self.server.binary)
            if version:
                found["ferretdb"] = version
        found["ferretdb_backend"] = BACKEND
        return found


ENGINE = FerretDBEngine

__all__ = ["ENGINE", "FerretDBEngine", "FerretDBServer", "binary_version", "find_binary"]
