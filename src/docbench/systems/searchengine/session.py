"""The analytics query session: runs the folder's ``queries.json`` aggregation requests and
turns their buckets into the canonical rows of :mod:`docbench.core.answers`.

engine_seconds = the sum of the ``took`` (milliseconds) of the search requests a query needed
(composite aggregations page through their buckets in several requests).
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.core.jsontypes import (
    JsonMapping,
    JsonObject,
    JsonValue,
    as_array,
    as_object,
    as_str,
    json_record,
)
from docbench.systems.searchengine.http import (
    HttpClient,
    first_value,
    member,
    member_object,
    objects,
    to_float,
    to_int,
)

HOUR_US = 3_600_000_000


@dataclass
class SearchStats:
    """What the search requests of one query added up to."""

    requests: int = 0
    took_ms: int = 0  # the sum of their ``took``
    truncated: int | None = None  # documents in groups beyond a terms aggregation's size


def _page_size(body: JsonObject) -> int:
    return to_int(member_object(body, "aggs", "pairs", "composite").get("size", 10000))


def _number(value: JsonValue, what: str = "value") -> int | float:
    """A JSON number as it came (an integer stays one): what arithmetic on it needs."""
    if isinstance(value, int | float):
        return value
    raise TypeError(f"{what}: expected a number, got {'null' if value is None else type(value).__name__}")


class SearchSession(QuerySession):
    """One keep-alive connection in the query worker; ``spec`` is the analytics adapter's
    ``session_spec()`` (url, index, server_pid, local, optional timeout)."""

    def __init__(self, spec: JsonMapping) -> None:
        self.spec = spec
        timeout = spec.get("timeout")
        self.client = HttpClient(
            as_str(spec["url"], "url"), timeout=to_float(timeout) + 30 if timeout else None
        )
        self.index = as_str(spec["index"], "index")
        self.search_path = f"/{quote(self.index)}/_search?request_cache=false"
        self.cancelled = False

    # the HTTP side ------------------------------------------------------------------------
    def _search(self, body: JsonObject, stats: SearchStats) -> JsonObject:
        if self.cancelled:
            raise RuntimeError("cancelled")
        answer = self.client.request_object("POST", self.search_path, body, what="search")
        stats.requests += 1
        stats.took_ms += to_int(answer.get("took", 0))
        if answer.get("timed_out"):
            raise RuntimeError("the search timed out")
        shards = as_object(answer.get("_shards", {}), "_shards")
        if shards.get("failed"):
            raise RuntimeError(
                f"search failed on {shards['failed']} shard(s): "
                f"{as_array(shards.get('failures', []), 'failures')[:1]}"
            )
        return answer

    def _composite(self, body: JsonObject, stats: SearchStats) -> Iterator[JsonObject]:
        """Every bucket of the composite aggregation ``pairs`` of body, page by page."""
        body = copy.deepcopy(body)
        composite = member_object(body, "aggs", "pairs", "composite")
        while True:
            answer = self._search(body, stats)
            aggregation = member_object(answer, "aggregations", "pairs")
            buckets = objects(aggregation["buckets"], "buckets")
            yield from buckets
            after = aggregation.get("after_key")
            if not buckets or after is None or len(buckets) < _page_size(body):
                return
            composite["after"] = after

    # QuerySession -------------------------------------------------------------------------
    def execute(self, query_number: int, text: str) -> QueryOutcome:
        query = as_object(json.loads(text), "query")
        stats = SearchStats()
        rows = getattr(self, f"_q{query_number}")(query, stats)
        outcome = QueryOutcome(rows=rows, engine_seconds=stats.took_ms / 1000.0)
        outcome.extra["search_requests"] = stats.requests
        if self.client.failovers:
            # Requests sent again to another node because one did not answer (a node died).
            outcome.extra["failovers"] = [json_record(event, "failover") for event in self.client.failovers]
            self.client.failovers.clear()
        if stats.truncated is not None:
            outcome.extra["truncated_groups"] = stats.truncated
        return outcome

    # A portable query (systems/searchengine/portable.py): the plan its compiler wrote.
    def _q0(self, query: JsonObject, stats: SearchStats) -> list[list[JsonValue]]:
        from docbench.queries.semantics import sort_by_columns

        plan = member_object(query, "portable")
        select = "select" in plan
        rows = self._portable_select(plan, stats) if select else self._portable_groups(plan, stats)
        order = [as_array(column, "order") for column in as_array(plan["order"], "order")]
        rows = sort_by_columns(rows, [(to_int(i), bool(desc)) for i, desc in order])
        return rows[: to_int(plan["limit"])] if plan.get("limit") else rows

    def _portable_select(self, plan: JsonObject, stats: SearchStats) -> list[list[JsonValue]]:
        """The selected paths of every matching document, from its _source (as it was sent)."""
        size = 10_000
        body: JsonObject = {"size": size, "query": plan["query"], "track_total_hits": True, "sort": ["_doc"]}
        answer = self._search(body, stats)
        hits = objects(member(answer, "hits", "hits"), "hits")
        if to_int(member(answer, "hits", "total", "value")) > size:
            raise RuntimeError(f"more than {size} documents match: a projection reads at most {size}")
        paths = [
            [as_str(key, "select") for key in as_array(keys, "select")] for keys in as_array(plan["select"])
        ]
        rows = []
        for hit in hits:
            row: list[JsonValue] = []
            for keys in paths:
                value: JsonValue = hit.get("_source", {})
                for key in keys:
                    value = value.get(key) if isinstance(value, dict) else None
                row.append(value)
            rows.append(row)
        return rows

    def _portable_groups(self, plan: JsonObject, stats: SearchStats) -> list[list[JsonValue]]:
        """Group keys by composite aggregation (paged to the end), metrics per bucket; a
        distinct count from the (keys, value) pairs of a second composite."""
        keys = objects(plan["keys"], "keys")
        aggregates = objects(plan["aggregates"], "aggregates")
        metrics: JsonObject = {}
        for j, aggregate in enumerate(aggregates):
            if aggregate["fn"] in ("sum", "min", "max", "avg", "span"):
                if aggregate["fn"] == "span":
                    metrics[f"a{j}"] = {"max": {"field": aggregate["field"]}}
                    metrics[f"b{j}"] = {"min": {"field": aggregate["field"]}}
                else:
                    metrics[f"a{j}"] = {as_str(aggregate["fn"], "fn"): {"field": aggregate["field"]}}
                metrics[f"n{j}"] = {"value_count": {"field": aggregate["field"]}}
        sources: list[JsonObject] = [
            {f"k{i}": {k: v for k, v in key.items() if k != "divisor"}} for i, key in enumerate(keys)
        ]
        groups: dict[tuple[JsonValue, ...], JsonObject] = {}
        if keys:
            body: JsonObject = {
                "size": 0,
                "query": plan["query"],
                "aggs": {"pairs": {"composite": {"sources": [*sources], "size": 10000}, "aggs": metrics}},
            }
            for bucket in self._composite(body, stats):
                groups[self._key(bucket, keys)] = bucket
        else:
            answer = self._search(
                {"size": 0, "query": plan["query"], "track_total_hits": True, "aggs": metrics}, stats
            )
            groups[()] = {
                "doc_count": to_int(member(answer, "hits", "total", "value")),
                **as_object(answer.get("aggregations", {}), "aggregations"),
            }
        distinct = self._portable_distinct(aggregates, plan["query"], sources, keys, stats)
        rows = []
        for group, bucket in groups.items():
            row = list(group)
            for j, aggregate in enumerate(aggregates):
                fn = aggregate["fn"]
                if fn == "count":
                    row.append(to_int(bucket["doc_count"]))
                elif fn == "count_distinct":
                    row.append(distinct.get(j, {}).get(group, 0))
                elif to_int(member(bucket, f"n{j}", "value")) == 0:
                    row.append(None)
                elif fn == "span":
                    row.append(
                        _number(member(bucket, f"a{j}", "value")) - _number(member(bucket, f"b{j}", "value"))
                    )
                else:
                    row.append(member(bucket, f"a{j}", "value"))
            rows.append(row)
        return rows

    @staticmethod
    def _key(bucket: JsonObject, keys: list[JsonObject]) -> tuple[JsonValue, ...]:
        values: list[JsonValue] = []
        for i, key in enumerate(keys):
            value = member(bucket, "key", f"k{i}")
            if "divisor" in key and value is not None:
                value = int(_number(value, "key") // _number(key["divisor"], "divisor"))
            values.append(value)
        return tuple(values)

    def _portable_distinct(
        self,
        aggregates: list[JsonObject],
        query: JsonValue,
        sources: list[JsonObject],
        keys: list[JsonObject],
        stats: SearchStats,
    ) -> dict[int, dict[tuple[JsonValue, ...], int]]:
        counts: dict[int, dict[tuple[JsonValue, ...], int]] = {}
        for j, aggregate in enumerate(aggregates):
            if aggregate["fn"] != "count_distinct":
                continue
            value: JsonObject = {"v": {"terms": {"field": aggregate["field"]}}}
            body: JsonObject = {
                "size": 0,
                "query": query,
                "aggs": {"pairs": {"composite": {"sources": [*sources, value], "size": 10000}}},
            }
            per_group: dict[tuple[JsonValue, ...], int] = defaultdict(int)
            for bucket in self._composite(body, stats):
                per_group[self._key(bucket, keys)] += 1
            counts[j] = per_group
        return counts

    def alternatives(self, query_number: int, text: str) -> dict[str, bool]:
        """Q2 also in the usual (approximate) way: terms + cardinality, beside the exact form."""
        return {"cardinality": True} if query_number == 2 and "cardinality" in json.loads(text) else {}

    def execute_alternative(self, name: str, query_number: int, text: str) -> QueryOutcome:
        stats = SearchStats()
        rows = self._q2_cardinality(member_object(json.loads(text), name), stats)
        return QueryOutcome(rows=rows, engine_seconds=stats.took_ms / 1000.0)

    def stats_after(self) -> JsonObject:
        with contextlib.suppress(Exception):
            return {"heap_used_bytes": self._heap_used()}
        return {}

    def _heap_used(self) -> int:
        answer = self.client.request(
            "GET", "/_nodes/_local/stats/jvm?filter_path=nodes.*.jvm.mem.heap_used_in_bytes"
        )
        node = first_value(member(answer, "nodes"), "nodes")
        return to_int(member(node, "jvm", "mem", "heap_used_in_bytes"))

    @staticmethod
    def _check_complete(aggregation: JsonObject, stats: SearchStats) -> None:
        other = to_int(aggregation.get("sum_other_doc_count", 0) or 0)
        if other:
            stats.truncated = (stats.truncated or 0) + other
            raise RuntimeError(
                f"terms aggregation too small: {other} documents in groups "
                f'beyond its size (raise "size" in queries.json)'
            )
        # On several shards each shard sends its top terms: a non-zero bound means a count may
        # be short (no approximate answer is passed off as exact).
        error_bound = to_int(aggregation.get("doc_count_error_upper_bound", 0) or 0)
        if error_bound:
            raise RuntimeError(
                f"terms aggregation inexact across shards (counts may be short "
                f'by up to {error_bound}): raise "size" in queries.json'
            )

    def _q1(self, query: JsonObject, stats: SearchStats) -> list[tuple[Any, ...]]:
        answer = self._search(member_object(query, "request"), stats)
        aggs = member_object(answer, "aggregations")
        collections = member_object(aggs, "collections")
        self._check_complete(collections, stats)
        rows: list[tuple[Any, ...]] = [
            (b["key"], to_int(b["doc_count"])) for b in objects(collections["buckets"], "buckets")
        ]
        missing = to_int(member(aggs, "no_collection", "doc_count"))
        if missing:
            rows.append((None, missing))
        rows.sort(key=lambda r: -r[1])
        return rows

    def _q2(self, query: JsonObject, stats: SearchStats) -> list[tuple[Any, ...]]:
        counts: dict[Any, int] = defaultdict(int)
        distinct: dict[Any, int] = defaultdict(int)
        for bucket in self._composite(member_object(query, "request"), stats):
            key = member_object(bucket, "key")
            collection, did = key["collection"], key["did"]
            counts[collection] += to_int(bucket["doc_count"])
            if did is not None:  # a document without did is counted but has no did to count
                distinct[collection] += 1
        rows = [(c, n, distinct[c]) for c, n in counts.items()]
        rows.sort(key=lambda r: -r[1])
        return rows

    def _q2_cardinality(self, request: JsonObject, stats: SearchStats) -> list[list[Any]]:
        answer = self._search(request, stats)
        aggregation = member_object(answer, "aggregations", "collections")
        rows: list[list[Any]] = [
            [b["key"], to_int(b["doc_count"]), to_int(member(b, "users", "value"))]
            for b in objects(aggregation["buckets"], "buckets")
        ]
        rows.sort(key=lambda r: -r[1])
        return rows

    def _q3(self, query: JsonObject, stats: SearchStats) -> list[tuple[Any, ...]]:
        # No scripting (Elasticsearch's test distribution has no painless; OpenSearch's gets it
        # for updates only, so both answer alike): buckets of one hour of time_us
        # (microseconds), folded into hours of the day here.
        answer = self._search(member_object(query, "request"), stats)
        aggregation = member_object(answer, "aggregations", "collections")
        self._check_complete(aggregation, stats)
        interval = to_int(query.get("hour_us", HOUR_US))
        unit = _time_unit_us(query)
        counts: dict[tuple[Any, int], int] = defaultdict(int)
        for bucket in objects(aggregation["buckets"], "buckets"):
            for hour in objects(member(bucket, "hours", "buckets"), "hours"):
                hour_of_day = (_integer(hour["key"]) * unit // interval) % 24
                counts[(bucket["key"], hour_of_day)] += to_int(hour["doc_count"])
        rows = [(c, h, n) for (c, h), n in counts.items() if n]
        rows.sort(key=lambda r: (r[1], r[0]))
        return rows

    def _q4(self, query: JsonObject, stats: SearchStats) -> list[tuple[Any, ...]]:
        # Every user's first post, paged (exact on several shards: a terms aggregation ordered
        # by its min sub-aggregation would pick each shard's top users only), ranked here.
        limit = to_int(query.get("limit", 3))
        unit = _time_unit_us(query)
        firsts = [
            (_integer(member(b, "first", "value")) * unit, as_str(member(b, "key", "did"), "did"))
            for b in self._composite(member_object(query, "request"), stats)
            if member(b, "first", "value") is not None
        ]
        firsts.sort()
        return [(did, first) for first, did in firsts[:limit]]

    def _q5(self, query: JsonObject, stats: SearchStats) -> list[tuple[Any, ...]]:
        # No bucket_script without scripting: page through (did -> min, max) and rank here.
        limit = to_int(query.get("limit", 3))
        unit = _time_unit_us(query)
        spans: list[tuple[int, str]] = []
        for bucket in self._composite(member_object(query, "request"), stats):
            first = member(bucket, "first", "value")
            if first is None:
                continue
            span = (_integer(member(bucket, "last", "value")) - _integer(first)) * unit
            spans.append((span, as_str(member(bucket, "key", "did"), "did")))
        spans.sort(key=lambda s: (-s[0], s[1]))
        return [(did, span // 1000) for span, did in spans[:limit]]

    def explain(self, query_number: int, text: str) -> str | None:
        """The search profile of the query's (first) request: Lucene queries and collectors."""
        query = as_object(json.loads(text), "query")
        body = copy.deepcopy(member_object(query, "request"))
        body["profile"] = True
        answer = self.client.request_object("POST", self.search_path, body, what="profile")
        profile = as_object(answer.get("profile", {}), "profile")
        shards = objects(profile.get("shards", []), "shards")
        summary: list[JsonValue] = []
        for shard in shards:
            for search in objects(shard.get("searches", []), "searches"):
                summary.append(
                    {
                        "query": [_profile_tree(q) for q in objects(search.get("query", []), "query")],
                        "collector": as_array(search.get("collector", []), "collector")[:1],
                    }
                )
            summary.append(
                {
                    "aggregations": [
                        _profile_tree(a) for a in objects(shard.get("aggregations", []), "aggregations")
                    ]
                }
            )
        return json.dumps({"request": query["request"], "profile": summary}, indent=1)

    def engine_pids(self) -> list[int]:
        """The JVMs of every node docbench started here (or the one a local URL names)."""
        if not self.spec.get("local", True):
            return []
        found = []
        for pid in as_array(self.spec.get("server_pids") or [self.spec.get("server_pid")], "server_pids"):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes() if pid else b""
            except OSError:
                continue
            if b"java" in cmdline:
                found.append(to_int(pid))
        return found

    def cancel(self) -> None:
        self.cancelled = True
        self.client.abort()

    def close(self) -> None:
        self.client.close()


def _integer(value: JsonValue) -> int:
    """A min/max of a long field comes as a double; time_us (< 2^53) is exact in it."""
    return int(round(to_float(value)))


def _time_unit_us(query: JsonObject) -> int:
    """Microseconds per unit of the query's time_us field: 1, or 1000 where the field is a
    millisecond date (JSONBench's Filebeat documents, ``queries-jsonbench.json``)."""
    return to_int(query.get("time_unit_us", 1))


def _profile_tree(node: JsonObject) -> JsonObject:
    out: JsonObject = {
        "type": node.get("type"),
        "description": node.get("description"),
        "time_ms": round(to_int(node.get("time_in_nanos", 0)) / 1e6, 3),
    }
    children = [_profile_tree(c) for c in objects(node.get("children", []), "children")]
    if children:
        out["children"] = [*children]
    return out
