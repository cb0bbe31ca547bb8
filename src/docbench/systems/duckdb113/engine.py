"""DuckDB 1.1.3, JSONBench's DuckDB, beside the project's DuckDB (the ``duckdb`` system).

The same embedded engine on a database file in the work directory (``docbench.duckdb``), run by
another version of DuckDB: the ``duckdb`` 1.1.3 package in a venv ``docbench setup duckdb113``
makes (``$DOCBENCH_OPT/duckdb-1.1.3``). Two versions of the module cannot live in one Python
process, so every statement goes to a worker process with that venv's Python
(``client.DuckDBWorker``, ``worker.py``): the engine's own (read-write) worker for create, load,
count and storage, started on first use and stopped by :meth:`release` / :meth:`stop` (DuckDB
lets one process at a time write a file, and a query worker opens it read-only); a query
session starts a read-only one of its own (``session.py``).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from docbench.contracts.common import Availability
from docbench.core import paths
from docbench.core.ownership import claim_directory
from docbench.systems.duckdb.engine import DuckDBEngine
from docbench.systems.duckdb113.client import DuckDBWorker

VERSION = "1.1.3"
INSTALL_HINT = "docbench setup duckdb113"
# Written by setup.sh last, once the venv's Python has imported duckdb 1.1.3.
INSTALLED_MARK = ".docbench-installed"


def install_dir() -> Path:
    """The venv setup.sh makes (``$DOCBENCH_OPT/duckdb-1.1.3``)."""
    return paths.opt_dir() / f"duckdb-{VERSION}"


def venv_python() -> Path:
    return install_dir() / "bin" / "python"


def installed_version() -> str | None:
    """The duckdb version of the venv, from its installed package's metadata (no process):
    None when setup.sh has not finished there."""
    venv = install_dir()
    if not (venv / INSTALLED_MARK).is_file() or not venv_python().exists():
        return None
    for metadata in sorted(venv.glob("lib/python3*/site-packages/duckdb-*.dist-info/METADATA")):
        for line in metadata.read_text(errors="replace").splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
    return None


class DuckDB113Engine(DuckDBEngine):
    name = "duckdb113"
    display_name = "DuckDB 1.1.3 (JSONBench's)"
    runs_by_default = False
    # Another version of the duckdb system: the broad tests (runner, native refusals) run that
    # one; tests/test_system_duckdb113.py runs the shared suite and a whole run on this one.
    smoke_tests_only = True
    install_hint = INSTALL_HINT
    notes = (
        "DuckDB 1.1.3, the version of JSONBench's published DuckDB figures, from PyPI in a venv "
        "`docbench setup duckdb113` makes; run in a worker process with that venv's Python "
        "(a fresh one per query: cold as the duckdb system's). JSONBench's table, load (100k-line "
        "chunks through read_ndjson_objects) and size query; docbench's queries."
    )

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        self._worker: DuckDBWorker | None = None

    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        version = installed_version()
        if version is None:
            return Availability(
                False, reason=f"no DuckDB {VERSION} venv at {install_dir()}", install_hint=INSTALL_HINT
            )
        if version != VERSION:
            return Availability(
                False,
                reason=f"{install_dir()} holds duckdb {version}, not {VERSION}",
                install_hint=INSTALL_HINT,
            )
        return Availability(True, version=version)

    # ----- workers -------------------------------------------------------------------------
    def connect(self, read_only: bool = False) -> DuckDBWorker:
        """A new worker on the database file, started (read-only: a query session's)."""
        if not read_only:
            claim_directory(self.workdir)
        return DuckDBWorker(venv_python(), self.path, read_only=read_only).start()

    def connection(self) -> DuckDBWorker:
        """This engine's own read-write worker, started on first use (again after it ended)."""
        if self._worker is None or not self._worker.alive():
            self.release()
            self._worker = self.connect()
        return self._worker

    def worker_pid(self) -> int | None:
        """The PID of this engine's own worker while it runs."""
        return self._worker.pid if self._worker is not None and self._worker.alive() else None

    def release(self) -> None:
        """Stop this engine's worker (it closes the file), so that another process can open it."""
        if self._worker is not None:
            with contextlib.suppress(Exception):
                self._worker.stop()
            self._worker = None

    def stop(self) -> None:
        self.release()


ENGINE = DuckDB113Engine
