"""The portable queries as MongoDB aggregation pipelines (MongoDB by URL, and FerretDB).

Filters are aggregation expressions in ``$match: {$expr}``, not query operators: a query
operator on ``a.b`` reaches into arrays (``{"a.b": 1}`` matches ``{"a": [{"b": 1}]}``) and
``{"a": 1}`` matches ``{"a": [1]}``, which the spec's semantics forbid. A path is read only
when each key before its last holds an object; literals are ``$literal`` (a string that starts
with ``$`` stays a string).
"""

from __future__ import annotations

import json

from docbench.contracts.portable import CompiledQuery, NotExpressible, PortableQueries
from docbench.core.jsontypes import JsonArray, JsonObject, JsonValue
from docbench.queries.spec import (
    BUCKET_CYCLES,
    BUCKET_UNITS,
    EPOCH_DIVISORS,
    Aggregate,
    Combined,
    Condition,
    Filter,
    GroupKey,
    Path_,
    Query,
)

TYPE_NAMES = {
    "number": ["double", "int", "long", "decimal"],
    "string": ["string"],
    "boolean": ["bool"],
    "null": ["null"],
    "array": ["array"],
    "object": ["object"],
}
OPERATORS = {"eq": "$eq", "ne": "$ne", "lt": "$lt", "le": "$lte", "gt": "$gt", "ge": "$gte"}
FALSE: JsonObject = {"$eq": [1, 0]}


