"""FerretDB v1: the MongoDB wire protocol over SQLite, as a managed server running the very same
pipelines as the ``mongodb`` system (its subclass here).

``docbench setup ferretdb`` builds the server from the Go module proxy (``setup.sh``) into
``$DOCBENCH_OPT/bin/ferretdb``. docbench starts it with its SQLite backend on 127.0.0.1 and a
free port, telemetry and the debug HTTP listener off, its data (one SQLite file per database)
and state in the work directory, and stops it by PID (``ManagedProcess``). Cold runs restart it
on the same port.

FerretDB v1 refuses document keys that start with ``$`` (every Bluesky record has
``"$type"``); MongoDB 5.0+ stores them. So that the documents load at all, the loader (the
mongodb system's, which does this for any server that refuses such keys) stores them with the
``$`` replaced by its full-width look-alike ``＄`` (U+FF04, the substitute MongoDB's own
documentation suggested for reserved characters in keys). No query reads those keys. Keys
with a ``.`` (also refused by FerretDB v1, rare in the data) are not rewritten: such documents
are refused and logged.

What FerretDB v1 cannot compute (operators it has not implemented, such as ``$cond``,
``$hour``, ``$min``/``$max`` accumulators) fails the query with FerretDB's own error, and what it
computes wrongly is marked ``wrong`` by the answer checker: the pipelines are NOT adapted to it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import ClassVar

from docbench import paths
from docbench.systems import server
from docbench.systems.base import (
    Availability,
    StorageSize,
    Variant,
    command_version,
    directory_size,
)
from docbench.systems.mongodb.adapter import MongoDB, _client, _pymongo

PINNED_VERSION = "v1.24.0"
INSTALL_HINT = "docbench setup ferretdb  (builds FerretDB v1.24.0 from the Go module proxy; needs go)"
START_TIMEOUT = 60.0

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
                process.wait_until(lambda p=port: self._answers(p), START_TIMEOUT, "FerretDB")
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

    @staticmethod
    def _answers(port: int) -> bool:
        if not server.port_open(port):
            return False
        client = _client(f"mongodb://127.0.0.1:{port}/", serverSelectionTimeoutMS=1000)
        try:
            client.admin.command("ping")
            return True
        finally:
            client.close()

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop(timeout=30)
            self.process = None


class FerretDB(MongoDB):
    name = "ferretdb"
    display_name = "FerretDB"
    embedded = False
    runs_by_default = False
    retains_structure = True
    variants: ClassVar[list[Variant]] = [
        Variant("default", "FerretDB v1 with its SQLite backend (documents as SQLite JSON text; "
                "no compression option); documents stored as offered, so those with '$' keys "
                "are refused", role="default", settings={}),
        Variant("escaped-keys", "as default, but keys starting with '$' are stored with U+FF04 "
                "'＄' instead (documents modified so FerretDB v1 accepts them)", role="alt",
                settings={"escape_dollar_keys": True}),
    ]
    load_batch_size = 20_000
    time_precision_us = 1
    notes = ("FerretDB v1.24.0 (built from source by `docbench setup ferretdb`), SQLite backend, "
             "managed on 127.0.0.1; runs the mongodb system's pipelines unchanged, so what "
             "FerretDB v1 lacks ($cond, $hour, $min/$max...) fails or comes out wrong. FerretDB v1 "
             "refuses keys starting with '$' (every Bluesky record has \"$type\"): variant "
             "'default' counts those refusals, variant 'escaped-keys' stores them as U+FF04 '＄'.")

    def __init__(self, workdir: Path, variant: Variant, url: str | None = None) -> None:
        super().__init__(workdir, variant, url)
        self.server = None if url else FerretDBServer(workdir)
        self.can_restart = url is None

    # ----- discovery -------------------------------------------------------------------
    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            _pymongo()
        except ImportError:
            return Availability(False, reason="pymongo is not installed",
                                install_hint="pip install pymongo")
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

    def versions(self) -> dict[str, str]:
        found = super().versions()
        if "ferretdb" not in found and self.server is not None and self.server.binary:
            version = binary_version(self.server.binary)
            if version:
                found["ferretdb"] = version
        found["ferretdb_backend"] = "sqlite"
        return found

    # ----- connection / lifecycle ------------------------------------------------------
    def uri(self) -> str:
        if self.server is None:
            return super().uri()
        return self.server.uri

    def server_pid(self) -> int | None:
        return self.server.pid if self.server is not None else None

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

    # ----- storage ---------------------------------------------------------------------
    def on_disk(self) -> int | None:
        return directory_size(self.server.data_dir) if self.server is not None else None

    def storage(self) -> StorageSize:
        size = super().storage()
        size.detail["backend"] = "sqlite"
        if self.server is not None:
            size.detail["sqlite_files"] = {
                p.name: p.stat().st_size for p in sorted(self.server.data_dir.glob("*"))
                if p.is_file()}
        return size

    # ----- queries -----------------------------------------------------------------------
    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """FerretDB's explain is SQLite's query plan plus whether the filter was pushed down to
        SQLite. Q2-Q5 filter on indexed paths: warn unless the filter is pushed down and SQLite
        searches an index."""
        if query_number == 1:
            return None
        if not plan:
            return f"Q{query_number}: no plan to check"
        try:
            doc = json.loads(plan)
        except ValueError:
            return f"Q{query_number}: the plan is not explain JSON"
        steps = (doc.get("queryPlanner") or {}).get("Plan") or []
        details = " | ".join(str(s).split("detail=", 1)[-1] for s in steps)
        if doc.get("filterPushdown") and "USING INDEX" in details.upper():
            return None
        return (f"Q{query_number}: FerretDB does not use the index (filterPushdown="
                f"{str(bool(doc.get('filterPushdown'))).lower()}, SQLite plan: {details or 'none'})")


SYSTEM = FerretDB

__all__ = ["SYSTEM", "FerretDB", "FerretDBServer", "find_binary"]
