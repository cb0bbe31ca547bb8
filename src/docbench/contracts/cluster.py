"""The shape of a distributed engine: how many nodes docbench starts, and how many shards and
replicas its indexes get (``--nodes N --shards S --replicas R``).

The options are given once on the command line and travel in the environment
(``DOCBENCH_NODES`` / ``DOCBENCH_SHARDS`` / ``DOCBENCH_REPLICAS``), so that every process of a
run (load and query workers) sees the same shape. An engine that can run as a cluster says so
with ``Engine.runs_as_cluster``; the others refuse ``--nodes`` above 1 before anything runs.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass

from docbench.core.jsontypes import JsonObject

NODES_ENV = "DOCBENCH_NODES"
SHARDS_ENV = "DOCBENCH_SHARDS"
REPLICAS_ENV = "DOCBENCH_REPLICAS"
# The fault to inject into a managed cluster: "load" or "queries", optionally "@SECONDS" after
# the phase started (``--kill-node``).
KILL_NODE_ENV = "DOCBENCH_KILL_NODE"


@dataclass(frozen=True)
class ClusterShape:
    """``nodes`` started (managed) or found (URL); ``shards``/``replicas`` of docbench's
    indexes: S defaults to the number of nodes, R to 1 on several nodes and 0 on one."""

    nodes: int = 1
    shards: int | None = None
    replicas: int | None = None

    @property
    def index_shards(self) -> int:
        return self.shards if self.shards is not None else self.nodes

    @property
    def index_replicas(self) -> int:
        if self.replicas is not None:
            return self.replicas
        return 1 if self.nodes > 1 else 0

    @property
    def distributed(self) -> bool:
        """More than one node or more than one shard: answers come from several places."""
        return self.nodes > 1 or self.index_shards > 1

    def label(self) -> str:
        """``3 nodes, 3 shards, 1 replica`` (what the report shows beside the system)."""

        def plural(n: int, word: str) -> str:
            return f"{n} {word}{'' if n == 1 else 's'}"

        return ", ".join(
            [
                plural(self.nodes, "node"),
                plural(self.index_shards, "shard"),
                plural(self.index_replicas, "replica"),
            ]
        )

    def short_label(self) -> str:
        """``3n/3s/1r``."""
        return f"{self.nodes}n/{self.index_shards}s/{self.index_replicas}r"

    def to_record(self) -> JsonObject:
        return {**asdict(self), "shards": self.index_shards, "replicas": self.index_replicas}


def requested_shape() -> ClusterShape:
    """The shape the command line asked for (one node, one shard, no replica by default)."""

    def number(name: str) -> int | None:
        value = os.environ.get(name, "").strip()
        return int(value) if value else None

    return ClusterShape(
        nodes=number(NODES_ENV) or 1, shards=number(SHARDS_ENV), replicas=number(REPLICAS_ENV)
    )


def requested_nodes() -> int | None:
    """The ``--nodes`` given, None when none was (an engine whose single node differs from a
    cluster of one, such as Spark's local mode and a one-worker cluster, tells them apart)."""
    value = os.environ.get(NODES_ENV, "").strip()
    return int(value) if value else None


@dataclass(frozen=True)
class NodeKill:
    """SIGKILL one data node ``delay`` seconds after ``phase`` (``load`` or ``queries``)
    started."""

    phase: str
    delay: float = 5.0


PHASES = ("load", "queries")


def parse_kill(value: str) -> NodeKill:
    """``load``, ``queries``, ``load@10`` (seconds after the phase started, 0 or more)."""
    phase, at, delay = value.partition("@")
    if phase not in PHASES:
        raise ValueError(f"{value!r}: give load or queries, optionally @SECONDS (e.g. load@5)")
    if not at:
        return NodeKill(phase)
    try:
        seconds = float(delay.removesuffix("s"))
    except ValueError:
        raise ValueError(f"{value!r}: the delay after @ is a number of seconds (e.g. {phase}@5)") from None
    # A negative delay is not "at once": it is a typo, and a fault plan must say what it does.
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{value!r}: the delay after @ must be 0 or more seconds (e.g. {phase}@5)")
    return NodeKill(phase, seconds)


def requested_kill() -> NodeKill | None:
    value = os.environ.get(KILL_NODE_ENV, "").strip()
    return parse_kill(value) if value else None


class ClusterPhases:
    """An engine that runs as a cluster: it is told where the run is (``load``, ``queries``),
    watches its health from then on and injects a planned fault there, and says what the
    cluster went through."""

    def phase_started(self, phase: str) -> None:
        """The workload is in ``phase`` from now on."""

    def phase_ended(self, phase: str) -> None:
        """The phase is over (a planned fault that has not happened yet is called off)."""

    def cluster_record(self) -> JsonObject | None:
        """What a result says about the cluster (nodes, shards, replicas, every node's
        version, managed or not, faults)."""
        return None


def phase_started(engine: object, phase: str) -> None:
    """Tell an engine that watches phases (a cluster) that ``phase`` started."""
    if isinstance(engine, ClusterPhases):
        engine.phase_started(phase)


def phase_ended(engine: object, phase: str) -> None:
    if isinstance(engine, ClusterPhases):
        engine.phase_ended(phase)


def cluster_record(engine: object) -> JsonObject | None:
    """The cluster's record, for an engine that runs as one."""
    return engine.cluster_record() if isinstance(engine, ClusterPhases) else None
