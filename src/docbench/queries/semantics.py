"""The reference semantics of the portable queries (docs/queries.md), in Python: what every
engine's answer is judged by. No database is involved.

JSON's types are kept apart: a number is never a string, a boolean never a number (Python's
``True == 1`` is not JSON's), a missing path is not null, and an array is a value of its own:
nothing is flattened unless the query unnests it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from docbench.queries.spec import (
    BUCKET_CYCLES,
    BUCKET_UNITS,
    EPOCH_DIVISORS,
    Combined,
    Condition,
    Filter,
    GroupKey,
    Path_,
    Query,
)


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def json_type(value: Any) -> str:
    """'missing', 'null', 'boolean', 'number', 'string', 'array' or 'object'."""
    if value is MISSING:
        return "missing"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_scalar(value: Any) -> bool:
    """A value a group key or a distinct count takes: a string, a number or a boolean."""
    return isinstance(value, str | int | float)  # bool is an int


def resolve(document: Any, element: Any, path: Path_) -> Any:
    """The value at a path: keys are followed through objects only (an array on the way means
    the path is missing)."""
    value = element if path.element else document
    for key in path.keys:
        if not isinstance(value, dict) or key not in value:
            return MISSING
        value = value[key]
    return value


def same_value(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (1 equals 1.0), everything else by type and value."""
    if is_number(a) and is_number(b):
        return bool(a == b)
    if json_type(a) != json_type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return bool(a == b)


def _compare(value: Any, op: str, literal: Any) -> bool:
    """A comparison matches only values of the literal's JSON type."""
    if is_number(literal):
        if not is_number(value):
            return False
    elif json_type(value) != json_type(literal):
        return False
    if op == "eq":
        return same_value(value, literal)
    if op == "ne":
        return not same_value(value, literal)
    if isinstance(value, bool | None):
        return False
    if op == "lt":
        return bool(value < literal)
    if op == "le":
        return bool(value <= literal)
    if op == "gt":
        return bool(value > literal)
    return bool(value >= literal)  # ge


def matches(where: Filter | None, document: Any, element: Any = MISSING) -> bool:
    if where is None:
        return True
    if isinstance(where, Combined):
        if where.op == "and":
            return all(matches(p, document, element) for p in where.parts)
        if where.op == "or":
            return any(matches(p, document, element) for p in where.parts)
        return not matches(where.parts[0], document, element)
    return _condition(where, resolve(document, element, where.path))


def _condition(condition: Condition, value: Any) -> bool:
    op, literal = condition.op, condition.value
    if op == "exists":
        return (value is not MISSING) == literal
    if value is MISSING:
        return False
    if op == "in":
        return any(_compare(value, "eq", item) for item in literal)
    if op == "prefix":
        return isinstance(value, str) and value.startswith(literal)
    if op == "contains":
        return isinstance(value, str) and literal in value
    if op == "array_contains":
        return isinstance(value, list) and any(_compare(item, "eq", literal) for item in value)
    return _compare(value, op, literal)


def bucket_of(value: Any, key: GroupKey) -> int | None:
    """The start of the value's time bucket in seconds since the epoch (UTC), or None when the
    value is not a time in the key's format."""
    assert key.unit is not None and key.time_format is not None
    width = BUCKET_UNITS[key.unit]
    if key.time_format == "iso8601":
        if not isinstance(value, str):
            return None
        seconds = iso_seconds(value)
        if seconds is None:
            return None
    else:
        if not is_number(value) or (isinstance(value, float) and not math.isfinite(value)):
            return None
        seconds = math.floor(value / EPOCH_DIVISORS[key.time_format])
    cycle = BUCKET_CYCLES.get(key.unit)
    return (seconds // width) % cycle if cycle else (seconds // width) * width


def iso_seconds(text: str) -> int | None:
    """Whole seconds since the epoch of ISO 8601 text (no zone: UTC); None if not a time."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return math.floor(moment.timestamp())


def group_value(value: Any, key: GroupKey) -> Any:
    if key.unit:
        return bucket_of(value, key)
    return value if is_scalar(value) else None


class _Accumulator:
    """One aggregate's running state for one group."""

    def __init__(self, fn: str) -> None:
        self.fn = fn
        self.count = 0
        self.total: int | float = 0
        self.least: Any = None
        self.most: Any = None
        self.distinct: set[Any] = set()
        # the distinct count alone, when the native scan judged every line (nothing to merge)
        self.distinct_count: int | None = None

    def add(self, value: Any) -> None:
        if self.fn == "count":
            self.count += 1
        elif self.fn == "count_distinct":
            if is_scalar(value):
                self.distinct.add(value_key(value))
        elif is_number(value):
            self.count += 1
            self.total += value
            if self.least is None or value < self.least:
                self.least = value
            if self.most is None or value > self.most:
                self.most = value

    def merge(self, other: _Accumulator) -> None:
        """Fold in the state of the same aggregate over other documents."""
        if self.distinct_count is not None or other.distinct_count is not None:
            raise ValueError("a final distinct count cannot be merged")
        self.count += other.count
        self.total += other.total
        self.distinct |= other.distinct
        for mine, theirs, pick in (("least", other.least, min), ("most", other.most, max)):
            current = getattr(self, mine)
            if theirs is not None:
                setattr(self, mine, theirs if current is None else pick(current, theirs))

    def result(self) -> Any:
        if self.fn == "count":
            return self.count
        if self.fn == "count_distinct":
            return len(self.distinct) if self.distinct_count is None else self.distinct_count
        if not self.count:
            return None
        if self.fn == "sum":
            return self.total
        if self.fn == "avg":
            return self.total / self.count
        if self.fn == "span":
            return self.most - self.least
        return self.least if self.fn == "min" else self.most


def value_key(value: Any) -> Any:
    """A hashable key under JSON equality: 1 and 1.0 are one key, True and 1 two."""
    if isinstance(value, bool):
        return ("b", value)
    if is_number(value):
        return ("n", float(value) if isinstance(value, float) and not value.is_integer() else int(value))
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, list):
        return ("a", tuple(value_key(v) for v in value))
    return ("o", tuple(sorted((k, value_key(v)) for k, v in value.items())))


