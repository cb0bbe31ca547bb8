"""The fidelity workload's result file."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

from pydantic import Field

from docbench.results.models.common import Representation
from docbench.results.models.header import Model, RunHeader


class Outcome(Enum):
    identical = "identical"
    same_value = "same_value"
    changed = "changed"
    refused = "refused"
    missing = "missing"
    unreadable = "unreadable"


class Document(Model):
    name: str
    stress: str
    outcome: Outcome
    notes: list[str]


class Summary(Model):
    """
    Documents per outcome
    """

    identical: Annotated[int | None, Field(ge=0)] = None
    same_value: Annotated[int | None, Field(ge=0)] = None
    changed: Annotated[int | None, Field(ge=0)] = None
    refused: Annotated[int | None, Field(ge=0)] = None
    missing: Annotated[int | None, Field(ge=0)] = None
    unreadable: Annotated[int | None, Field(ge=0)] = None


class TogetherItem(Model):
    name: str
    outcome: Outcome
    notes: list[str]


class Interaction(Model):
    document: str
    own: Outcome
    together: Outcome
    after: Annotated[
        str | None,
        Field(
            description="The other document after which it differs (null: the documents together, none alone)"
        ),
    ]
    pairwise: Annotated[
        bool,
        Field(description="That document alone before it makes the difference (false: only with others)"),
    ]
    paths: Annotated[
        list[str], Field(description="Paths both documents hold, those of differing JSON types first")
    ]
    notes: Annotated[
        list[str], Field(description="The outcome's notes together: the engine's reason for a refusal")
    ]


class FidelityResult(RunHeader):
    workload: Literal["fidelity"]
    representation: Representation | None = None
    documents: Annotated[
        list[Document],
        Field(description="Each corpus document's own verdict: alone in a fresh table, how it came back"),
    ]
    summary: Annotated[Summary | None, Field(description="Documents per outcome")] = None
    lossless: Annotated[
        bool | None,
        Field(
            description="Every document the engine took came back as the same JSON value (null: cannot be read back)"
        ),
    ] = None
    loaded_together: Annotated[
        bool | None,
        Field(
            description="Loaded together (the stream of every document into one table), the engine took every document"
        ),
    ] = None
    together: Annotated[
        list[TogetherItem] | None,
        Field(
            description="Each corpus document's outcome loaded together with the others, in order, into one table (since 2026-12-05)"
        ),
    ] = None
    interactions: Annotated[
        list[Interaction] | None,
        Field(
            description="Each outcome that differs, loaded together, from the document's own verdict, and what decided it (since 2026-12-05)"
        ),
    ] = None
