"""Elasticsearch and OpenSearch in the analytics workload: one index
``docbench_bluesky_<variant>`` with the run's shards and replicas (one shard by default),
created from the distribution folder's ``index.json``, loaded through ``_bulk`` (all or nothing
per batch, :class:`~docbench.systems.searchengine.loader.BulkLoader`), force-merged to one
segment; the folder's ``queries.json`` aggregation requests run in a
:class:`~docbench.systems.searchengine.session.SearchSession`.

Each distribution's ``analytics.py`` only names its variants (:func:`variants`) and subclasses
:class:`SearchAnalyticsBase`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QuerySession
from docbench.contracts.capabilities import BlueskyQueries, LiveIngest, NativeLoad, ReadBack
from docbench.contracts.common import NotSupported, StorageSize, Variant
from docbench.contracts.engine import system_file
from docbench.core.jsontypes import JsonMapping, JsonObject, JsonValue, as_int, as_object
from docbench.core.rawjson import raw_values_of
from docbench.systems.searchengine import index as search_index
from docbench.systems.searchengine.engine import SearchEngineBase
from docbench.systems.searchengine.filebeat import FilebeatEvents
from docbench.systems.searchengine.http import BULK_TIMEOUT, NDJSON
from docbench.systems.searchengine.loader import BulkLoader
from docbench.systems.searchengine.session import SearchSession
from docbench.systems.searchengine.sizes import index_storage

# Without _source only the indexed terms and doc values remain: the document cannot be read back.
NO_SOURCE_SETTINGS: JsonObject = {
    "retains_structure": False,
    "representation": "indexed fields and doc values only (no _source)",
}


def variants() -> list[Variant]:
    """Codec default / best_compression, with and without ``_source``."""
    return [
        Variant(
            "default",
            "_source kept, codec default (LZ4)",
            role="default",
            settings={"source": True, "codec": "default"},
        ),
        Variant(
            "best_compression",
            "_source kept, codec best_compression",
            role="best",
            settings={"source": True, "codec": "best_compression"},
        ),
        Variant(
            "no_source",
            "_source disabled (the document is not kept as such: only its "
            "indexed fields and doc values), codec default",
            role="alt",
            settings={"source": False, "codec": "default", **NO_SOURCE_SETTINGS},
        ),
        Variant(
            "no_source_best_compression",
            "_source disabled, codec best_compression",
            role="alt",
            settings={"source": False, "codec": "best_compression", **NO_SOURCE_SETTINGS},
        ),
        Variant(
            "paths",
            "_source kept, only the five JSONBench paths mapped and indexed (dynamic: false, "
            "index-paths.json), codec default",
            role="representation",
            settings={
                "source": True,
                "codec": "default",
                "index": "index-paths.json",
                "representation": "_source, only the five paths mapped (dynamic: false)",
                "schema_by_hand": True,
            },
        ),
    ]


def jsonbench_variants() -> list[Variant]:
    """JSONBench's own configuration (Elasticsearch 8.17 fed by Filebeat), with and without
    ``_source``: its index template (``index-jsonbench.json``), the documents as its Filebeat
    sent them (``filebeat.py``: time_us a millisecond date, @timestamp, subject renamed, Go's
    key order), ``queries-jsonbench.json`` (time_us in milliseconds)."""
    jsonbench: JsonObject = {
        "codec": "best_compression",
        "index": "index-jsonbench.json",
        "queries": "queries-jsonbench.json",
        "documents": "filebeat",
        "time_precision_us": 1000,
    }
    return [
        Variant(
            "jsonbench",
            "JSONBench's index template and Filebeat documents, _source kept, codec best_compression",
            role="alt",
            settings={"source": True, **jsonbench},
        ),
        Variant(
            "jsonbench_no_source",
            "JSONBench's index template and Filebeat documents, _source disabled, codec best_compression",
            role="alt",
            settings={"source": False, **jsonbench, **NO_SOURCE_SETTINGS},
        ),
    ]


def substitute(value: JsonValue, settings: JsonMapping) -> JsonValue:
    """Replace strings "{name}" in a JSON template by the variant's (typed) setting."""
    if isinstance(value, dict):
        return {k: substitute(v, settings) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, settings) for v in value]
    if isinstance(value, str) and value.startswith("{") and value.endswith("}") and value[1:-1] in settings:
        return settings[value[1:-1]]
    return value


