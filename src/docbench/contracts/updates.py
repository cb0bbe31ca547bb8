"""What the updates workload (and the throughput workload, which reuses it) needs.

A system takes part with ``systems/<name>/updates.py`` defining ``VARIANTS`` (its type/index
configurations for this workload) and ``ADAPTER``, a subclass of :class:`UpdatesTarget`.

Point operations go through a :class:`KeyValueSession`, opened per client from a picklable
spec (``target.session_spec()`` -> ``ADAPTER.open_session(spec)``), so that another process
(the throughput workload's clients) can open one too.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from docbench.contracts.common import NotSupported, StorageSize, Variant
from docbench.contracts.engine import CacheLimits, Engine
from docbench.core.jsontypes import JsonObject


class KeyValueSession(ABC):
    @abstractmethod
    def read(self, key: str) -> JsonObject | None:
        """The document with this ycsb_key (without system fields such as _id), or None."""

    @abstractmethod
    def update_field(self, key: str, field: str, value: str) -> int:
        """Set one field of the document with this key; the number of documents changed."""

    @abstractmethod
    def insert(self, doc: dict[str, str]) -> None:
        """Insert one document: a YCSB document (``ycsb.document``: its ycsb_key and ten
        fields, all strings)."""

    def close(self) -> None:
        pass


class NonBlockingSession(KeyValueSession):
    """A session the throughput driver can multiplex: one thread of a worker process drives
    all its clients' sessions over their own non-blocking connections (as each thread of
    pgbench does), so the driver spends microseconds, not tens of them, per operation. A
    session without it runs on a thread of its own (the blocking methods above).

    One operation at a time: ``send_*`` writes the request without waiting for the answer;
    when :meth:`fileno` is readable the driver calls :meth:`receive` until it returns the
    operation's count. A failed operation raises from ``send_*`` or ``receive`` with the
    connection ready for the next one (or broken: every later operation then fails too)."""

    @abstractmethod
    def fileno(self) -> int:
        """The connection's socket (the driver waits for it to be readable)."""

    @abstractmethod
    def send_read(self, key: str) -> None: ...

    @abstractmethod
    def send_update(self, key: str, field: str, value: str) -> None: ...

    @abstractmethod
    def send_insert(self, doc: dict[str, str]) -> None: ...

    @abstractmethod
    def receive(self) -> int | None:
        """Read what has arrived; None while the answer is incomplete, else the count: the
        documents a read found (0 or 1), the documents an update changed, 1 for an insert."""

    def broken(self) -> bool:
        """After a failure: is the connection gone? The client then stops (as a pgbench client
        aborts) instead of failing every later operation at once."""
        return False


class UpdatesTarget(ABC):
    """One system in one variant, for the updates and throughput workloads."""

    # Embedded engines that one process must own (DuckDB, chDB): the most client processes
    # the throughput workload may spawn, and why.
    max_client_processes: ClassVar[int | None] = None
    concurrency_note: ClassVar[str | None] = None
    # The throughput driver's client loops its sessions can run in, preferred first (what
    # --client-loop auto picks): "compiled" (docbench-client runs the operations the target
    # describes in compiled_client), "multiplexed" (its sessions are NonBlockingSession),
    # "threads" (any session). Another loop is refused before anything loads.
    client_loops: ClassVar[tuple[str, ...]] = ("threads",)

    def __init__(self, engine: Engine, variant: Variant) -> None:
        self.engine = engine
        self.variant = variant

    # The engine's lifecycle is the run loop's (``target.engine``): start, stop, release.

    # ----- the io scenario's cache (the engine's, unless the target sets it per session) ---
    def limit_cache(self, cache_bytes: int) -> str:
        """io scenario: make the engine's cache small; raises NotSupported when it cannot."""
        if not isinstance(self.engine, CacheLimits):
            raise NotSupported(f"{self.engine.display_name} cannot make its cache small")
        return self.engine.limit_cache(cache_bytes)

    def restore_cache(self) -> None:
        if isinstance(self.engine, CacheLimits):
            self.engine.restore_cache()

    def engine_info(self) -> JsonObject:
        """Engine facts for the result (server version and the like)."""
        return {}

    # ----- loading -----------------------------------------------------------------------
    @abstractmethod
    def create(self) -> None:
        """(Re)create the target's own table/collection/index (``ycsb...``), empty."""

    @abstractmethod
    def load(self, docs: list[bytes]) -> None:
        """Bulk load raw JSON lines through the system's native bulk path."""

    @abstractmethod
    def create_key_index(self) -> None:
        """The index on ycsb_key in the system's natural form."""

    @abstractmethod
    def count(self) -> int: ...

    @abstractmethod
    def count_field(self, field: str, value: str) -> int:
        """Documents whose `field` equals `value`, by the system's own query."""

    # ----- the bulk update -----------------------------------------------------------------
    @abstractmethod
    def bulk_update_styles(self) -> list[str]: ...

    @abstractmethod
    def bulk_add_field(self, style: str, field: str, value: str) -> int:
        """Add `field` = `value` to every document in this style; rows changed (or -1)."""

    @abstractmethod
    def maintain(self) -> str:
        """The system's own maintenance (VACUUM, OPTIMIZE, force-merge, compact); what ran."""

    # ----- figures -------------------------------------------------------------------------
    @abstractmethod
    def sizes(self) -> StorageSize: ...

    def extra_stats(self) -> JsonObject:
        return {}

    # ----- point operations ----------------------------------------------------------------
    @abstractmethod
    def session_spec(self) -> JsonObject: ...

    @classmethod
    @abstractmethod
    def open_session(cls, spec: JsonObject) -> KeyValueSession: ...


class CompiledClient:
    """A target whose point operations the throughput driver's compiled client loop
    (``docbench-client``, Rust) can run itself: today PostgreSQL through libpq."""

    @classmethod
    def compiled_client(cls, spec: JsonObject) -> JsonObject:
        """The point operations described to the throughput driver's compiled client loop
        (``docbench-client``, Rust), which then runs them itself over its own connections at
        a native tool's cost per operation: ``{"protocol": "libpq", "library": [paths of
        libpq to try], "conninfo": ..., "statements": {"read": SQL with $1 = key, "update":
        $1 field, $2 value, $3 key, "insert": $1 the document's JSON}}``. A target without
        this capability runs the Python sessions of its ``open_session``."""
        raise NotImplementedError  # a target that lists the capability implements it
