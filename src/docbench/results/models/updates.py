"""The updates workload's result file."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import Field

from docbench.results.models.header import Model, RunHeader


class Dataset(Model):
    kind: Literal["ycsb"]
    docs: Annotated[int, Field(ge=1)]
    seed: int


class Distribution(Enum):
    uniform = "uniform"
    zipfian = "zipfian"


class Style(Model):
    style: str
    update_seconds: float | None = None
    rows_changed: int | None = None
    check: dict[str, Any] | None = None


class Error(Model):
    error: str


class UpdatesResult(RunHeader):
    workload: Literal["updates"]
    dataset: Dataset
    ops: Annotated[int, Field(ge=1)]
    distributions: list[Distribution]
    styles: list[Style]
    point: dict[str, Any] | None = None
    errors: list[Error]
    wall_seconds: float | None = None
