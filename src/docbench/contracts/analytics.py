"""What the analytics workload (JSONBench's load + five queries) needs from a system.

A system takes part with ``systems/<name>/analytics.py`` defining ``ADAPTER``, a subclass of
:class:`AnalyticsAdapter`: a document store that creates its table, loads, counts, measures its
storage and opens query sessions. What else it can do it lists as capabilities
(:mod:`docbench.contracts.capabilities`: JSONBench's queries, live ingest, read-back, a native
bulk load; :mod:`docbench.contracts.portable`: the portable queries). The adapter receives the
system's engine (lifecycle, connections) and one variant; the workload's runner does all
timing.

Process model. The runner (parent process) starts the engine, creates the table, loads and
measures storage. Queries run in a *worker process* spawned fresh for each query so that the
first try is cold for embedded engines too; the worker rebuilds a :class:`QuerySession` from
:meth:`AnalyticsAdapter.session_spec`, which must therefore be picklable (paths, URLs, variant
settings -- never live handles).
"""

from __future__ import annotations

import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from docbench.contracts.common import NotSupported, StorageSize, Variant, variant_named
from docbench.contracts.engine import Engine
from docbench.core.jsontypes import JsonObject

T = TypeVar("T")


@dataclass
class QueryOutcome:
    rows: Sequence[Sequence[Any]]
    # Execution time reported by the engine itself, when it reports one.
    engine_seconds: float | None = None
    # Peak memory the engine reports for the query (bytes), when it reports one.
    engine_memory: int | None = None
    extra: JsonObject = field(default_factory=dict)


class Loader(ABC):
    """Receives the dataset in batches of raw ndjson lines (bytes, no trailing newline)."""

    @abstractmethod
    def load_batch(self, lines: list[bytes]) -> None:
        """Load all lines or none; raise BatchRejected if the content was refused."""

    def load_batch_skipping(self, lines: list[bytes]) -> dict[int, str] | None:
        """Optional: load every line the engine accepts and name those it refuses
        (``{index in lines: the engine's reason}``), where the engine stops at a refused
        line and can go on after it, so that a refusal costs O(1) and nothing is sent twice.
        None: declined (the driver then calls :meth:`load_batch` and bisects)."""
        return None

    def load_file(self, path: Path, documents: int) -> bool:
        """Optional fast path: load a whole ndjson file (`documents` lines, no blank line;
        plain, or gzip/zstd-compressed with a name that says so: .gz, .zst) with the engine's
        own reader, all or nothing -- the way a person loads it by hand.
        Return False to decline (the driver then sends batches); raise BatchRejected when the
        engine refuses the content (nothing kept; the driver then falls back to batches and
        isolates the refused documents)."""
        return False

    def load_file_skipping(self, path: Path, documents: int) -> dict[int, str] | None:
        """Optional native path where a refused document costs O(1), not a re-insert of its
        batch: load the whole file (as :meth:`load_file`) with the engine's own reader while
        the engine itself skips the documents it refuses and names them. Return
        ``{line number (1-based): the engine's reason}`` (empty when nothing was refused);
        every line not named must be loaded. When the engine's own report of what it skipped
        and its count of what it loaded disagree, keep nothing and raise BatchRejected (the
        driver then loads the file in batches and bisects). None: declined."""
        return None

    # False when the engine keeps the good lines of a batch it partly refuses (no transactions:
    # VictoriaLogs): it cannot load a batch all or nothing, so it loads through
    # load_batch_skipping only and its refusals cannot be found by bisection.
    atomic_batches: ClassVar[bool] = True

    # How many whole files the engine's reader takes in one statement. An engine whose reader
    # runs its threads across files rather than within one (DuckDB) loads a group of files
    # as fast as its native multi-file load and one file at a time at half that speed.
    files_per_statement: int = 1

    def load_files_skipping(self, paths: list[Path], documents: list[int]) -> list[dict[int, str]] | None:
        """:meth:`load_file_skipping` for several files in one statement and one transaction
        (``files_per_statement`` of them): the refusals of each file, in order, or None
        (declined: the driver then takes the files one by one). All or nothing, like one
        file."""
        if len(paths) != 1:
            return None
        refused = self.load_file_skipping(paths[0], documents[0])
        return None if refused is None else [refused]

    def takes_whole_files(self) -> bool:
        """Whether this loader has a whole-file path (it overrides :meth:`load_file` or
        :meth:`load_file_skipping`): only then does the driver scan a file to see whether it
        may be handed over whole."""
        cls = type(self)
        return (
            cls.load_file is not Loader.load_file or cls.load_file_skipping is not Loader.load_file_skipping
        )

    def begin_file(self, name: str) -> None:
        """A file's load starts (before its first batch or whole-file load); for a group of
        files loaded in one statement, ``name`` is the group's first file."""

    def commit_file(self) -> None:
        """Every document of the file that the engine accepted has been sent: make them
        durable as one unit where the engine can (one transaction, a staging table attached
        at once), so that a load killed mid-file leaves the engine as it was before the file
        and ``--resume`` continues with that file."""

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
        raise NotSupported(name)

    def stats_after(self) -> JsonObject:
        """Engine statistics read after a try, outside its timing (e.g. JVM heap in use)."""
        return {}

    def explain(self, query_number: int, text: str) -> str | None:
        """The engine's plan for the query (not timed), or None when it has none."""
        return None

    def engine_pids(self) -> list[int]:
        """Processes whose memory and disk reads are the query's cost.

        Embedded engines run inside the worker (the default); servers return the backend(s).
        """
        return [os.getpid()]

    def cancel(self) -> None:
        """Best-effort cancel of a running query from another thread."""

    def close(self) -> None:
        pass


