"""The updates workload's result file."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

from pydantic import Field, JsonValue

from docbench.results.models.common import WorkloadError, YcsbDataset
from docbench.results.models.header import Model, RunHeader


class Distribution(Enum):
    uniform = "uniform"
    zipfian = "zipfian"


class Style(Model):
    style: str
    update_seconds: float | None = None
    rows_changed: int | None = None
    check: dict[str, JsonValue] | None = None


class UpdatesResult(RunHeader):
    workload: Literal["updates"]
    dataset: YcsbDataset
    ops: Annotated[int, Field(ge=1)]
    distributions: list[Distribution]
    styles: list[Style]
    point: dict[str, JsonValue] | None = None
    errors: list[WorkloadError]
    wall_seconds: float | None = None
