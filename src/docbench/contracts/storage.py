"""What the storage workload (TOAST-style matrix) needs from a system.

A system takes part with ``systems/<name>/storage.py`` defining ``VARIANTS`` (its storage
settings; each one a result file) and ``ADAPTER``, a subclass of :class:`StorageMatrixTarget`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from docbench.contracts.common import StorageSize, Variant
from docbench.contracts.engine import Engine

# The table / collection / index every target creates (and the only one it touches).
TABLE = "storage_matrix"


class StorageMatrixTarget(ABC):
    def __init__(self, engine: Engine, variant: Variant) -> None:
        self.engine = engine
        self.variant = variant

    def start(self) -> None:
        """Start the managed server / open the database (once per variant)."""
        self.engine.start()

    def stop(self) -> None:
        """Stop what start() started; safe to call twice."""
        self.engine.release()
        self.engine.stop()

    def version(self) -> str | None:
        """The engine's version, for the result file."""
        return self.engine.version()

    @abstractmethod
    def create(self) -> None:
        """(Re)create the empty ``storage_matrix`` table with the variant's settings."""

    @abstractmethod
    def insert(self, rows: list[tuple[str, str]]) -> None:
        """Insert (key, payload) documents, all or nothing, through the native bulk path;
        raise BatchRejected(the system's message) when refused."""

    @abstractmethod
    def count(self) -> int:
        """Documents in the table (after a refusal: what went in)."""

    @abstractmethod
    def finish(self) -> None:
        """Flush / merge / VACUUM so that the sizes are final."""

    @abstractmethod
    def sizes(self) -> StorageSize:
        """Total bytes incl. TOAST / overflow / indexes; detail by part; on_disk cross-check."""