class SearchAnalyticsBase(AnalyticsAdapter, BlueskyQueries, LiveIngest, ReadBack, NativeLoad):
    """One index (the run's shards and replicas), the distribution folder's mapping and
    queries."""

    engine: SearchEngineBase
    retains_structure = True
    representation = "_source with dynamic mapping"
    engine_defaults: ClassVar[JsonObject] = {"source": True, "codec": "default"}
    # ~5 MB bulk requests (480 B per document): the engines' recommended bulk size.
    load_batch_size = 10_000
    # time_us is mapped as a long: exact microseconds (min/max come back as exact doubles).
    time_precision_us = 1
    approximate_queries: ClassVar[frozenset[int]] = frozenset()
    # The mapping's depth limit (20); each refusal is named in the bulk answer.
    refused_hard_kinds = frozenset({"deep_nesting"})

    def __init__(self, engine: SearchEngineBase, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.index = f"docbench_bluesky_{variant.name}"
        settings = variant.settings
        # A variant's own index definition and queries (JSONBench's), else the folder's.
        self.index_file = str(settings.get("index", "index.json"))
        self.queries_file = str(settings.get("queries", "queries.json"))
        self.filebeat = settings.get("documents") == "filebeat"
        # JSONBench's Filebeat makes time_us a millisecond date.
        self.time_precision_us = as_int(settings.get("time_precision_us", type(self).time_precision_us))

    # ----- loading -----------------------------------------------------------------------
    def index_definition(self) -> JsonObject:
        template = as_object(
            json.loads(system_file(self.engine, self.index_file).read_text()), self.index_file
        )
        template.pop("_comment", None)
        return as_object(substitute(template, dict(self.variant.settings)), self.index_file)

    def create(self) -> None:
        """Drop and create docbench's own index (and nothing else)."""
        self.engine.create_index(self.index, self.index_definition())

    def loader(self) -> Loader:
        # On a cluster a request may be resent to another node: explicit ids make that safe.
        return BulkLoader(
            self.engine.connect(BULK_TIMEOUT),
            self.index,
            explicit_ids=self.engine.shape.distributed or self.engine.several_urls,
            events=FilebeatEvents().events if self.filebeat else None,
        )

    def finish_load(self) -> None:
        """Refresh on again, then merge into one segment (like JSONBench) and refresh."""
        # Refresh back on: the definition's own interval (JSONBench's template: 30 s), or the
        # server's default where the definition turned it off for the load (docbench's: -1).
        settings = as_object(self.index_definition().get("settings", {}), "settings")
        defined = as_object(settings.get("index", {}), "settings.index").get("refresh_interval")
        interval = None if defined in (None, "-1", -1) else str(defined)
        self.finish_step(
            "refresh and force-merge to one segment",
            lambda: search_index.merge_to_one_segment(self.engine, self.index, interval),
        )

    def native_load(self, files: list[Path]) -> None:
        """What one writes by hand: read the file, POST bodies of N documents to _bulk, no
        checks beyond the HTTP status (refused documents are silently lost)."""
        from docbench.dataset.reader import iter_lines

        client = self.engine.connect(BULK_TIMEOUT)
        path = f"{search_index.index_path(self.index)}/_bulk?filter_path=errors"
        events = FilebeatEvents() if self.filebeat else None  # (Filebeat's part, by hand)
        try:
            for file in files:
                chunk: list[bytes] = []
                for line in iter_lines(file):
                    if not line.strip():
                        continue
                    document = events.event(line) if events is not None else line
                    chunk.append(b'{"index":{}}\n' + document + b"\n")
                    if len(chunk) >= self.load_batch_size:
                        client.request("POST", path, b"".join(chunk), content_type=NDJSON)
                        chunk = []
                if chunk:
                    client.request("POST", path, b"".join(chunk), content_type=NDJSON)
        finally:
            client.close()

    def count(self) -> int:
        return search_index.count(self.engine.client(), self.index)

    # Live ingest: _bulk as in the load; documents become visible at each refresh.
    # The refresh interval while documents arrive (the load runs without refreshes).
    LIVE_REFRESH_INTERVAL = "1s"

    def begin_live_ingest(self) -> JsonObject:
        self.engine.client().request(
            "PUT",
            f"{search_index.index_path(self.index)}/_settings",
            {"index": {"refresh_interval": self.LIVE_REFRESH_INTERVAL}},
        )
        return {"refresh_interval": self.LIVE_REFRESH_INTERVAL}

    def visible_count(self) -> int:
        """What a search counts now: no refresh forced. On a connection of its own: the
        probe runs beside the loader's thread."""
        client = self.engine.connect()
        try:
            return search_index.count(client, self.index, refreshed=False)
        finally:
            client.close()

    def read_back(self) -> list[str]:
        """Each hit's _source, the bytes the engine stored and copies into its answer."""
        if not self.variant.settings.get("source", True):
            raise NotSupported("_source is disabled: the documents cannot be read back")
        search_index.refresh(self.engine.client(), self.index)
        answer = self.engine.client().request_raw(
            "GET", f"{search_index.index_path(self.index)}/_search?size=10000&sort=_doc"
        )
        return [raw.decode("utf-8", "surrogatepass") for raw in raw_values_of(answer, b"_source")]

    def storage(self) -> StorageSize:
        return index_storage(
            self.engine,
            self.index,
            {"codec": self.variant.settings.get("codec"), "source": self.variant.settings.get("source")},
        )

    # ----- queries -----------------------------------------------------------------------
    def queries(self) -> list[str]:
        document = json.loads(system_file(self.engine, self.queries_file).read_text())
        return [json.dumps(document[f"q{n}"]) for n in range(1, 6)]

    def session_spec(self) -> JsonObject:
        return {
            "url": self.engine.base_url,
            "index": self.index,
            "server_pid": self.engine.node_pid(),
            "server_pids": [*self.engine.serving_pids()],
            "local": self.engine.is_local,
        }

    @classmethod
    def open_session(cls, spec: JsonMapping) -> QuerySession:
        return SearchSession(spec)

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """Q2-Q5 filter on the indexed keyword paths: the Lucene query must not be match-all."""
        if query_number == 1:
            return None
        if not plan:
            return f"Q{query_number}: no plan to check"
        try:
            profile = json.loads(plan)["profile"]
        except (ValueError, KeyError, TypeError):
            return f"Q{query_number}: the plan is not a search profile"
        types = [q.get("type") for part in profile for q in part.get("query", [])]
        if not types:
            return f"Q{query_number}: the profile shows no query"
        if (
            all(t in {"MatchAllDocsQuery", "ConstantScoreQuery"} for t in types)
            and "TermQuery" not in plan
            and "TermInSetQuery" not in plan
        ):
            return f"Q{query_number}: the search reads every document (query types {types})"
        return None
