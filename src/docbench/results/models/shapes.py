"""The shapes workload's result file."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import Field, JsonValue

from docbench.results.models.common import StorageBytes
from docbench.results.models.header import Model, RunHeader


class Shape(Model):
    """
    The point of the sweep: the preset, the knob swept and its value here, the generator's effective knobs, the documents and their file
    """

    preset: str
    knob: str
    value: float | str
    knobs: dict[str, JsonValue] | None = None
    docs: int
    seed: int
    data_file: str | None = None
    data_sha256: str | None = None
    data_bytes: int | None = None
    generator: Any | None = None


class Refused(Model):
    count: int
    first: list[Any] | None = None
    reasons: Annotated[
        dict[str, int] | None,
        Field(description="The listed refusals' reasons (numbers folded) and how often each came"),
    ] = None
    log: str | None = None


class Storage(StorageBytes):
    bytes_per_document: float | None = None


class Status(Enum):
    """
    The answer against the oracle's (not_run: the representation cannot express the query; detail says why)
    """

    ok = "ok"
    wrong = "wrong"
    error = "error"
    not_run = "not_run"


class Queries(Model):
    text: Annotated[
        str | None, Field(description="The query as sent, in the engine's language (absent: not run)")
    ] = None
    result: Annotated[
        list[float | None] | None,
        Field(
            description="Wall seconds per try (the first cold, the others hot); null: the try failed (absent: not run)"
        ),
    ] = None
    engine_time: list[float | None] | None = None
    memory: list[int | None] | None = None
    errors: list[str | None] | None = None
    status: Annotated[Status, Field(description="The answer against the oracle's")]
    detail: str | None = None
    rows: list[Any] | None = None
    plan: str | None = None
    crashed: bool | None = None


class ShapesResult(RunHeader):
    representation: dict[str, JsonValue] | None = None
    workload: Literal["shapes"]
    shape: Annotated[
        Shape,
        Field(
            description="The point of the sweep: the preset, the knob swept and its value here, the generator's effective knobs, the documents and their file"
        ),
    ]
    dataset_fingerprint: str | None = None
    tries: int | None = None
    timeout_seconds: float | None = None
    offered: Annotated[int | None, Field(description="Documents offered to the engine")] = None
    loaded: Annotated[int | None, Field(description="Documents the engine holds, by its own count")] = None
    load_time: float | None = None
    load: dict[str, JsonValue] | None = None
    refused: Refused | None = None
    storage: Storage | None = None
    expected: Annotated[
        dict[str, JsonValue] | None, Field(description="The oracle's answers for what was loaded")
    ] = None
    answers_basis: str | None = None
    queries: dict[Literal["point", "rare_aggregate", "varying_filter", "presence"], Queries] | None = None
    queries_not_supported: str | None = None
    cold_method: str | None = None
    error: str | None = None
    error_traceback: str | None = None
    warnings: list[str] | None = None
