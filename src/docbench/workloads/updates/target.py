"""The contract between the updates workload (and the throughput workload) and a system.

A system takes part by providing ``docbench/systems/<name>/updates.py`` with

* ``UPDATE_VARIANTS: list[Variant]`` -- its type/index configurations for this workload;
* ``class UpdatesTarget`` -- satisfying :class:`UpdatesTarget` below.

Point operations go through a :class:`KeyValueSession`, opened per client from a picklable
spec (``target.session_spec()`` -> ``UpdatesTarget.open_session(spec)``), so that another
process (the throughput workload's clients) can open one too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from docbench.systems.base import StorageSize, Variant


@runtime_checkable
class KeyValueSession(Protocol):
    def read(self, key: str) -> dict[str, Any] | None:
        """The document with this ycsb_key (without system fields such as _id), or None."""

    def update_field(self, key: str, field: str, value: str) -> int:
        """Set one field of the document with this key; the number of documents changed."""

    def insert(self, doc: dict[str, Any]) -> None:
        """Insert one document."""

    def close(self) -> None: ...


@runtime_checkable
class UpdatesTarget(Protocol):
    def __init__(self, workdir: Path, variant: Variant) -> None: ...

    def start(self) -> None:
        """Start the managed server (embedded engines: nothing)."""

    def stop(self) -> None:
        """Stop what start() started; safe to call twice."""

    def create(self) -> None:
        """(Re)create the target's own table/collection/index (``ycsb...``), empty."""

    def load(self, docs: list[bytes]) -> None:
        """Bulk load raw JSON lines through the system's native bulk path."""

    def create_key_index(self) -> None:
        """The index on ycsb_key in the system's natural form."""

    def count(self) -> int: ...

    def count_field(self, field: str, value: str) -> int:
        """Documents whose `field` equals `value`, by the system's own query."""

    def bulk_update_styles(self) -> list[str]: ...

    def bulk_add_field(self, style: str, field: str, value: str) -> int:
        """Add `field` = `value` to every document in this style; rows changed (or -1)."""

    def maintain(self) -> str:
        """The system's own maintenance (VACUUM, OPTIMIZE, force-merge, compact); what ran."""

    def sizes(self) -> StorageSize: ...

    def extra_stats(self) -> dict[str, Any]: ...

    def session(self) -> KeyValueSession: ...

    def session_spec(self) -> dict[str, Any]: ...

    @classmethod
    def open_session(cls, spec: dict[str, Any]) -> KeyValueSession: ...