class AnalyticsAdapter(ABC):
    """One system in one variant, for the analytics workload."""

    variants: ClassVar[list[Variant]]
    # Whether the system keeps the document's structure (JSONBench's `retains_structure`);
    # a variant may override it with settings["retains_structure"] (e.g. no _source).
    retains_structure: ClassVar[bool] = True
    # How the system holds a document by default (its JSON type, e.g. "jsonb"); a variant
    # that holds it another way names its own in settings["representation"], and says with
    # settings["schema_by_hand"] that it gives paths a type or column by hand (beyond
    # JSONBench's rules).
    representation: ClassVar[str] = "JSON"
    # The engine's own defaults of the variant settings that are engine settings (codecs,
    # compression, table options...): a result lists the settings of its variant that differ
    # from them (``representation_labels()["settings_beyond_defaults"]``).
    engine_defaults: ClassVar[JsonObject] = {}
    # Lines per load batch (the unit that is retried and bisected on a refusal).
    load_batch_size: ClassVar[int] = 100_000
    # Timestamp precision of query answers (microseconds; 1000 = milliseconds); the answer
    # checks read the adapter's, so a variant that stores coarser times sets its own.
    time_precision_us: int = 1
    # Query numbers whose answers are approximate by design.
    approximate_queries: ClassVar[frozenset[int]] = frozenset()
    # The generator's hard-document kinds (docbench-gen, dataset/generate.py) the engine
    # refuses, each with its own reason; it stores every other document. The engine's limits,
    # not docbench's: the tests hold every load to them.
    refused_hard_kinds: ClassVar[frozenset[str]] = frozenset()
    # What the engine's own reader does with a document it refuses: "skips" (skips and names
    # it in the same pass over the file), "stops" (stops there naming it: docbench sends the
    # rest of the block again without it), None (no such path: a refused batch is bisected).
    native_refusals: ClassVar[str | None] = None
    # How concurrent query clients (`--clients`) run: "processes" (each client's session in
    # a process of its own, at most --client-processes of them) or "threads" (every client a
    # thread of one process, each with its own session: an engine that is one per process,
    # or that shares one database among its connections by design).
    concurrent_clients: ClassVar[str] = "processes"

    def __init__(self, engine: Engine, variant: Variant) -> None:
        self.engine = engine
        self.variant = variant
        # Every post-load step with its own time (finish_step): at a large scale one of them
        # can grow faster than the data, and the result must show which.
        self.finish_steps: list[JsonObject] = []

    def finish_step(self, name: str, action: Callable[[], T]) -> T:
        """Run one post-load step (an index build, VACUUM, a merge), timed on its own."""
        started = time.perf_counter()
        value = action()
        self.finish_steps.append({"step": name, "seconds": round(time.perf_counter() - started, 3)})
        return value

    @classmethod
    def variant_named(cls, name: str) -> Variant:
        return variant_named(cls.variants, name, cls.__name__)

    @property
    def name(self) -> str:
        return self.engine.name

    def keeps_structure(self) -> bool:
        return bool(self.variant.settings.get("retains_structure", self.retains_structure))

    def representation_labels(self) -> JsonObject:
        """What a result says of how the documents were held: the representation, whether
        the whole document can be read back, and whether a schema was given by hand."""
        settings = self.variant.settings
        return {
            # a setting that departs from the engine's own default where it matters to a
            # comparison, with its measured cost (reports mark the run with it)
            "non_default": settings.get("non_default"),
            "name": str(settings.get("representation", self.representation)),
            "retains_structure": self.keeps_structure(),
            "schema_by_hand": bool(settings.get("schema_by_hand", False)),
            "settings_beyond_defaults": {
                name: value
                for name, value in settings.items()
                if name in self.engine_defaults and value != self.engine_defaults[name]
            },
        }

    # ----- loading -----------------------------------------------------------------------
    @abstractmethod
    def create(self) -> None:
        """(Re)create docbench's own table/database, empty. Never touches anything else."""

    @abstractmethod
    def loader(self) -> Loader:
        """A loader for the table created by :meth:`create`."""

    def finish_load(self) -> None:
        """Post-load work that counts in the load time: indexes, VACUUM ANALYZE, merges; each
        step through :meth:`finish_step`, so that it is timed on its own."""

    @abstractmethod
    def count(self) -> int:
        """The number of documents the system holds, by its own count."""

    @abstractmethod
    def storage(self) -> StorageSize:
        """Sizes on disk after loading."""

    def release(self) -> None:
        """Close handles held by the parent so a worker process can open the database."""
        self.engine.release()

    def schema_from_data(self) -> bool:
        """Whether the table's schema is inferred from the documents of its first load (then
        what documents are loaded together decides what each becomes)."""
        return False

    # ----- query sessions ----------------------------------------------------------------
    @abstractmethod
    def session_spec(self) -> JsonObject:
        """Everything a worker process needs to open a session (picklable)."""

    @classmethod
    @abstractmethod
    def open_session(cls, spec: JsonObject) -> QuerySession:
        """Open a query session in the worker process."""
