"""Parts that several workloads' results share, defined once: how the documents were held,
bytes on disk, a YCSB dataset, a workload-level error, and a measured level's latencies and
outcomes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, JsonValue

from docbench.results.models.header import Model

LATENCY_DESCRIPTION = (
    "Latency of the correct answers (ms; from the intended start in open loop): count, avg, "
    "stddev, p50, p95, p99, p99.9, max"
)
OUTCOMES_DESCRIPTION = (
    "Queries by outcome: ok (answer equal to the oracle's), wrong (an answer, not the oracle's: "
    "never counted as a latency), error (the engine's error), timeout"
)


class Representation(Model):
    """How the documents were held: the engine's JSON type or another representation, whether
    the whole document can be read back, whether paths were given a type or column by hand
    (beyond JSONBench's rules)"""

    name: str
    retains_structure: bool
    schema_by_hand: bool
    settings_beyond_defaults: Annotated[
        dict[str, JsonValue] | None,
        Field(description="The variant's engine settings that differ from the engine's own defaults"),
    ] = None


class StorageBytes(Model):
    total: int | None = None
    data: int | None = None
    index: int | None = None


class YcsbDataset(Model):
    kind: Literal["ycsb"]
    docs: Annotated[int, Field(ge=1)]
    seed: int


class WorkloadError(Model):
    error: str


class LatencyMs(Model):
    avg_ms: float | None = None
    stddev_ms: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    p999_ms: float | None = None
    max_ms: float | None = None
    count: int | None = None


class Outcomes(Model):
    ok: Annotated[int, Field(ge=0)]
    wrong: Annotated[int, Field(ge=0)]
    error: Annotated[int, Field(ge=0)]
    timeout: Annotated[int, Field(ge=0)]


Latency = Annotated[LatencyMs, Field(description=LATENCY_DESCRIPTION)]
QueryOutcomes = Annotated[Outcomes, Field(description=OUTCOMES_DESCRIPTION)]
