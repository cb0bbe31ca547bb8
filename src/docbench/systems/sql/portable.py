"""The portable queries compiled to SQL: one compiler for every SQL engine, with a dialect's
hooks wherever only the syntax differs (BenchBase's per-dialect files over a generic base).

A dialect works on *JSON value expressions*: SQL expressions that hold one JSON value (the
engine's JSON type, or JSON text) and are NULL (or, where the engine has no NULL for it,
what :meth:`SqlDialect.present` says is missing) when the document has no such path. The
compiler builds every filter, key and aggregate from the hooks below; a dialect overrides only
what its engine spells differently. Every predicate is made two-valued (missing paths give
FALSE, never NULL), so that ``not`` matches exactly the documents the filter does not.
"""

from __future__ import annotations

from typing import Any

from docbench.contracts.portable import CompiledQuery, NotExpressible, PortableQueries
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

JSON_TYPES = ("number", "string", "boolean", "null", "array", "object")


class SqlDialect(PortableQueries):
    """The generic SQL compiler; subclasses give the engine's JSON functions."""

    # The engine's names of each JSON type, as :meth:`type_name` returns them.
    type_names: dict[str, tuple[str, ...]] = {}

    # ----- hooks every dialect gives ---------------------------------------------------------
    def source(self) -> str:
        """The FROM clause's table."""
        raise NotImplementedError

    def document(self) -> str:
        """The whole document as a JSON value expression."""
        raise NotImplementedError

    def child(self, value: str, keys: tuple[str, ...]) -> str:
        """The value at ``keys`` below ``value`` (objects only; missing otherwise)."""
        raise NotImplementedError

    def type_name(self, value: str) -> str:
        """The engine's name of the value's JSON type (see :attr:`type_names`); NULL when missing."""
        raise NotImplementedError

    def number(self, value: str) -> str:
        """A JSON number as an SQL number (only ever applied to numbers)."""
        raise NotImplementedError

    def string(self, value: str) -> str:
        """A JSON string as SQL text (only ever applied to strings)."""
        raise NotImplementedError

    def json_text(self, value: str) -> str:
        """The value as JSON text, NULL when missing."""
        raise NotImplementedError

    def unnest(self, value: str, alias: str) -> tuple[str, str]:
        """The join that gives one row per element of the array ``value``, and the element's
        JSON value expression."""
        raise NotImplementedError

    def epoch_of_iso(self, text: str) -> str:
        """Seconds since the epoch of ISO 8601 text (UTC without a zone); NULL if not a time."""
        raise NotExpressible(f"{self.engine.name}: ISO 8601 text as a time is not compiled for this engine")

    # ----- hooks with a generic form ---------------------------------------------------------
    def present(self, value: str) -> str:
        return f"({value} IS NOT NULL)"

    def is_type(self, value: str, *json_types: str) -> str:
        names = ", ".join(self.quote(n) for t in json_types for n in self.type_names[t])
        return f"({self.type_name(value)} IN ({names}))"

    def boolean_is(self, value: str, literal: bool) -> str:
        return f"({self.json_text(value)} = {self.quote('true' if literal else 'false')})"

    def quote(self, text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    def number_literal(self, value: int | float) -> str:
        return repr(value)

    def exact_text(self, text: str) -> str:
        """Text that compares by code point (no collation's case or accent folding)."""
        return text

    def starts_with(self, text: str, prefix: str) -> str:
        return f"(substr({text}, 1, {len(prefix)}) = {self.quote(prefix)})"

    def contains(self, text: str, part: str) -> str:
        return f"(strpos({text}, {self.quote(part)}) > 0)"

    def array_contains(self, value: str, literal: Any) -> str:
        raise NotExpressible(f"{self.engine.name}: array_contains is not compiled for this engine")

    def to_integer(self, number: str) -> str:
        return f"CAST({number} AS BIGINT)"

    def truth(self, predicate: str) -> str:
        return f"COALESCE({predicate}, FALSE)"

    def limit(self, count: int) -> str:
        return f"LIMIT {count}"

    # ----- paths read once per row ------------------------------------------------------------
    # Whether each document path is read once per row, in a subquery, rather than once per use
    # (a type test, a value, a comparison each reading it again): for an engine that parses the
    # document's text at every read.
    project_paths: bool = False

    def projections(self, paths: list[tuple[str, ...]]) -> tuple[str, list[str]]:
        """The subquery's select list for these document paths, and each path's reference in
        the outer query (a JSON value expression)."""
        select = ", ".join(f"{self.child(self.document(), keys)} AS p{i}" for i, keys in enumerate(paths))
        return select, [f"docs.p{i}" for i in range(len(paths))]

    def paths_from(self, inner: str) -> tuple[str, str]:
        """(a prefix of the query, its FROM clause) reading the subquery of paths: one the
        engine does not merge back into the outer query (which would read each path again)."""
        return "", f"({inner}) AS docs"

    def document_paths(self, query: Query) -> list[tuple[str, ...]]:
        """Every document path (not an unnested element's) the query reads, once each."""
        found: list[tuple[str, ...]] = []

        def add(path: Path_ | None) -> None:
            if path is not None and not path.element and path.keys not in found:
                found.append(path.keys)

        def walk(where: Filter | None) -> None:
            if isinstance(where, Combined):
                for part in where.parts:
                    walk(part)
            elif where is not None:
                add(where.path)

        walk(query.where)
        for key in query.group_by:
            add(key.path)
        for aggregate in query.aggregates:
            add(aggregate.path)
        for _, selected in query.select:
            add(selected)
        if query.unnest is not None:
            add(query.unnest.path)
        return found

    # ----- the compiler ----------------------------------------------------------------------
    def compile(self, query: Query) -> CompiledQuery:
        self.check_representation()
        self.refs: dict[tuple[str, ...], str] = {}
        source, prefix = self.source(), ""
        paths = self.document_paths(query) if self.project_paths else []
        if paths:
            select, refs = self.projections(paths)
            prefix, source = self.paths_from(f"SELECT {select} FROM {self.source()}")
            self.refs = dict(zip(paths, refs, strict=True))
        element = ""
        join = ""
        if query.unnest is not None:
            join, element = self.unnest(self.path(query.unnest.path, ""), query.unnest.alias)
        where = f"WHERE {self.predicate(query.where, element)}" if query.where is not None else ""
        group = ""
        if query.select:
            outputs = [self.json_text(self.path(p, element)) for _, p in query.select]
            json_columns = tuple(True for _ in outputs)
        else:
            keys = [self.group_expression(k, element) for k in query.group_by]
            outputs = keys + [self.aggregate(a.fn, a.path, element) for a in query.aggregates]
            json_columns = tuple(not k.unit for k in query.group_by) + tuple(False for _ in query.aggregates)
            group = f"GROUP BY {', '.join(keys)}" if keys else ""
        columns = ", ".join(f"{expr} AS c{i}" for i, expr in enumerate(outputs))
        text = prefix + " ".join(p for p in (f"SELECT {columns}", f"FROM {source}", join, where, group) if p)
        if query.group_by:
            # Grouped by the values themselves; each group's key written as JSON text once,
            # outside, not once per row.
            texts = [
                f"grouped.c{i} AS c{i}" if k.unit else f"{self.key_text(f'grouped.c{i}')} AS c{i}"
                for i, k in enumerate(query.group_by)
            ]
            texts += [f"grouped.c{n} AS c{n}" for n in range(len(keys), len(outputs))]
            text = f"SELECT {', '.join(texts)} FROM ({text}) AS grouped"
        if query.order_by:
            # Ordered outside: the order reads the output columns, whatever the grouping.
            terms = [t for item in query.order_by for t in self.order_terms(query, item.column, item.desc)]
            text = f"SELECT * FROM ({text}) AS ordered ORDER BY {', '.join(terms)}"
        if query.limit:
            text += " " + self.limit(query.limit)
        return CompiledQuery(text, json_columns)

    def order_terms(self, query: Query, column: str, desc: bool) -> list[str]:
        """ORDER BY terms over an output column that sort as the reference does: numbers
        first, then strings (by code point), then the rest; no reliance on where an engine
        puts NULLs."""
        direction = " DESC" if desc else ""
        index = query.columns.index(column)
        name = f"ordered.c{index}"
        if query.column_kind(column) != "key":  # a number or NULL
            return [f"CASE WHEN {name} IS NULL THEN 1 ELSE 0 END", f"{name}{direction}"]
        value = self.from_json_text(name)
        is_number = self.truth(self.is_type(value, "number"))
        is_string = self.truth(self.is_type(value, "string"))
        return [
            f"CASE WHEN {is_number} THEN 0 WHEN {is_string} THEN 1 ELSE 2 END",
            f"CASE WHEN {is_number} THEN {self.number(value)} END{direction}",
            f"CASE WHEN {is_string} THEN {self.exact_text(self.string(value))} END{direction}",
        ]

    def from_json_text(self, text: str) -> str:
        """A JSON value expression of a column that holds JSON text (an output column)."""
        return text

    def check_representation(self) -> None:
        """NotExpressible when the variant keeps no document the paths can be read from."""

    def path(self, path: Path_, element: str) -> str:
        if not path.element and path.keys in getattr(self, "refs", {}):
            return self.refs[path.keys]
        base = element if path.element else self.document()
        return self.child(base, path.keys) if path.keys else base

    def predicate(self, where: Filter | None, element: str) -> str:
        assert where is not None
        if isinstance(where, Combined):
            if where.op == "not":
                return f"(NOT {self.predicate(where.parts[0], element)})"
            joiner = " AND " if where.op == "and" else " OR "
            return "(" + joiner.join(self.predicate(p, element) for p in where.parts) + ")"
        return self.truth(self.condition(where, self.path(where.path, element)))

    def condition(self, condition: Condition, value: str) -> str:
        op, literal = condition.op, condition.value
        if op == "exists":
            return self.present(value) if literal else f"(NOT {self.present(value)})"
        if op == "in":
            return "(" + " OR ".join(self.truth(self.compare(value, "eq", v)) for v in literal) + ")"
        if op == "prefix":
            return f"({self.is_type(value, 'string')} AND {self.starts_with(self.string(value), literal)})"
        if op == "contains":
            return f"({self.is_type(value, 'string')} AND {self.contains(self.string(value), literal)})"
        if op == "array_contains":
            return f"({self.is_type(value, 'array')} AND {self.array_contains(value, literal)})"
        return self.compare(value, op, literal)

    def compare(self, value: str, op: str, literal: Any) -> str:
        sql_op = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
        if literal is None:
            test = self.is_type(value, "null")
            return test if op == "eq" else "(1 = 0)"  # null = null; nothing is a null unequal to null
        if isinstance(literal, bool):
            same = self.boolean_is(value, literal)
            return f"({self.is_type(value, 'boolean')} AND {same if op == 'eq' else 'NOT ' + same})"
        if isinstance(literal, int | float):
            number = f"{self.number(value)} {sql_op} {self.number_literal(literal)}"
            return f"({self.is_type(value, 'number')} AND {number})"
        text = self.exact_text(self.string(value))
        return f"({self.is_type(value, 'string')} AND {text} {sql_op} {self.exact_text(self.quote(literal))})"

    def scalar(self, value: str) -> str:
        return self.is_type(value, "number", "string", "boolean")

    def group_expression(self, key: GroupKey, element: str) -> str:
        """A group key's value: the JSON value where it is a string, number or boolean (the
        engine's own equality groups it), else NULL; or its time bucket."""
        value = self.path(key.path, element)
        if key.unit is None:
            return f"CASE WHEN {self.truth(self.scalar(value))} THEN {self.group_value(value)} END"
        return self.bucket(key, value)

    def group_value(self, value: str) -> str:
        """A scalar JSON value as the engine groups it (its JSON type, or its text)."""
        return value

    def key_text(self, column: str) -> str:
        """A grouped key's column (what :meth:`group_value` gave) as JSON text."""
        return self.json_text(column)

    def bucket(self, key: GroupKey, value: str) -> str:
        assert key.unit is not None and key.time_format is not None
        width = BUCKET_UNITS[key.unit]
        if key.time_format == "iso8601":
            seconds = self.epoch_of_iso(self.string(value))
            test = self.is_type(value, "string")
        else:
            seconds = f"{self.number(value)} / {EPOCH_DIVISORS[key.time_format]}"
            test = self.is_type(value, "number")
        buckets = self.to_integer(f"FLOOR({seconds} / {width})")
        cycle = BUCKET_CYCLES.get(key.unit)
        start = f"({buckets} % {cycle})" if cycle else f"({buckets} * {width})"
        return f"CASE WHEN {self.truth(test)} THEN {start} END"

    def aggregate(self, fn: str, path: Path_ | None, element: str) -> str:
        if fn == "count":
            return "count(*)"
        assert path is not None
        value = self.path(path, element)
        if fn == "count_distinct":
            # one distinct count per JSON type (disjoint): numbers by value, so 31 and 31.0
            # are one, as JSON's equality has it (their texts differ)
            per_type = [
                f"count(DISTINCT CASE WHEN {self.truth(self.is_type(value, kind))} THEN {expression} END)"
                for kind, expression in (
                    ("number", self.number(value)),
                    ("string", self.string(value)),
                    ("boolean", self.json_text(value)),
                )
            ]
            return "(" + " + ".join(per_type) + ")"
        number = f"CASE WHEN {self.truth(self.is_type(value, 'number'))} THEN {self.number(value)} END"
        if fn == "span":
            return f"(max({number}) - min({number}))"
        return f"{fn}({number})"


def sql_literal_json(literal: Any) -> str:
    """A literal as JSON text."""
    import json

    return json.dumps(literal, ensure_ascii=False, separators=(",", ":"))


__all__ = ["JSON_TYPES", "NotExpressible", "SqlDialect", "sql_literal_json"]
