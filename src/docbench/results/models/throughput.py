"""The throughput workload's result file."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

from pydantic import Field, JsonValue

from docbench.results.models.common import WorkloadError, YcsbDataset
from docbench.results.models.header import Model, RunHeader


class Scenario(Enum):
    cpu = "cpu"
    io = "io"


class Run(Model):
    run_id: str
    scenario: Scenario
    mix: str
    clients: Annotated[int, Field(ge=1)]
    processes: Annotated[int | None, Field(ge=1)] = None
    summary: dict[str, JsonValue] | None = None
    check: dict[str, JsonValue] | None = None
    error: str | None = None
    server_died: Annotated[
        Literal[True] | None,
        Field(
            description="The server's process ended during the run (error names it and its PID); the next run got a new server."
        ),
    ] = None


class ThroughputResult(RunHeader):
    workload: Literal["throughput"]
    dataset: YcsbDataset
    concurrency: str | None = None
    max_client_processes: int | None = None
    runs: list[Run]
    skipped: list[dict[str, JsonValue]]
    errors: list[WorkloadError]