class MongoDBPortable(PortableQueries):
    def compile(self, query: Query) -> CompiledQuery:
        self.unnested: tuple[str, ...] = ()
        pipeline: list[JsonObject] = []
        if query.unnest is not None:
            keys = self.field_keys(query.unnest.path)
            pipeline.append({"$match": {"$expr": {"$isArray": self.path(query.unnest.path)}}})
            pipeline.append({"$unwind": "$" + ".".join(keys)})
            self.unnested = keys
        if query.where is not None:
            pipeline.append({"$match": {"$expr": self.predicate(query.where)}})
        if query.select:
            pipeline.append(
                {"$project": {"_id": 0, **{f"c{i}": self.path(p) for i, (_, p) in enumerate(query.select)}}}
            )
        else:
            pipeline.extend(self.grouping(query))
        if query.order_by:
            pipeline.extend(self.ordering(query))
        if query.limit:
            pipeline.append({"$limit": query.limit})
        columns = [f"c{i}" for i in range(len(query.columns))]
        text = json.dumps({"columns": columns, "pipeline": pipeline})
        return CompiledQuery(text, tuple(False for _ in columns))

    # ----- values --------------------------------------------------------------------------
    def field_keys(self, path: Path_) -> tuple[str, ...]:
        keys = (self.unnested + path.keys) if path.element else path.keys
        for key in keys:
            if "." in key or key.startswith("$") or not key:
                raise NotExpressible(
                    f"{self.engine.name}: the key {key!r} cannot be a field path (a dot or a leading $)"
                )
        return keys

    def path(self, path: Path_) -> JsonValue:
        """The value at the path, or missing ($$REMOVE) when a key before the last is not an
        object (MongoDB's field path would map over an array)."""
        keys = self.field_keys(path)
        guards: JsonArray = [
            {"$eq": [{"$type": "$" + ".".join(keys[:n])}, "object"]} for n in range(1, len(keys))
        ]
        if path.element and self.unnested:
            # the unwound element itself is the first value: no guard on the array it came from
            guards = guards[len(self.unnested) - 1 :]
        value = "$" + ".".join(keys)
        return {"$cond": [{"$and": guards}, value, "$$REMOVE"]} if guards else value

    @staticmethod
    def is_type(value: JsonValue, *json_types: str) -> JsonObject:
        return {"$in": [{"$type": value}, [n for t in json_types for n in TYPE_NAMES[t]]]}

    # ----- filters -------------------------------------------------------------------------
    def predicate(self, where: Filter) -> JsonObject:
        if isinstance(where, Combined):
            if where.op == "not":
                return {"$not": [self.predicate(where.parts[0])]}
            return {f"${where.op}": [self.predicate(p) for p in where.parts]}
        return self.condition(where, self.path(where.path))

    def condition(self, condition: Condition, value: JsonValue) -> JsonObject:
        op, literal = condition.op, condition.value
        if op == "exists":
            return {"$ne" if literal else "$eq": [{"$type": value}, "missing"]}
        if op == "in":
            return {"$or": [self.compare(value, "eq", v) for v in literal]}
        if op == "prefix":
            return {
                "$and": [self.is_type(value, "string"), {"$eq": [{"$indexOfBytes": [value, literal]}, 0]}]
            }
        if op == "contains":
            return {
                "$and": [self.is_type(value, "string"), {"$gte": [{"$indexOfBytes": [value, literal]}, 0]}]
            }
        if op == "array_contains":
            return {"$and": [{"$isArray": value}, {"$in": [{"$literal": literal}, value]}]}
        return self.compare(value, op, literal)

    def compare(self, value: JsonValue, op: str, literal: JsonValue) -> JsonObject:
        if literal is None:
            return self.is_type(value, "null") if op == "eq" else FALSE
        json_type = (
            "boolean"
            if isinstance(literal, bool)
            else "number"
            if isinstance(literal, int | float)
            else "string"
        )
        return {"$and": [self.is_type(value, json_type), {OPERATORS[op]: [value, {"$literal": literal}]}]}

    # ----- grouping ------------------------------------------------------------------------
    def key(self, key: GroupKey) -> JsonValue:
        value = self.path(key.path)
        if key.unit is None:
            return {"$cond": [self.is_type(value, "number", "string", "boolean"), value, None]}
        assert key.time_format is not None
        width = BUCKET_UNITS[key.unit]
        if key.time_format == "iso8601":
            date: JsonObject = {"$dateFromString": {"dateString": value, "onError": None, "onNull": None}}
            seconds: JsonValue = {"$floor": {"$divide": [{"$toLong": date}, 1000]}}
            test = self.is_type(value, "string")
        else:
            seconds = {"$divide": [value, EPOCH_DIVISORS[key.time_format]]}
            test = self.is_type(value, "number")
        buckets: JsonObject = {"$floor": {"$divide": [seconds, width]}}
        cycle = BUCKET_CYCLES.get(key.unit)
        start: JsonObject = {
            "$toLong": {"$mod": [buckets, cycle]} if cycle else {"$multiply": [buckets, width]}
        }
        return {"$cond": [test, start, None]}

    def grouping(self, query: Query) -> list[JsonObject]:
        group: JsonObject = {"_id": {f"k{i}": self.key(k) for i, k in enumerate(query.group_by)} or None}
        project: JsonObject = {"_id": 0}
        for i in range(len(query.group_by)):
            project[f"c{i}"] = f"$_id.k{i}"
        for j, aggregate in enumerate(query.aggregates):
            column = f"c{len(query.group_by) + j}"
            group.update(self.accumulators(aggregate, column))
            project[column] = self.final(aggregate, column)
        return [{"$group": group}, {"$project": project}]

    def accumulators(self, aggregate: Aggregate, column: str) -> JsonObject:
        if aggregate.fn == "count":
            return {column: {"$sum": 1}}
        assert aggregate.path is not None
        value = self.path(aggregate.path)
        if aggregate.fn == "count_distinct":
            scalar: JsonObject = {"$cond": [self.is_type(value, "number", "string", "boolean"), value, None]}
            return {column: {"$addToSet": scalar}}
        number: JsonObject = {"$cond": [self.is_type(value, "number"), value, None]}
        found: JsonObject = {f"{column}_n": {"$sum": {"$cond": [self.is_type(value, "number"), 1, 0]}}}
        if aggregate.fn == "span":
            return {f"{column}_max": {"$max": number}, f"{column}_min": {"$min": number}, **found}
        return {column: {f"${aggregate.fn}": number}, **found}

    @staticmethod
    def final(aggregate: Aggregate, column: str) -> JsonValue:
        if aggregate.fn == "count":
            return f"${column}"
        if aggregate.fn == "count_distinct":
            return {"$size": {"$filter": {"input": f"${column}", "cond": {"$ne": ["$$this", None]}}}}
        # $sum of no number is 0; the spec's sum of no number is null
        value: JsonValue = f"${column}"
        if aggregate.fn == "span":
            value = {"$subtract": [f"${column}_max", f"${column}_min"]}
        return {"$cond": [{"$gt": [f"${column}_n", 0]}, value, None]}

    def ordering(self, query: Query) -> list[JsonObject]:
        """Sort fields that order as the reference does: numbers, then strings, then the
        rest (MongoDB puts null before numbers)."""
        fields: JsonObject = {}
        sort: JsonObject = {}
        for n, item in enumerate(query.order_by):
            column = f"$c{query.columns.index(item.column)}"
            rank: JsonObject = {
                "$switch": {
                    "branches": [
                        {"case": self.is_type(column, "number"), "then": 0},
                        {"case": self.is_type(column, "string"), "then": 1},
                    ],
                    "default": 2,
                }
            }
            fields[f"o{n}_rank"] = rank
            fields[f"o{n}_value"] = {"$cond": [{"$lt": [rank, 2]}, column, None]}
            sort[f"o{n}_rank"] = 1
            sort[f"o{n}_value"] = -1 if item.desc else 1
        return [{"$addFields": fields}, {"$sort": sort}]


ADAPTER = MongoDBPortable
