"""The portable queries in LogsQL.

VictoriaLogs keeps every value as text, flattens objects into dotted field names and drops
empty values (a null, an empty string): so a filter ``eq: 5`` matches the text "5" too, a
path to an object is no field, and grouping keys come back as text. Those are its
semantics, and the answers are judged as they come. What LogsQL cannot say is refused with
the reason: ``eq: null``, string ranges, ``array_contains`` (an array is stored as its JSON
text), ISO 8601 time buckets, an unnested element's keys.

The compiled text's first line is a comment the session reads (the columns, their kinds and
the order); the order and the limit are applied to the rows the server returns, by the
reference's rules (numbers before strings), which LogsQL's ``sort`` does not follow.
"""

from __future__ import annotations

import json
import re
from typing import Any

from docbench.contracts.portable import CompiledQuery, NotExpressible, PortableQueries
from docbench.queries.spec import (
    BUCKET_CYCLES,
    BUCKET_UNITS,
    EPOCH_DIVISORS,
    Combined,
    Condition,
    Filter,
    Path_,
    Query,
)
from docbench.systems.victorialogs.loader import TIME_FIELD

HEADER = "# portable "


class LogsQLPortable(PortableQueries):
    def exact(self) -> str | None:
        return (
            "every value is text, objects are flattened into dotted fields, null and empty values are dropped"
        )

    def compile(self, query: Query) -> CompiledQuery:
        self.unnested: Path_ | None = query.unnest.path if query.unnest else None
        pipes = [self.filter(query.where) if query.where is not None else "*"]
        if query.unnest is not None:
            pipes.append(f"unroll ({self.field(query.unnest.path)})")
        kinds: list[str] = []
        if query.select:
            pipes.append("fields " + ", ".join(self.field(p) for _, p in query.select))
            names = [json.loads(self.field(p)) for _, p in query.select]
            kinds = ["key"] * len(names)
        else:
            names, kinds = self.grouping(query, pipes)
        header = {
            "columns": names,
            "kinds": kinds,
            "order": [[query.columns.index(o.column), o.desc] for o in query.order_by],
            "limit": query.limit,
        }
        text = HEADER + json.dumps(header) + "\n" + " | ".join(pipes)
        return CompiledQuery(text, tuple(False for _ in names))

    def field(self, path: Path_) -> str:
        if not path.element and path.keys == (TIME_FIELD,):
            raise NotExpressible(
                f"{self.engine.name}: {TIME_FIELD} is taken as each line's _time at ingestion (the time "
                "index, in nanoseconds): no field holds it"
            )
        if path.element:
            if path.keys or self.unnested is None:
                raise NotExpressible(
                    f"{self.engine.name}: an unnested element's keys (it is the element's JSON text)"
                )
            path = self.unnested
        return json.dumps(".".join(path.keys))

    def grouping(self, query: Query, pipes: list[str]) -> tuple[list[str], list[str]]:
        keys = []
        for i, key in enumerate(query.group_by):
            if key.unit is None:
                keys.append(self.field(key.path))
                continue
            if key.time_format == "iso8601":
                raise NotExpressible(
                    f"{self.engine.name}: an ISO 8601 field is text; LogsQL buckets numbers only"
                )
            scale = EPOCH_DIVISORS[str(key.time_format)] * BUCKET_UNITS[key.unit]
            cycle = BUCKET_CYCLES.get(key.unit)
            step = f"% {cycle}" if cycle else f"* {BUCKET_UNITS[key.unit]}"
            pipes.append(f"math floor({self.field(key.path)} / {scale}) {step} as k{i}")
            keys.append(f"k{i}")
        stats = []
        spans = []
        for j, aggregate in enumerate(query.aggregates):
            if aggregate.fn == "count":
                stats.append(f"count() a{j}")
            elif aggregate.fn == "span":
                assert aggregate.path is not None
                stats.append(
                    f"max({self.field(aggregate.path)}) x{j}, min({self.field(aggregate.path)}) y{j}"
                )
                spans.append(f"math x{j} - y{j} as a{j}")
            else:
                assert aggregate.path is not None
                function = "count_uniq" if aggregate.fn == "count_distinct" else aggregate.fn
                stats.append(f"{function}({self.field(aggregate.path)}) a{j}")
        by = f"by ({', '.join(keys)}) " if keys else ""
        pipes.append(f"stats {by}{', '.join(stats)}")
        names = [json.loads(k) if k.startswith('"') else k for k in keys] + [
            f"a{j}" for j in range(len(stats))
        ]
        kinds = ["bucket" if k.unit else "key" for k in query.group_by] + [a.fn for a in query.aggregates]
        return names, kinds

    def filter(self, where: Filter) -> str:
        if isinstance(where, Combined):
            if where.op == "not":
                return f"NOT ({self.filter(where.parts[0])})"
            return "(" + f" {where.op.upper()} ".join(self.filter(p) for p in where.parts) + ")"
        return self.condition(where)

    def condition(self, condition: Condition) -> str:
        field, op, value = self.field(condition.path), condition.op, condition.value
        if op == "exists":
            return f"{field}:*" if value else f"NOT {field}:*"
        if value is None or (op == "in" and None in value):
            raise NotExpressible(f"{self.engine.name}: null is not stored: no filter finds it")
        if op == "array_contains":
            raise NotExpressible(f"{self.engine.name}: an array is stored as its JSON text, not as values")
        if op in ("eq", "ne"):
            match = f"{field}:={self.literal(value)}"
            return match if op == "eq" else f"({field}:* AND NOT {match})"
        if op == "in":
            return f"{field}:in({', '.join(self.literal(v) for v in value)})"
        if op == "prefix":
            return f"{field}:={json.dumps(value)}*"
        if op == "contains":
            return f"{field}:~{json.dumps(re.escape(value))}"
        if isinstance(value, str):
            raise NotExpressible(f"{self.engine.name}: a range on text (LogsQL's ranges are numeric)")
        bound = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
        return f"{field}:{bound}{value!r}"

    @staticmethod
    def literal(value: Any) -> str:
        if isinstance(value, bool):
            return json.dumps("true" if value else "false")
        return json.dumps(str(value) if not isinstance(value, str) else value)


ADAPTER = LogsQLPortable
