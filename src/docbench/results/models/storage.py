"""The storage workload's result file."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

from pydantic import Field, RootModel

from docbench.results.models.header import Model, RunHeader


class Size(RootModel[int]):
    root: Annotated[int, Field(ge=1)]


class Entropy(Enum):
    random = "random"
    repetitive = "repetitive"
    text = "text"


class Cell(Model):
    size: int
    entropy: str


class StorageResult(RunHeader):
    workload: Literal["storage"]
    rows: Annotated[int, Field(ge=1)]
    seed: int | None = None
    sizes: list[Size]
    entropies: list[Entropy]
    cells: list[Cell]
