"""What a system provides to take part in the storage workload.

A system takes part by having a module ``docbench.systems.<name>.storage_matrix`` with

* ``MATRIX_VARIANTS: list[Variant]`` -- its storage settings (each one a result file);
* ``class StorageMatrixTarget`` implementing :class:`StorageMatrixTarget` below.

The workload never names a system: it imports that module for each registered system and
lists the systems without one as "not supported by the storage workload yet".
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from docbench.systems.base import StorageSize, Variant

# The table / collection / index every target creates (and the only one it touches).
TABLE = "storage_matrix"


@runtime_checkable
class StorageMatrixTarget(Protocol):
    def __init__(self, workdir: Path, variant: Variant) -> None: ...

    def start(self) -> None:
        """Start the managed server / open the database (once per variant)."""

    def stop(self) -> None:
        """Stop what start() started; safe to call twice."""

    def version(self) -> str | None:
        """The engine's version, for the result file."""

    def create(self) -> None:
        """(Re)create the empty ``storage_matrix`` table with the variant's settings."""

    def insert(self, rows: list[tuple[str, str]]) -> None:
        """Insert (key, payload) documents, all or nothing, through the native bulk path;
        raise docbench.systems.base.BatchRejected(the system's message) when refused."""

    def count(self) -> int:
        """Documents in the table (after a refusal: what went in)."""

    def finish(self) -> None:
        """Flush / merge / VACUUM so that the sizes are final."""

    def sizes(self) -> StorageSize:
        """Total bytes incl. TOAST / overflow / indexes; detail by part; on_disk cross-check."""
