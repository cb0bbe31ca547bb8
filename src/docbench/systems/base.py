"""The narrow interface between docbench's workloads and a datastore.

A workload never knows which system it talks to: it only calls what is declared here. Each
system lives in its own folder under ``docbench/systems/<name>/`` with

* ``adapter.py``  -- a subclass of :class:`System` (lifecycle, loading, sizes, query sessions);
* its DDL and queries as plain files in the system's own language (``ddl.sql``,
  ``queries.sql``, ``queries.json``...), read by the adapter so contributors can edit them;
* its server lifecycle (if it has a server), usually through :mod:`docbench.systems.server`.

and is registered by adding its name to ``docbench.systems.REGISTERED``.

Process model. The runner (parent process) owns the system object: it starts/stops the
server, creates the table, loads and measures storage. Queries run in a *worker process*
spawned fresh for each query so that the first try is cold for embedded engines too; the
worker rebuilds a :class:`QuerySession` from :meth:`System.session_spec`, which must therefore
be picklable (paths, URLs, variant settings -- never live handles).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISLNK
from typing import Any, ClassVar


class BatchRejected(Exception):
    """The engine refused a batch of documents because of their content; nothing of it was kept.

    Raised by :meth:`Loader.load_batch`. Any other exception means the system itself failed
    (server gone, disk full) and stops the load. When the engine says which documents it
    refused (e.g. a bulk API's per-item errors), pass them as ``refused`` (index in the batch ->
    reason): the driver then records those and loads the rest at once instead of bisecting.
    """

    def __init__(self, message: str, refused: dict[int, str] | None = None) -> None:
        super().__init__(message)
        self.refused = refused or {}


@dataclass(frozen=True)
class Variant:
    """One storage configuration of a system (a compression codec, a column type...)."""

    name: str
    description: str
    # "default" = the system's out-of-the-box storage, "best" = its best compression; the
    # storage report puts these two side by side as JSONBench does.
    role: str = "default"
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass
class Availability:
    """Whether a system can run on this machine, and if not why and how to fix it."""

    ok: bool
    version: str | None = None
    reason: str | None = None
    install_hint: str | None = None


@dataclass
class StorageSize:
    """Bytes on disk, from the system's own introspection plus a directory walk as a check."""

    total: int | None
    data: int | None
    index: int | None
    # Size of the system's data directory on disk (st_blocks * 512), where docbench owns one.
    on_disk: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class QueryOutcome:
    rows: list[Sequence[Any]]
    # Execution time reported by the engine itself, when it reports one.
    engine_seconds: float | None = None
    # Peak memory the engine reports for the query (bytes), when it reports one.
    engine_memory: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Loader(ABC):
    """Receives the dataset in batches of raw ndjson lines (bytes, no trailing newline)."""

    @abstractmethod
    def load_batch(self, lines: list[bytes]) -> None:
        """Load all lines or none; raise :class:`BatchRejected` if the content was refused."""

    def load_file(self, path: Path, documents: int) -> bool:
        """Optional fast path: load a whole plain ndjson file (`documents` lines, no blank
        line) with the engine's own reader, all or nothing -- the way a person loads it by hand.
        Return False to decline (the driver then sends batches); raise :class:`BatchRejected`
        when the engine refuses the content (nothing kept; the driver then falls back to
        batches and isolates the refused documents)."""
        return False

    def close(self) -> None:
        """Flush and release whatever the loader holds."""


class QuerySession(ABC):
    """A connection opened inside the query worker process."""

    @abstractmethod
    def execute(self, query_number: int, text: str) -> QueryOutcome:
        """Run one query and return its rows in the canonical column order (see answers.py)."""

    def alternatives(self, query_number: int, text: str) -> dict[str, bool]:
        """Other forms of this query to run beside it, each timed and checked on its own:
        name -> whether its answer is approximate by design (e.g. Elasticsearch's Q2 with
        `cardinality` beside the exact composite-aggregation form)."""
        return {}

    def execute_alternative(self, name: str, query_number: int, text: str) -> QueryOutcome:
        raise NotImplementedError(name)

    def stats_after(self) -> dict[str, Any]:
        """Engine statistics read after a try, outside its timing (e.g. JVM heap in use)."""
        return {}

    def explain(self, query_number: int, text: str) -> str | None:
        """The engine's plan for the query (not timed), or None when it has none."""
        return None

    def engine_pids(self) -> list[int]:
        """Processes whose memory and disk reads are the query's cost.

        Embedded engines run inside the worker (the default); servers return the backend(s).
        """
        import os

        return [os.getpid()]

    def cancel(self) -> None:
        """Best-effort cancel of a running query from another thread."""

    def close(self) -> None:
        pass


