"""The portable-queries capability: a system compiles a query of the spec
(:mod:`docbench.queries.spec`) into its own language, or says why it cannot.

A system takes part with ``systems/<name>/portable.py`` defining ``ADAPTER``, a subclass of
:class:`PortableQueries`; an engine family (SQL dialects, MongoDB's pipelines) implements the
compiler once and each system gives its dialect's hooks. The compiled text runs through the
analytics query session of the same system (``QuerySession.execute``), so the workload times it
cold and hot, with plans and memory, as it does Q1-Q5.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from docbench.contracts.common import NotSupported, Variant
from docbench.contracts.engine import Engine
from docbench.queries.spec import Query


class NotExpressible(NotSupported):
    """The engine cannot express this query exactly under this representation (its type
    system, its mapping, its language): the reason, never a different query."""


@dataclass(frozen=True)
class CompiledQuery:
    """A query in the engine's language, and which of its columns come back as JSON text (a
    group key or a selected value; decoded before the answer is checked)."""

    text: str
    json_columns: tuple[bool, ...]

    def decode(self, rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
        return [
            [
                _json_value(value) if is_json else value
                for value, is_json in zip(row, self.json_columns, strict=False)
            ]
            for row in rows
        ]


def _json_value(value: Any) -> Any:
    if value is None or value == "":
        return None  # a missing path ('' where the engine has no NULL for it)
    if isinstance(value, bytes | bytearray):
        value = value.decode()
    if isinstance(value, str):
        return json.loads(value)
    return value  # an engine that gives the value typed already


class PortableQueries(ABC):
    """One system in one variant (of its analytics workload: the same table)."""

    def __init__(self, engine: Engine, variant: Variant) -> None:
        self.engine = engine
        self.variant = variant

    def exact(self) -> str | None:
        """None when the representation keeps every JSON value as the spec reads it; else how
        it differs (its answers are then judged as they are, and may be wrong for it)."""
        return None

    @abstractmethod
    def compile(self, query: Query) -> CompiledQuery:
        """The query in the engine's language; NotExpressible (with the reason) when the
        engine cannot run it exactly as the spec means it."""