def rows_of(query: Query, document: Any) -> Iterator[Any]:
    """The rows a document gives: itself, or one per element of its unnested array."""
    if query.unnest is None:
        yield MISSING
        return
    array = resolve(document, MISSING, query.unnest.path)
    if isinstance(array, list):
        yield from array


class Evaluation:
    """A query evaluated over a stream of documents; :meth:`rows` is the whole answer, ordered
    and limited as the query says."""

    def __init__(self, query: Query) -> None:
        self.query = query
        self.groups: dict[tuple[Any, ...], tuple[list[Any], list[_Accumulator]]] = {}
        self.selected: list[list[Any]] = []

    def add(self, document: Any) -> None:
        query = self.query
        for element in rows_of(query, document):
            if not matches(query.where, document, element):
                continue
            if query.select:
                self.selected.append([_output(resolve(document, element, p)) for _, p in query.select])
                continue
            keys = [group_value(resolve(document, element, k.path), k) for k in query.group_by]
            slot = tuple(value_key(k) for k in keys)
            if slot not in self.groups:
                self.groups[slot] = (keys, [_Accumulator(a.fn) for a in query.aggregates])
            for aggregate, accumulator in zip(query.aggregates, self.groups[slot][1], strict=True):
                accumulator.add(
                    None if aggregate.path is None else resolve(document, element, aggregate.path)
                )

    def merge(self, later: Evaluation) -> None:
        """Fold in the evaluation of the documents that come after these (selected rows keep
        the documents' order)."""
        self.selected.extend(later.selected)
        for slot, (keys, accumulators) in later.groups.items():
            if slot not in self.groups:
                self.groups[slot] = (keys, accumulators)
                continue
            for mine, theirs in zip(self.groups[slot][1], accumulators, strict=True):
                mine.merge(theirs)

    def all_rows(self) -> list[list[Any]]:
        """Every row of the answer, ordered, before the limit."""
        if self.query.select:
            rows = list(self.selected)
        else:
            rows = [keys + [a.result() for a in accs] for keys, accs in self.groups.values()]
            if self.query.global_aggregate and not rows:
                rows = [[_Accumulator(a.fn).result() for a in self.query.aggregates]]
        return sort_rows(self.query, rows)

    def rows(self) -> list[list[Any]]:
        rows = self.all_rows()
        return rows[: self.query.limit] if self.query.limit else rows


def _output(value: Any) -> Any:
    return None if value is MISSING else value


def order_key(query: Query, row: list[Any]) -> tuple[Any, ...]:
    """The sort key of a row under the query's order_by."""
    columns = query.columns
    return column_order_key(row, [(columns.index(o.column), o.desc) for o in query.order_by])


def column_order_key(row: list[Any], order: list[tuple[int, bool]]) -> tuple[Any, ...]:
    """The sort key of a row by (column index, descending) pairs: per column, numbers first,
    then strings, then the rest (booleans, null: equal among themselves); descending reverses
    numbers and strings."""
    key: list[Any] = []
    for index, desc in order:
        value = row[index]
        if is_number(value):
            key.append((0, -value if desc else value, ""))
        elif isinstance(value, str):
            key.append((1, 0, _Reversed(value) if desc else value))
        else:
            key.append((2, 0, ""))
    return tuple(key)


def sort_by_columns(rows: list[list[Any]], order: list[tuple[int, bool]]) -> list[list[Any]]:
    """Rows in the reference order (for an engine whose own order cannot say it)."""
    return sorted(rows, key=lambda row: column_order_key(row, order)) if order else rows


class _Reversed:
    """A string that sorts in reverse."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __lt__(self, other: _Reversed) -> bool:
        return self.text > other.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)


def sort_rows(query: Query, rows: list[list[Any]]) -> list[list[Any]]:
    """The rows in the query's order; rows that tie on it in the order of their values (so
    that the answer does not depend on the order the documents were read in)."""
    if not query.order_by:
        return rows
    columns = query.columns
    order = [(columns.index(o.column), o.desc) for o in query.order_by]
    keyed = sorted(((column_order_key(row, order), row) for row in rows), key=lambda pair: pair[0])
    # the values break ties only where the order ties (a group by a high-cardinality path has
    # hundreds of thousands of rows and few ties: a value key per row was most of the sort)
    ordered: list[list[Any]] = []
    start = 0
    while start < len(keyed):
        end = start + 1
        while end < len(keyed) and keyed[end][0] == keyed[start][0]:
            end += 1
        tied = [row for _, row in keyed[start:end]]
        if len(tied) > 1:
            tied.sort(key=lambda row: tuple(value_key(v) for v in row))
        ordered.extend(tied)
        start = end
    return ordered


def evaluate(query: Query, documents: Iterable[Any]) -> list[list[Any]]:
    evaluation = Evaluation(query)
    for document in documents:
        evaluation.add(document)
    return evaluation.rows()