class System(ABC):
    """One datastore, in one variant, with a work directory docbench owns."""

    name: ClassVar[str]
    display_name: ClassVar[str]
    # True when the engine runs inside docbench's process (chDB, DuckDB, SQLite).
    embedded: ClassVar[bool] = True
    # Whether the system keeps the document's structure (JSONBench's `retains_structure`);
    # a variant may override it with settings["retains_structure"] (e.g. no _source).
    retains_structure: ClassVar[bool] = True
    variants: ClassVar[list[Variant]]
    # Lines per load batch (the unit that is retried and bisected on a refusal).
    load_batch_size: ClassVar[int] = 100_000
    # Timestamp precision of query answers (microseconds; 1000 = milliseconds).
    time_precision_us: ClassVar[int] = 1
    # Query numbers whose answers are approximate by design.
    approximate_queries: ClassVar[frozenset[int]] = frozenset()
    # False for systems that need `docbench setup` first: `docbench run` without --systems
    # leaves them out.
    runs_by_default: ClassVar[bool] = True
    # Set by systems that can run against the user's own server: an example URL, and the CLI
    # then offers `--<name>-url`.
    url_example: ClassVar[str | None] = None
    # Shown by `docbench systems` and the report: what runs where, what the system lacks.
    notes: ClassVar[str] = ""

    def __init__(self, workdir: Path, variant: Variant, url: str | None = None) -> None:
        self.workdir = workdir
        self.variant = variant
        self.url = url
        # A user's server reached by URL is not docbench's to restart: its cold runs are not
        # cold, and the result is tagged so.
        self.can_restart = url is None

    # ----- discovery -------------------------------------------------------------------
    @classmethod
    def folder(cls) -> Path:
        import sys

        return Path(sys.modules[cls.__module__].__file__).parent  # type: ignore[arg-type]

    @classmethod
    @abstractmethod
    def availability(cls, url: str | None = None) -> Availability:
        """Can it run here (or reach the URL)? Never installs anything."""

    @classmethod
    def setup_script(cls) -> Path | None:
        """The folder's idempotent installer (`docbench setup NAME` runs it), if it has one."""
        script = cls.folder() / "setup.sh"
        return script if script.exists() else None

    @classmethod
    def variant_named(cls, name: str) -> Variant:
        for variant in cls.variants:
            if variant.name == name:
                return variant
        known = ", ".join(v.name for v in cls.variants)
        raise KeyError(f"{cls.name} has no variant {name!r} (known: {known})")

    # ----- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        """Start the managed server (or check the URL). Embedded engines: nothing."""

    def stop(self) -> None:
        """Stop what :meth:`start` started. Must be safe to call twice."""

    def restart(self) -> None:
        """Restart the engine so the next query is cold (embedded: the worker is new anyway)."""

    def is_alive(self) -> bool:
        return True

    def release(self) -> None:
        """Close handles held by the parent so a worker process can open the database."""

    # ----- loading -----------------------------------------------------------------------
    @abstractmethod
    def create(self) -> None:
        """(Re)create docbench's own table/database, empty. Never touches anything else."""

    @abstractmethod
    def loader(self) -> Loader:
        """A loader for the table created by :meth:`create`."""

    def finish_load(self) -> None:
        """Post-load work that counts in the load time: indexes, VACUUM ANALYZE, merges."""

    def native_load(self, files: list[Path]) -> None:
        """Load these files the way a person would by hand with the system's own bulk tool
        (psql \\copy, INSERT ... FROM INFILE, read_ndjson_objects), into the table that
        :meth:`create` made. Used only by `docbench bench load` to measure docbench's overhead.
        """
        raise NotImplementedError(f"{self.name} has no native bulk load to compare with")

    @abstractmethod
    def count(self) -> int:
        """The number of documents the system holds, by its own count."""

    @abstractmethod
    def storage(self) -> StorageSize:
        """Sizes on disk after loading."""

    # ----- queries -----------------------------------------------------------------------
    @abstractmethod
    def queries(self) -> list[str]:
        """The five query texts, read from this system's folder."""

    @abstractmethod
    def session_spec(self) -> dict[str, Any]:
        """Everything a worker process needs to open a session (picklable)."""

    @classmethod
    @abstractmethod
    def open_session(cls, spec: dict[str, Any]) -> QuerySession:
        """Open a query session in the worker process."""

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """Return a warning when the plan does not use the index as intended, else None."""
        return None

    def version(self) -> str | None:
        return self.availability(self.url).version

    def versions(self) -> dict[str, str]:
        """Library and engine versions to record with the result."""
        version = self.version()
        return {self.name: version} if version else {}


# ----- helpers adapters share ------------------------------------------------------------


def read_sql_statements(path: Path) -> list[str]:
    """Split a .sql file into statements at ';' that ends a line; drop comments-only chunks."""
    text = path.read_text()
    statements = []
    for chunk in text.split(";\n"):
        lines = [ln for ln in chunk.strip().splitlines() if not ln.strip().startswith("--")]
        statement = "\n".join(lines).strip().rstrip(";").strip()
        if statement:
            statements.append(statement)
    return statements


def directory_size(path: Path) -> int:
    """Bytes allocated on disk under path (like `du -s --block-size=1`).

    Tolerates files and directories vanishing during the walk (engines delete old parts and
    WAL segments in the background).
    """
    total = 0
    for root, _dirs, files in os.walk(path, onerror=lambda _error: None):
        for name in files:
            try:
                stat = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if not S_ISLNK(stat.st_mode):
                total += stat.st_blocks * 512
    return total


def command_version(argv: list[str]) -> str | None:
    """First line of a program's --version output, or None if it does not run."""
    if not shutil.which(argv[0]) and not Path(argv[0]).exists():
        return None
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None
