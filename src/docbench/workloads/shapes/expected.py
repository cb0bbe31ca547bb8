"""The shape queries' expected answers and the check of an engine's rows against them.

The generator computes the answers over every document it wrote (``docbench-gen shapes``,
summary["answers"]). When an engine refuses documents (a mapping limit, a type conflict), the
answers are recomputed here over the documents it took -- Python's JSON parser, independent
of every engine -- so that each query is judged on what was loaded.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from docbench.core.jsontypes import (
    JsonMapping,
    JsonObject,
    JsonValue,
    as_object,
    as_str,
    object_or_empty,
    optional_int,
    optional_str,
)
from docbench.queries.shapes import SHAPE_QUERY_NAMES as SHAPE_QUERIES


@dataclass(frozen=True)
class ShapeTargets:
    """What the shape queries are about: each query's path as its keys from the top (None:
    the shape has no such path, the query is not run), the point lookup's document id and
    the varying filter's threshold."""

    paths: dict[str, tuple[str, ...] | None]
    point_id: int | None
    threshold: int


@dataclass
class ShapeCheck:
    status: str  # ok | wrong | error | not_run
    detail: str = ""


def _answer(answers: JsonMapping, query: str) -> JsonObject:
    """A query's answer; {} when there is none."""
    return object_or_empty(answers.get(query) or None)


def _to_int(value: JsonValue, what: str) -> int:
    """``int(value)`` for what int() reads of JSON (a number or a numeral); a TypeError
    naming ``what`` for anything else."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"{what}: expected a number, got {'null' if value is None else type(value).__name__}")


def _number(value: JsonValue, what: str) -> int | float:
    """A JSON number as it is (an integer stays one), or a TypeError naming ``what``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    raise TypeError(f"{what}: expected a number, got {'null' if value is None else type(value).__name__}")


def targets_from(answers: JsonMapping) -> ShapeTargets:
    """The paths and the point's document from the generator's (or a recomputed) answers."""

    def keys(query: str) -> tuple[str, ...] | None:
        path = _answer(answers, query).get("path")
        return tuple(as_str(path, f"{query} path").split(".")) if path else None

    paths = {query: keys(query) for query in SHAPE_QUERIES}
    point_id = optional_int(_answer(answers, "point").get("id"), "point id")
    if point_id is None:
        paths["point"] = None
    threshold = _to_int(_answer(answers, "varying_filter").get("threshold", 500_000), "threshold")
    return ShapeTargets(paths, point_id, threshold)


def lookup(document: JsonValue, keys: Iterable[str]) -> JsonValue:
    """The value at the path, or None where the document lacks it (the generator never
    writes a JSON null)."""
    for key in keys:
        if not isinstance(document, dict) or key not in document:
            return None
        document = document[key]
    return document


@dataclass
class _Found:
    """The recomputed answers while the documents are read."""

    point_id: JsonValue = None
    point_value: str | None = None
    rare_count: int = 0
    rare_sum: int = 0
    matches: int = 0
    present: int = 0


def answers_without(data_file: Path, answers: JsonMapping, refused_lines: set[int]) -> JsonObject:
    """The generator's answers recomputed over the documents of ``data_file`` whose line
    numbers (1-based) are not in ``refused_lines``: the same definitions as the generator's
    oracle (native/docbench-gen/src/shapes.rs, Oracle)."""
    targets = targets_from(answers)
    point_from = _to_int(_answer(answers, "point").get("from") or 0, "point from")
    given = {
        query: as_object(answers.get(query, {}), f"{query} answer")
        for query in ("point", "rare_aggregate", "varying_filter", "presence")
    }
    found = _Found()
    common = tuple(str(as_object(answers["point"], "point answer")["path"]).split("."))
    with open(data_file, "rb") as lines:
        for number, line in enumerate(lines, start=1):
            if number in refused_lines or not line.strip():
                continue
            document: JsonValue = json.loads(line)
            value = lookup(document, common)
            if found.point_id is None:
                read = as_object(document, f"document on line {number}")
                if _number(read.get("id", -1), "id") >= point_from and value is not None:
                    found.point_id = read["id"]
                    found.point_value = json.dumps(value, separators=(",", ":"))
            _count(found, document, targets)
    return {
        "point": {**given["point"], "id": found.point_id, "value": found.point_value},
        "rare_aggregate": {**given["rare_aggregate"], "count": found.rare_count, "sum": found.rare_sum},
        "varying_filter": {**given["varying_filter"], "matches": found.matches},
        "presence": {**given["presence"], "count": found.present},
    }


def _count(found: _Found, document: JsonValue, targets: ShapeTargets) -> None:
    rare = targets.paths.get("rare_aggregate")
    if rare is not None:
        value = lookup(document, rare)
        if value is not None:
            found.rare_count += 1
            found.rare_sum += _to_int(value, "rare_aggregate value")
    varying = targets.paths.get("varying_filter")
    if varying is not None:
        value = lookup(document, varying)
        if _is_integer(value) and value > targets.threshold:
            found.matches += 1
    present = targets.paths.get("presence")
    if present is not None and lookup(document, present) is not None:
        found.present += 1


def _is_integer(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def expected_row(query: str, answers: JsonMapping) -> list[JsonValue]:
    """The canonical row the query must return (runner.shape_rows)."""

    def answer(name: str) -> JsonObject:
        return as_object(answers[name], f"{name} answer")

    if query == "point":
        return [answer("point")["value"]]
    if query == "rare_aggregate":
        return [answer("rare_aggregate")["count"], answer("rare_aggregate")["sum"]]
    if query == "varying_filter":
        return [answer("varying_filter")["matches"]]
    return [answer("presence")["count"]]


def check_rows(
    query: str, rows: list[list[Any]] | None, answers: JsonMapping, typed: bool = True
) -> ShapeCheck:
    """ok when the engine's one row equals the expected one: counts and sums exactly, the
    point's value as the same JSON value (numbers equal as numbers, a float within 1e-9).
    ``typed`` False: the representation keeps no JSON types (VictoriaLogs' fields are text),
    so a point value that is the expected one's text (a string without its quotes) is
    right, and said to be text."""
    if rows is None:
        return ShapeCheck("error", "no rows")
    expected = expected_row(query, answers)
    if len(rows) != 1:
        return ShapeCheck("wrong", f"{len(rows)} rows, expected 1: {expected}")
    row = list(rows[0])
    if query == "point":
        got = row[0] if row else None
        expected_text = optional_str(expected[0], "the point's expected value")
        same = _same_json(got, expected_text)
        if not same and not typed and isinstance(got, str) and got == _as_text(expected_text):
            return ShapeCheck("ok", "as text: the representation keeps no JSON types")
    else:
        same = len(row) == len(expected) and all(
            _as_number(a) == e for a, e in zip(row, expected, strict=True)
        )
    if same:
        return ShapeCheck("ok")
    return ShapeCheck("wrong", f"got {row}, expected {expected}"[:300])


def _as_text(expected_text: str | None) -> str | None:
    """The value as a representation without JSON types holds it: a string's characters,
    anything else its JSON text."""
    if expected_text is None:
        return None
    value = json.loads(expected_text)
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _as_number(value: Any) -> Any:
    if value is None:
        return 0  # SUM over no row
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return value
    return value


def _same_json(got: Any, expected_text: str | None) -> bool:
    if expected_text is None:
        return got is None
    expected = json.loads(expected_text)
    if isinstance(got, str):
        try:
            got = json.loads(got)
        except ValueError:
            return False
    return _equal(got, expected)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or math.isclose(a, b, rel_tol=1e-9)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b) and type(a) is type(b)
