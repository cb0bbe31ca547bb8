"""The engine handle: one installed datastore with a work directory docbench owns.

Every workload adapter of a system receives the system's :class:`Engine`; the engine is the
only object that starts, stops, restarts or connects to the datastore. Three modes:

* **embedded** (chDB, DuckDB, SQLite): the engine runs inside the process that opens it;
  ``start``/``stop`` do nothing, ``connect`` opens the database file in the work directory;
* **managed server**: docbench starts the server from its own directories on 127.0.0.1 and a
  free port, and stops it by PID;
* **URL**: the user's server (``--<name>-url``). docbench uses only a database / index of its
  own there, cannot restart it (cold runs are not cold) and does not reconfigure it.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

from docbench.contracts.common import Availability
from docbench.core.redact import redact_url


class Engine(ABC):
    """Lifecycle and connections of one datastore. Subclasses live in systems/<name>/engine.py."""

    name: ClassVar[str]
    display_name: ClassVar[str]
    # True when the engine runs inside the process that opens it (chDB, DuckDB, SQLite).
    embedded: ClassVar[bool] = True
    # False for systems that need `docbench setup` first: runs without --systems leave them out.
    runs_by_default: ClassVar[bool] = True
    # Servers that can run against the user's own server: an example URL. Every server system
    # must declare one; the CLI then offers `--<name>-url`.
    url_example: ClassVar[str | None] = None
    install_hint: ClassVar[str | None] = None
    # Shown by `docbench systems` and the report: what runs where, what the system lacks.
    notes: ClassVar[str] = ""
    # True when docbench can start it as a cluster of several nodes (``--nodes N``) and give
    # its indexes shards and replicas (``--shards``/``--replicas``).
    runs_as_cluster: ClassVar[bool] = False
    # A cluster reached by the URLs of several of its nodes (``--<name>-url a,b,c``: docbench
    # fails over between them); else one URL (Spark's Connect endpoint).
    takes_node_urls: ClassVar[bool] = False
    # A managed cluster whose nodes docbench can kill mid-phase (``--kill-node``).
    kills_nodes: ClassVar[bool] = False
    # A server docbench can only reach by URL, never start itself (MongoDB: no server can be
    # installed here).
    url_only: ClassVar[bool] = False
    # Another version of a system whose engine and adapters it subclasses (opensearch2 of
    # opensearch): the tests give it their smoke part, the broad tests run the first version.
    smoke_tests_only: ClassVar[bool] = False

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        self.workdir = workdir
        self.url = url

    @classmethod
    @abstractmethod
    def availability(cls, url: str | None = None) -> Availability:
        """Can it run here (or reach the URL)? Never installs anything."""

    # ----- mode --------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        """``embedded``, ``managed-server`` or ``url``."""
        if self.url:
            return "url"
        return "embedded" if self.embedded else "managed-server"

    @property
    def can_restart(self) -> bool:
        """A user's server reached by URL is not docbench's to restart or reconfigure."""
        return self.url is None

    def display_url(self) -> str | None:
        return redact_url(self.url) if self.url else None

    def served_url(self) -> str | None:
        """The URL by which another docbench (``--<name>-url``) reaches this running server,
        password included: a started managed server can be shared that way (the tests start
        one per system and hand it to every test that is not about managing it). The URL
        given, for a server by URL; None for an embedded engine."""
        return self.url

    # ----- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        """Start the managed server (or check the URL). Embedded engines: nothing."""

    def stop(self) -> None:
        """Stop what :meth:`start` started. Must be safe to call twice."""

    def restart(self) -> None:
        """Restart so that the next query is cold (embedded: nothing, a new process is cold)."""

    def is_alive(self) -> bool:
        return True

    def release(self) -> None:
        """Close handles this process holds, so another process can open the database."""

    # ----- connections and processes -----------------------------------------------------
    @abstractmethod
    def connect(self) -> Any:
        """A new connection (client, database handle) to docbench's own database here."""

    def server_pids(self) -> list[int]:
        """The server's processes (main process first); [] for embedded engines and URLs."""
        return []

    # ----- versions ----------------------------------------------------------------------
    def version(self) -> str | None:
        return self.availability(self.url).version

    def running_version(self) -> str | None:
        """The version the running server reports (None: not asked, or not reachable)."""
        return None

    def versions(self) -> dict[str, str]:
        """Library and engine versions to record with a result: the running server's own
        word when it answers, else the installed version (a system adds its client
        libraries' by overriding this)."""
        try:
            version = self.running_version() or self.version()
        except Exception:  # noqa: BLE001 - a version is not worth a failed run
            version = self.version()
        return {self.name: version} if version else {}


class CacheLimits:
    """An engine (or an updates target) that can make its own cache small: the throughput
    workload's io scenario."""

    def limit_cache(self, cache_bytes: int) -> str:
        """Make the engine's own cache about ``cache_bytes``; say what was done (NotSupported,
        with the reason, where this variant cannot)."""
        raise NotImplementedError  # an engine that lists the capability implements it

    def restore_cache(self) -> None:
        """Undo :meth:`limit_cache`."""


# ----- a system's folder (ClickBench's one folder per system) -------------------------------
def system_folder(engine: type[Engine] | Engine) -> Path:
    """The folder of the system the engine belongs to."""
    cls = engine if isinstance(engine, type) else type(engine)
    module_file = sys.modules[cls.__module__].__file__
    if module_file is None:
        raise LookupError(f"{cls.__module__} is not a module file (no system folder)")
    return Path(module_file).parent


def system_file(engine: type[Engine] | Engine, name: str) -> Path:
    """``name`` (``ddl.sql``, ``queries.sql``...) from the system's folder, else from the
    folder of the system its engine builds on: a system that is another version of one
    (postgresql18) shares its files unless it has its own (BenchBase's per-dialect files with a
    generic fallback)."""
    cls = engine if isinstance(engine, type) else type(engine)
    for klass in cls.__mro__:
        if (
            isinstance(klass, type)
            and issubclass(klass, Engine)
            and klass.__module__.startswith("docbench.systems.")
        ):
            path = system_folder(klass) / name
            if path.exists():
                return path
    return system_folder(cls) / name


def setup_script(engine: type[Engine] | Engine) -> Path | None:
    """The folder's idempotent installer (`docbench setup NAME` runs it), if it has one."""
    script = system_folder(engine) / "setup.sh"
    return script if script.exists() else None


def main_pid(engine: Engine) -> int | None:
    """The server's main process (None: embedded, or reached by URL)."""
    pids = engine.server_pids()
    return pids[0] if pids else None
