"""The portable queries in the query DSL of Elasticsearch and OpenSearch.

The compiled form is a plan the session runs (``SearchSession._q0``): a bool query for the
filter, and either a search for the selected paths (read from ``_source``, the document as it
was sent) or composite aggregations over the group keys, paged to their end, with the metric
aggregations the spec asks for. Distinct counts are exact (a composite over key and value
pairs, counted), never ``cardinality``'s estimate.

What the DSL cannot say exactly is refused with the reason: ``unnest`` (an array is a
multi-valued field, one value per distinct element and document), ``eq: null`` (null is not
indexed), an ISO 8601 time bucket (strings are keywords under docbench's mapping, which turns
date detection off). Where the index's semantics differ without the query showing it (a
keyword field matches 5 and "5" alike; ``a.b`` reaches into arrays of objects; ``exists``
skips a null), the answer is judged as it comes and shows as wrong.
"""

from __future__ import annotations

import json

from docbench.contracts.engine import system_file
from docbench.contracts.portable import CompiledQuery, NotExpressible, PortableQueries
from docbench.core.jsontypes import JsonObject, JsonValue, as_object
from docbench.queries.spec import (
    BUCKET_CYCLES,
    BUCKET_UNITS,
    EPOCH_DIVISORS,
    Combined,
    Condition,
    Filter,
    GroupKey,
    Query,
)

WILDCARD_SPECIALS = ("\\", "*", "?")


class SearchPortable(PortableQueries):
    def exact(self) -> str | None:
        return (
            'a field has the type of its mapping: a keyword matches 5 and "5" alike and a long '
            'takes "5" as 5; a path reaches into arrays of objects; null is not indexed'
        )

    def compile(self, query: Query) -> CompiledQuery:
        settings = self.variant.settings
        if settings.get("documents"):
            raise NotExpressible(
                f"{self.engine.name}/{self.variant.name}: the documents are {settings['documents']}'s "
                "rewrite of Bluesky events (time_us a date, a key renamed), not the documents sent"
            )
        if query.select and settings.get("source") is False:
            raise NotExpressible(
                f"{self.engine.name}/{self.variant.name}: _source is disabled: a document's values "
                "cannot be read back"
            )
        mapped = self.mapped_paths()
        if mapped is not None:
            for path in query_paths(query):
                if path not in mapped:
                    raise NotExpressible(
                        f"{self.engine.name}/{self.variant.name}: {path} is not mapped (dynamic: "
                        "false): no query or aggregation reaches it"
                    )
        if query.unnest is not None:
            raise NotExpressible(
                f"{self.engine.name}: no unnest: an array is a multi-valued field (each distinct "
                "element once per document), not rows"
            )
        plan: JsonObject = {
            "query": self.filter(query.where) if query.where is not None else {"match_all": {}},
            "order": [[query.columns.index(o.column), o.desc] for o in query.order_by],
            "limit": query.limit,
        }
        if query.select:
            plan["select"] = [list(p.keys) for _, p in query.select]
        else:
            plan["keys"] = [self.key_source(k) for k in query.group_by]
            plan["aggregates"] = [
                {"fn": a.fn, "field": None if a.path is None else self.field(a.path.keys)}
                for a in query.aggregates
            ]
        return CompiledQuery(json.dumps({"portable": plan}), tuple(False for _ in query.columns))

    def mapped_paths(self) -> set[str] | None:
        """The paths an index with ``dynamic: false`` maps (None: every path is mapped as
        it first comes)."""
        file_name = str(self.variant.settings.get("index", "index.json"))
        index = as_object(json.loads(system_file(self.engine, file_name).read_text()), file_name)
        mappings = as_object(index.get("mappings", {}), "mappings")
        if mappings.get("dynamic") not in (False, "false", "strict"):
            return None
        found: set[str] = set()

        def walk(properties: JsonValue, prefix: str) -> None:
            for name, spec in as_object(properties, "properties").items():
                path = f"{prefix}{name}"
                found.add(path)
                walk(as_object(spec, path).get("properties", {}), path + ".")

        walk(mappings.get("properties", {}), "")
        return found

    @staticmethod
    def field(keys: tuple[str, ...]) -> str:
        return ".".join(keys)

    def key_source(self, key: GroupKey) -> JsonObject:
        field = self.field(key.path.keys)
        if key.unit is None:
            return {"terms": {"field": field, "missing_bucket": True}}
        if key.time_format == "iso8601":
            raise NotExpressible(
                f"{self.engine.name}: ISO 8601 text is a keyword under docbench's mapping (date "
                "detection off): no date to bucket"
            )
        if key.unit in BUCKET_CYCLES:
            raise NotExpressible(
                f"{self.engine.name}: {key.unit} is no histogram interval (a script would be)"
            )
        divisor = EPOCH_DIVISORS[str(key.time_format)]
        width = BUCKET_UNITS[key.unit]
        return {
            "histogram": {"field": field, "interval": divisor * width, "missing_bucket": True},
            "divisor": divisor,
        }

    def filter(self, where: Filter) -> JsonObject:
        if isinstance(where, Combined):
            parts: list[JsonValue] = [self.filter(p) for p in where.parts]
            if where.op == "and":
                return {"bool": {"filter": parts}}
            if where.op == "or":
                return {"bool": {"should": parts, "minimum_should_match": 1}}
            return {"bool": {"must_not": parts}}
        return self.condition(where)

    def condition(self, condition: Condition) -> JsonObject:
        field, op, value = self.field(condition.path.keys), condition.op, condition.value
        if op == "exists":
            exists: JsonObject = {"exists": {"field": field}}
            return exists if value else {"bool": {"must_not": [exists]}}
        if value is None or (op == "in" and None in value):
            raise NotExpressible(f"{self.engine.name}: null is not indexed: no query finds it")
        if op in ("eq", "array_contains"):
            return {"term": {field: value}}
        if op == "in":
            return {"terms": {field: list(value)}}
        if op == "ne":
            return {
                "bool": {"filter": [{"exists": {"field": field}}], "must_not": [{"term": {field: value}}]}
            }
        if op == "prefix":
            return {"prefix": {field: value}}
        if op == "contains":
            escaped = value
            for special in WILDCARD_SPECIALS:
                escaped = escaped.replace(special, "\\" + special)
            return {"wildcard": {field: {"value": f"*{escaped}*"}}}
        bound = {"lt": "lt", "le": "lte", "gt": "gt", "ge": "gte"}[op]
        return {"range": {field: {bound: value}}}


def query_paths(query: Query) -> list[str]:
    """Every document path the query searches or aggregates (dotted; selected paths are
    read from _source, mapped or not)."""
    found = [".".join(k.path.keys) for k in query.group_by]
    found += [".".join(a.path.keys) for a in query.aggregates if a.path is not None]

    def walk(where: Filter | None) -> None:
        if isinstance(where, Combined):
            for part in where.parts:
                walk(part)
        elif where is not None:
            found.append(".".join(where.path.keys))

    walk(query.where)
    return found


ADAPTER = SearchPortable
