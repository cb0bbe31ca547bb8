"""What the throughput workload needs beyond the updates contract: a native reference.

The throughput workload drives every system's :class:`~docbench.contracts.updates.UpdatesTarget`
sessions. A system may add its own benchmark tool beside each run (PostgreSQL: pgbench) with
``systems/<name>/throughput.py`` defining ``ADAPTER``, a subclass of :class:`NativeReference`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from docbench.contracts.updates import UpdatesTarget
from docbench.core.jsontypes import JsonObject


@dataclass(frozen=True)
class ThroughputRun:
    """One (scenario, mix, clients) measurement, as a native reference receives it."""

    scenario: str
    mix: str
    clients: int
    processes: int
    duration_s: float
    warmup_s: float
    distribution: str
    rate: float | None
    docs: int
    seed: int
    # Also the tool's own built-in workloads, where it has some (pgbench's select-only).
    builtin: bool = True


class NativeReference(ABC):
    """The system's own benchmark tool, run with the same clients, duration and operations."""

    tool: str = ""

    def __init__(self, target: UpdatesTarget) -> None:
        self.target = target
        self.engine = target.engine

    @abstractmethod
    def measure(self, run: ThroughputRun) -> JsonObject:
        """Run the tool for this run; at least ``{"tool": ..., "tps": ...}`` (or ``error``)."""
