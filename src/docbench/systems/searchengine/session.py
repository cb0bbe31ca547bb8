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
from pathlib import Path
from typing import Any
from urllib.parse import quote

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.systems.searchengine.http import HttpClient

HOUR_US = 3_600_000_000


def _page_size(body: dict[str, Any]) -> int:
    return int(body["aggs"]["pairs"]["composite"].get("size", 10000))


class SearchSession(QuerySession):
    """One keep-alive connection in the query worker; ``spec`` is the analytics adapter's
    ``session_spec()`` (url, index, server_pid, local, optional timeout)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        timeout = spec.get("timeout")
        self.client = HttpClient(spec["url"], timeout=float(timeout) + 30 if timeout else None)
        self.index = spec["index"]
        self.search_path = f"/{quote(self.index)}/_search?request_cache=false"
        self.cancelled = False

    # the HTTP side ------------------------------------------------------------------------
    def _search(self, body: dict[str, Any], stats: dict[str, Any]) -> dict[str, Any]:
        if self.cancelled:
            raise RuntimeError("cancelled")
        answer = self.client.request("POST", self.search_path, body, what="search")
        stats["requests"] = stats.get("requests", 0) + 1
        stats["took_ms"] = stats.get("took_ms", 0) + int(answer.get("took", 0))
        if answer.get("timed_out"):
            raise RuntimeError("the search timed out")
        shards = answer.get("_shards", {})
        if shards.get("failed"):
            raise RuntimeError(
                f"search failed on {shards['failed']} shard(s): {shards.get('failures', [])[:1]}"
            )
        return answer

    def _composite(self, body: dict[str, Any], stats: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Every bucket of the composite aggregation ``pairs`` of body, page by page."""
        body = copy.deepcopy(body)
        composite = body["aggs"]["pairs"]["composite"]
        while True:
            answer = self._search(body, stats)
            aggregation = answer["aggregations"]["pairs"]
            buckets = aggregation["buckets"]
            yield from buckets
            after = aggregation.get("after_key")
            if not buckets or after is None or len(buckets) < _page_size(body):
                return
            composite["after"] = after

    # QuerySession -------------------------------------------------------------------------
    def execute(self, query_number: int, text: str) -> QueryOutcome:
        query = json.loads(text)
        stats: dict[str, Any] = {}
        rows = getattr(self, f"_q{query_number}")(query, stats)
        outcome = QueryOutcome(rows=rows, engine_seconds=stats.get("took_ms", 0) / 1000.0)
        outcome.extra["search_requests"] = stats.get("requests", 0)
        if self.client.failovers:
            # Requests sent again to another node because one did not answer (a node died).
            outcome.extra["failovers"] = [dict(event) for event in self.client.failovers]
            self.client.failovers.clear()
        if "truncated" in stats:
            outcome.extra["truncated_groups"] = stats["truncated"]
        return outcome

    # A portable query (systems/searchengine/portable.py): the plan its compiler wrote.
    def _q0(self, query: dict[str, Any], stats: dict[str, Any]) -> list[list[Any]]:
        from docbench.queries.semantics import sort_by_columns

        plan = query["portable"]
        select = "select" in plan
        rows = self._portable_select(plan, stats) if select else self._portable_groups(plan, stats)
        rows = sort_by_columns(rows, [(int(i), bool(desc)) for i, desc in plan["order"]])
        return rows[: plan["limit"]] if plan.get("limit") else rows

    def _portable_select(self, plan: dict[str, Any], stats: dict[str, Any]) -> list[list[Any]]:
        """The selected paths of every matching document, from its _source (as it was sent)."""
        size = 10_000
        body = {"size": size, "query": plan["query"], "track_total_hits": True, "sort": ["_doc"]}
        answer = self._search(body, stats)
        hits = answer["hits"]["hits"]
        if int(answer["hits"]["total"]["value"]) > size:
            raise RuntimeError(f"more than {size} documents match: a projection reads at most {size}")
        rows = []
        for hit in hits:
            row = []
            for keys in plan["select"]:
                value: Any = hit.get("_source", {})
                for key in keys:
                    value = value.get(key) if isinstance(value, dict) else None
                row.append(value)
            rows.append(row)
        return rows

    def _portable_groups(self, plan: dict[str, Any], stats: dict[str, Any]) -> list[list[Any]]:
        """Group keys by composite aggregation (paged to the end), metrics per bucket; a
        distinct count from the (keys, value) pairs of a second composite."""
        keys = plan["keys"]
        metrics: dict[str, Any] = {}
        for j, aggregate in enumerate(plan["aggregates"]):
            if aggregate["fn"] in ("sum", "min", "max", "avg", "span"):
                if aggregate["fn"] == "span":
                    metrics[f"a{j}"] = {"max": {"field": aggregate["field"]}}
                    metrics[f"b{j}"] = {"min": {"field": aggregate["field"]}}
                else:
                    metrics[f"a{j}"] = {aggregate["fn"]: {"field": aggregate["field"]}}
                metrics[f"n{j}"] = {"value_count": {"field": aggregate["field"]}}
        sources = [{f"k{i}": {k: v for k, v in key.items() if k != "divisor"}} for i, key in enumerate(keys)]
        groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        if keys:
            body = {
                "size": 0,
                "query": plan["query"],
                "aggs": {"pairs": {"composite": {"sources": sources, "size": 10000}, "aggs": metrics}},
            }
            for bucket in self._composite(body, stats):
                groups[self._key(bucket, keys)] = bucket
        else:
            answer = self._search(
                {"size": 0, "query": plan["query"], "track_total_hits": True, "aggs": metrics}, stats
            )
            groups[()] = {
                "doc_count": int(answer["hits"]["total"]["value"]),
                **answer.get("aggregations", {}),
            }
        distinct = self._portable_distinct(plan, sources, keys, stats)
        rows = []
        for group, bucket in groups.items():
            row = list(group)
            for j, aggregate in enumerate(plan["aggregates"]):
                fn = aggregate["fn"]
                if fn == "count":
                    row.append(int(bucket["doc_count"]))
                elif fn == "count_distinct":
                    row.append(distinct.get(j, {}).get(group, 0))
                elif int(bucket[f"n{j}"]["value"]) == 0:
                    row.append(None)
                elif fn == "span":
                    row.append(bucket[f"a{j}"]["value"] - bucket[f"b{j}"]["value"])
                else:
                    row.append(bucket[f"a{j}"]["value"])
            rows.append(row)
        return rows

    @staticmethod
    def _key(bucket: dict[str, Any], keys: list[dict[str, Any]]) -> tuple[Any, ...]:
        values = []
        for i, key in enumerate(keys):
            value = bucket["key"][f"k{i}"]
            if "divisor" in key and value is not None:
                value = int(value // key["divisor"])
            values.append(value)
        return tuple(values)

    def _portable_distinct(
        self,
        plan: dict[str, Any],
        sources: list[dict[str, Any]],
        keys: list[dict[str, Any]],
        stats: dict[str, Any],
    ) -> dict[int, dict[tuple[Any, ...], int]]:
        counts: dict[int, dict[tuple[Any, ...], int]] = {}
        for j, aggregate in enumerate(plan["aggregates"]):
            if aggregate["fn"] != "count_distinct":
                continue
            value = {"v": {"terms": {"field": aggregate["field"]}}}
            body = {
                "size": 0,
                "query": plan["query"],
                "aggs": {"pairs": {"composite": {"sources": [*sources, value], "size": 10000}}},
            }
            per_group: dict[tuple[Any, ...], int] = defaultdict(int)
            for bucket in self._composite(body, stats):
                per_group[self._key(bucket, keys)] += 1
            counts[j] = per_group
        return counts

    def alternatives(self, query_number: int, text: str) -> dict[str, bool]:
        """Q2 also in the usual (approximate) way: terms + cardinality, beside the exact form."""
        return {"cardinality": True} if query_number == 2 and "cardinality" in json.loads(text) else {}

    def execute_alternative(self, name: str, query_number: int, text: str) -> QueryOutcome:
        stats: dict[str, Any] = {}
        rows = self._q2_cardinality(json.loads(text)[name], stats)
        return QueryOutcome(rows=rows, engine_seconds=stats.get("took_ms", 0) / 1000.0)

    def stats_after(self) -> dict[str, Any]:
        with contextlib.suppress(Exception):
            return {"heap_used_bytes": self._heap_used()}
        return {}

    def _heap_used(self) -> int:
        answer = self.client.request(
            "GET", "/_nodes/_local/stats/jvm?filter_path=nodes.*.jvm.mem.heap_used_in_bytes"
        )
        return int(next(iter(answer["nodes"].values()))["jvm"]["mem"]["heap_used_in_bytes"])

    @staticmethod
    def _check_complete(aggregation: dict[str, Any], stats: dict[str, Any]) -> None:
        other = int(aggregation.get("sum_other_doc_count", 0) or 0)
        if other:
            stats["truncated"] = stats.get("truncated", 0) + other
            raise RuntimeError(
                f"terms aggregation too small: {other} documents in groups "
                f'beyond its size (raise "size" in queries.json)'
            )
        # On several shards each shard sends its top terms: a non-zero bound means a count may
        # be short (no approximate answer is passed off as exact).
        error_bound = int(aggregation.get("doc_count_error_upper_bound", 0) or 0)
        if error_bound:
            raise RuntimeError(
                f"terms aggregation inexact across shards (counts may be short "
                f'by up to {error_bound}): raise "size" in queries.json'
            )

    def _q1(self, query: dict[str, Any], stats: dict[str, Any]) -> list[tuple[Any, ...]]:
        answer = self._search(query["request"], stats)
        aggs = answer["aggregations"]
        self._check_complete(aggs["collections"], stats)
        rows: list[tuple[Any, ...]] = [
            (b["key"], int(b["doc_count"])) for b in aggs["collections"]["buckets"]
        ]
        missing = int(aggs["no_collection"]["doc_count"])
        if missing:
            rows.append((None, missing))
        rows.sort(key=lambda r: -r[1])
        return rows

    def _q2(self, query: dict[str, Any], stats: dict[str, Any]) -> list[tuple[Any, ...]]:
        counts: dict[Any, int] = defaultdict(int)
        distinct: dict[Any, int] = defaultdict(int)
        for bucket in self._composite(query["request"], stats):
            collection, did = bucket["key"]["collection"], bucket["key"]["did"]
            counts[collection] += int(bucket["doc_count"])
            if did is not None:  # a document without did is counted but has no did to count
                distinct[collection] += 1
        rows = [(c, n, distinct[c]) for c, n in counts.items()]
        rows.sort(key=lambda r: -r[1])
        return rows

    def _q2_cardinality(self, request: dict[str, Any], stats: dict[str, Any]) -> list[list[Any]]:
        answer = self._search(request, stats)
        aggregation = answer["aggregations"]["collections"]
        rows = [[b["key"], int(b["doc_count"]), int(b["users"]["value"])] for b in aggregation["buckets"]]
        rows.sort(key=lambda r: -r[1])
        return rows

    def _q3(self, query: dict[str, Any], stats: dict[str, Any]) -> list[tuple[Any, ...]]:
        # No scripting (Elasticsearch's test distribution has no painless; OpenSearch's gets it
        # for updates only, so both answer alike): buckets of one hour of time_us
        # (microseconds), folded into hours of the day here.
        answer = self._search(query["request"], stats)
        aggregation = answer["aggregations"]["collections"]
        self._check_complete(aggregation, stats)
        interval = int(query.get("hour_us", HOUR_US))
        unit = _time_unit_us(query)
        counts: dict[tuple[Any, int], int] = defaultdict(int)
        for bucket in aggregation["buckets"]:
            for hour in bucket["hours"]["buckets"]:
                hour_of_day = (_integer(hour["key"]) * unit // interval) % 24
                counts[(bucket["key"], hour_of_day)] += int(hour["doc_count"])
        rows = [(c, h, n) for (c, h), n in counts.items() if n]
        rows.sort(key=lambda r: (r[1], r[0]))
        return rows

    def _q4(self, query: dict[str, Any], stats: dict[str, Any]) -> list[tuple[Any, ...]]:
        # Every user's first post, paged (exact on several shards: a terms aggregation ordered
        # by its min sub-aggregation would pick each shard's top users only), ranked here.
        limit = int(query.get("limit", 3))
        unit = _time_unit_us(query)
        firsts = [
            (_integer(b["first"]["value"]) * unit, b["key"]["did"])
            for b in self._composite(query["request"], stats)
            if b["first"]["value"] is not None
        ]
        firsts.sort()
        return [(did, first) for first, did in firsts[:limit]]

    def _q5(self, query: dict[str, Any], stats: dict[str, Any]) -> list[tuple[Any, ...]]:
        # No bucket_script without scripting: page through (did -> min, max) and rank here.
        limit = int(query.get("limit", 3))
        unit = _time_unit_us(query)
        spans: list[tuple[int, str]] = []
        for bucket in self._composite(query["request"], stats):
            if bucket["first"]["value"] is None:
                continue
            span = (_integer(bucket["last"]["value"]) - _integer(bucket["first"]["value"])) * unit
            spans.append((span, bucket["key"]["did"]))
        spans.sort(key=lambda s: (-s[0], s[1]))
        return [(did, span // 1000) for span, did in spans[:limit]]

    def explain(self, query_number: int, text: str) -> str | None:
        """The search profile of the query's (first) request: Lucene queries and collectors."""
        query = json.loads(text)
        body = copy.deepcopy(query["request"])
        body["profile"] = True
        answer = self.client.request("POST", self.search_path, body, what="profile")
        profile = answer.get("profile", {})
        shards = profile.get("shards", [])
        summary = []
        for shard in shards:
            for search in shard.get("searches", []):
                summary.append(
                    {
                        "query": [_profile_tree(q) for q in search.get("query", [])],
                        "collector": search.get("collector", [])[:1],
                    }
                )
            summary.append({"aggregations": [_profile_tree(a) for a in shard.get("aggregations", [])]})
        return json.dumps({"request": query["request"], "profile": summary}, indent=1)

    def engine_pids(self) -> list[int]:
        """The JVMs of every node docbench started here (or the one a local URL names)."""
        if not self.spec.get("local", True):
            return []
        found = []
        for pid in self.spec.get("server_pids") or [self.spec.get("server_pid")]:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes() if pid else b""
            except OSError:
                continue
            if b"java" in cmdline:
                found.append(int(pid))
        return found

    def cancel(self) -> None:
        self.cancelled = True
        self.client.abort()

    def close(self) -> None:
        self.client.close()


def _integer(value: Any) -> int:
    """A min/max of a long field comes as a double; time_us (< 2^53) is exact in it."""
    return int(round(float(value)))


def _time_unit_us(query: dict[str, Any]) -> int:
    """Microseconds per unit of the query's time_us field: 1, or 1000 where the field is a
    millisecond date (JSONBench's Filebeat documents, ``queries-jsonbench.json``)."""
    return int(query.get("time_unit_us", 1))


def _profile_tree(node: dict[str, Any]) -> dict[str, Any]:
    out = {
        "type": node.get("type"),
        "description": node.get("description"),
        "time_ms": round(int(node.get("time_in_nanos", 0)) / 1e6, 3),
    }
    children = [_profile_tree(c) for c in node.get("children", [])]
    if children:
        out["children"] = children
    return out
