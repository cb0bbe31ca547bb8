"""What Elasticsearch and OpenSearch share in the updates workload (their ``updates.py`` only
name the variants and subclass :class:`SearchUpdatesBase`).

The index ``docbench_ycsb``: one shard, no replica; each document's ``_id`` is its
``ycsb_key``, and ``ycsb_key`` is also a ``keyword`` field (indexed, doc values). Point
operations go by ``_id``: a realtime ``GET /_doc/<key>`` (it sees the last write without a
refresh) and ``POST /_update/<key>`` with a partial ``doc``; the keyword field is there for
searches by key. ``field1``..``field10`` are payload, as in the other systems (which index
only the key): kept in ``_source``, neither indexed nor doc values. A string field that
appears later (``field11``) is mapped by a dynamic template as an indexed ``keyword``, so the
correctness check can count it with a ``term`` query.

Load: ``_bulk`` ``index`` actions with the key as ``_id``, refresh off; ``create_key_index``
turns refresh back on, refreshes and force-merges to one segment (the clean state the sizes
"before" measure, as the analytics load ends).

Bulk styles (each on a freshly created and loaded index):

* ``update_by_query`` -- ``_update_by_query`` with the painless script
  ``ctx._source[params.field] = params.value``, ``wait_for_completion=true`` and
  ``refresh=true``, ``conflicts`` left at ``abort``: nothing else writes the index during the
  update, so a version conflict would be a fault to report, not one to skip silently
  (``conflicts=proceed`` would leave documents without field11). Offered only when the node
  has the ``lang-painless`` and ``reindex`` modules (``_nodes/_local/plugins``): OpenSearch
  after ``docbench setup opensearch`` (its setup.sh adds both), never the Elasticsearch
  integ-test-zip (see ``elasticsearch/updates.py``).
* ``bulk_partial`` -- a scroll over the ids (``_source: false``, sorted by ``_doc``, pages of
  5,000), each page sent as one ``_bulk`` of ``update`` actions with the partial document
  ``{"field11": ...}``; one refresh at the end. No scripting needed.

Rows changed = the engine's ``updated`` count (not its noops).

Maintenance: ``_forcemerge?only_expunge_deletes=true``, Lucene's way of reclaiming deleted
documents: an update writes a new copy of the document and only marks the old one deleted,
which stays in its segment until that segment is merged; only the segments whose deleted share
exceeds the merge policy's ``expunge_deletes_allowed`` (10 %) are rewritten (not a merge of
everything into one segment, the VACUUM FULL of this world). Deletes are *soft* deletes, and a
merge keeps every one the shard's retention leases still retain (for replica recovery); the
primary's own lease moves past the update only at the next background lease sync (every 30 s)
after a commit. So the maintenance is ``_flush``, then a wait (polling ``_stats?level=shards``)
until the leases retain nothing of the update, then the force-merge: run at once after the
update, the force-merge would reclaim nothing. The maintenance time includes that wait (the
``maintenance`` text of the result says how long it was).

Sizes: :func:`~docbench.systems.searchengine.sizes.index_storage` on this index, as the
analytics adapter's ``storage()`` (store size, stored fields vs the rest; docs, deleted docs
and segments in ``detail``), with the store statistics uncached.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Iterator
from urllib.parse import quote

import orjson

from docbench.contracts.common import StorageSize, Variant
from docbench.contracts.updates import KeyValueSession, NonBlockingSession, UpdatesTarget
from docbench.contracts.ycsb import FIELDS
from docbench.core.jsontypes import JsonMapping, JsonObject, JsonValue, as_array, as_object, as_str
from docbench.systems.searchengine import index as search_index
from docbench.systems.searchengine.engine import SearchEngineBase
from docbench.systems.searchengine.http import (
    BULK_TIMEOUT,
    MERGE_TIMEOUT,
    NDJSON,
    HttpClient,
    NonBlockingHttp,
    SearchEngineError,
    first_value,
    member,
    member_object,
    objects,
    server_version,
    to_int,
)
from docbench.systems.searchengine.leases import LEASE_TIMEOUT, wait_for_retention_leases
from docbench.systems.searchengine.sizes import index_storage

INDEX = "docbench_ycsb"
UPDATE_BY_QUERY = "update_by_query"
BULK_PARTIAL = "bulk_partial"
# What _update_by_query needs on the node: the REST action (reindex) and the script (painless).
UPDATE_BY_QUERY_MODULES = frozenset({"lang-painless", "reindex"})
SCRIPT = "ctx._source[params.field] = params.value"
LOAD_CHUNK = 5_000
SCROLL_PAGE = 5_000
SCROLL_KEEP_ALIVE = "5m"
# Point updates of the same key from several client processes (throughput workload) race on
# the document's version; the update API re-reads and retries instead of answering 409.
RETRY_ON_CONFLICT = 3


def variants() -> list[Variant]:
    return [
        Variant(
            "default",
            "index docbench_ycsb, _id = ycsb_key (point operations), ycsb_key "
            "keyword; field1-10 in _source only",
            settings={"type": "_source", "index": "_id + keyword"},
        )
    ]


def index_definition() -> JsonObject:
    payload: JsonObject = {"type": "keyword", "index": False, "doc_values": False}
    return {
        "settings": {
            "index": {
                "number_of_shards": 1,
                "number_of_replicas": 0,
                "refresh_interval": "-1",
                # The store size in _stats is otherwise cached for 10 s: the
                # size right after the update would be the one before it.
                "store": {"stats_refresh_interval": "0s"},
            }
        },
        "mappings": {
            "dynamic_templates": [
                {
                    "new_strings_as_keyword": {
                        "match_mapping_type": "string",
                        "mapping": {"type": "keyword", "ignore_above": 256},
                    }
                }
            ],
            "properties": {"ycsb_key": {"type": "keyword"}, **{f: payload for f in FIELDS}},
        },
    }


def _not_found(error: SearchEngineError) -> bool:
    """A 404 about the document, not about the index (a missing index is a fault)."""
    detail = error.body.get("error") if isinstance(error.body, dict) else None
    kind = detail.get("type") if isinstance(detail, dict) else None
    return error.status == 404 and kind != "index_not_found_exception"


class SearchKeyValueSession(KeyValueSession):
    """Point operations by ``_id`` over one keep-alive connection."""

    def __init__(self, spec: JsonMapping) -> None:
        self.client = HttpClient(as_str(spec["url"], "url"))
        self.prefix = f"/{quote(as_str(spec['index'], 'index'))}"

    def read(self, key: str) -> JsonObject | None:
        answer = self.client.request(
            "GET", f"{self.prefix}/_doc/{quote(key, safe='')}?filter_path=found,_source,error", ok=(200, 404)
        )
        if isinstance(answer, dict) and answer.get("found"):
            return as_object(answer["_source"], "_source")
        if isinstance(answer, dict) and "error" in answer:
            raise SearchEngineError(404, answer, f"GET {key}")
        return None

    def update_field(self, key: str, field: str, value: str) -> int:
        """1 when the document exists, whether the engine answers ``updated`` or ``noop``
        (detect_noop: the value was already there), as PostgreSQL's rowcount and MongoDB's
        matched_count count a matched row; 0 when there is no such document."""
        path = (
            f"{self.prefix}/_update/{quote(key, safe='')}"
            f"?retry_on_conflict={RETRY_ON_CONFLICT}&filter_path=result,error.type"
        )
        try:
            answer = self.client.request_object("POST", path, {"doc": {field: value}})
        except SearchEngineError as error:
            if _not_found(error):
                return 0
            raise
        return 1 if answer.get("result") in ("updated", "noop") else 0

    def insert(self, doc: JsonMapping) -> None:
        # _create: a second document with the same key is refused, like a unique index.
        key = as_str(doc["ycsb_key"], "ycsb_key")
        self.client.request(
            "PUT", f"{self.prefix}/_create/{quote(key, safe='')}?filter_path=result", dict(doc)
        )

    def close(self) -> None:
        self.client.close()


# Which node of a cluster the next non-blocking session connects to (they spread).
_SPREAD = itertools.count()


class NonBlockingSearchSession(SearchKeyValueSession, NonBlockingSession):
    """The same requests on a second, non-blocking connection of its own (the throughput
    driver's multiplexed loop; plain http only, https nodes get the blocking session)."""

    def __init__(self, spec: JsonMapping) -> None:
        super().__init__(spec)
        self.url = as_str(spec["url"], "url")
        self._http: NonBlockingHttp | None = None
        self.index_path = self.prefix.encode()
        self.kind = ""
        self.key = ""

    @property
    def http(self) -> NonBlockingHttp:
        """Its connection, opened when the driver first asks (the updates workload never does)."""
        if self._http is None:
            self._http = NonBlockingHttp(self.url, node=next(_SPREAD))
        return self._http

    def fileno(self) -> int:
        return self.http.fileno()

    def broken(self) -> bool:
        return self._http is not None and self._http.closed

    def send_read(self, key: str) -> None:
        self.kind, self.key = "read", key
        self.http.send(
            b"GET",
            self.index_path + b"/_doc/" + quote(key, safe="").encode() + b"?filter_path=found,_source,error",
        )

    def send_update(self, key: str, field: str, value: str) -> None:
        self.kind, self.key = "update", key
        self.http.send(
            b"POST",
            self.index_path
            + b"/_update/"
            + quote(key, safe="").encode()
            + f"?retry_on_conflict={RETRY_ON_CONFLICT}&filter_path=result,error.type".encode(),
            orjson.dumps({"doc": {field: value}}),
        )

    def send_insert(self, doc: JsonMapping) -> None:
        self.kind, self.key = "insert", as_str(doc["ycsb_key"], "ycsb_key")
        self.http.send(
            b"PUT",
            self.index_path + b"/_create/" + quote(self.key, safe="").encode() + b"?filter_path=result",
            orjson.dumps(doc),
        )

    def receive(self) -> int | None:
        answer = self.http.receive()
        if answer is None:
            return None
        status, body = answer
        decoded: JsonValue = orjson.loads(body) if body else {}
        error = SearchEngineError(status, decoded, f"{self.kind} {self.key}")
        if self.kind == "read":
            if status in (200, 404) and isinstance(decoded, dict) and "error" not in decoded:
                return 1 if decoded.get("found") else 0
        elif self.kind == "update":
            if status == 200:
                return 1 if as_object(decoded, "update answer").get("result") in ("updated", "noop") else 0
            if _not_found(error):
                return 0
        elif status in (200, 201):
            return 1
        raise error

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
        super().close()


def _bulk_errors(answer: JsonObject) -> str | None:
    if not answer.get("errors"):
        return None
    for item in as_array(answer.get("items", []), "items"):
        result = first_value(item, "bulk item")
        if "error" in result:
            return f"HTTP {result.get('status')}: {result['error']}"
    return "errors"


class SearchUpdatesBase(UpdatesTarget):
    """The updates target on the engine's node (managed, or the user's by URL)."""

    engine: SearchEngineBase
    client_loops = ("multiplexed", "threads")

    def __init__(self, engine: SearchEngineBase, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.prefix = f"/{quote(INDEX)}"
        self._last_bulk: JsonObject = {}

    def client(self) -> HttpClient:
        return self.engine.client()

    def engine_info(self) -> JsonObject:
        modules = self.engine.modules()
        missing = sorted(UPDATE_BY_QUERY_MODULES - modules)
        return {
            "version": server_version(self.client())[1],
            "modules": [*sorted(modules)],
            UPDATE_BY_QUERY: "available"
            if not missing
            else f"not measured: the node lacks the module(s) {', '.join(missing)}",
        }

    # loading ----------------------------------------------------------------------------
    def create(self) -> None:
        self.engine.create_index(INDEX, index_definition())
        self._last_bulk = {}

    def load(self, docs: list[bytes]) -> None:
        for start in range(0, len(docs), LOAD_CHUNK):
            body = b"".join(
                b'{"index":{"_id":' + orjson.dumps(orjson.loads(line)["ycsb_key"]) + b"}}\n" + line + b"\n"
                for line in docs[start : start + LOAD_CHUNK]
            )
            self._bulk(body)

    def _bulk(self, body: bytes) -> JsonObject:
        answer = as_object(
            self.engine.long_request(
                "POST",
                f"{self.prefix}/_bulk?refresh=false"
                "&filter_path=errors,items.*.result,items.*.status,items.*.error",
                body,
                timeout=BULK_TIMEOUT,
                content_type=NDJSON,
                what="_bulk",
            ),
            "_bulk answer",
        )
        error = _bulk_errors(answer)
        if error:
            raise RuntimeError(f"_bulk into {INDEX}: {error}")
        return answer

    def create_key_index(self) -> None:
        """The key is indexed while loading (mapping); what remains is to make the index
        searchable with the default refresh interval and merge it to one segment."""
        search_index.merge_to_one_segment(self.engine, INDEX)

    def count(self) -> int:
        return search_index.count(self.client(), INDEX)

    def count_field(self, field: str, value: str) -> int:
        client = self.client()
        search_index.refresh(client, INDEX)
        answer = client.request_object("POST", f"{self.prefix}/_count", {"query": {"term": {field: value}}})
        return to_int(answer["count"])

    # the bulk update --------------------------------------------------------------------
    def bulk_update_styles(self) -> list[str]:
        if self.engine.modules() >= UPDATE_BY_QUERY_MODULES:
            return [UPDATE_BY_QUERY, BULK_PARTIAL]
        return [BULK_PARTIAL]

    def bulk_add_field(self, style: str, field: str, value: str) -> int:
        if style == UPDATE_BY_QUERY:
            return self._update_by_query(field, value)
        if style == BULK_PARTIAL:
            return self._bulk_partial(field, value)
        raise ValueError(f"unknown style {style!r}")

    def _update_by_query(self, field: str, value: str) -> int:
        script: JsonObject = {
            "lang": "painless",
            "source": SCRIPT,
            "params": {"field": field, "value": value},
        }
        answer = as_object(
            self.engine.long_request(
                "POST",
                f"{self.prefix}/_update_by_query?wait_for_completion=true&refresh=true&conflicts=abort",
                {"script": script},
                timeout=MERGE_TIMEOUT,
                what="_update_by_query",
            ),
            "_update_by_query answer",
        )
        if answer.get("failures") or answer.get("timed_out"):
            raise RuntimeError(f"_update_by_query failed: {str(answer.get('failures'))[:500]}")
        self._last_bulk = {
            key: answer.get(key)
            for key in ("took", "total", "updated", "noops", "version_conflicts", "batches")
        }
        return to_int(answer["updated"])

    def _scroll_ids(self) -> Iterator[list[str]]:
        """Every document's _id, a page at a time, from one scroll (a point-in-time view:
        the updates made meanwhile do not move documents between pages)."""
        client = self.client()
        answer = client.request_object(
            "POST",
            f"{self.prefix}/_search?scroll={SCROLL_KEEP_ALIVE}&filter_path=_scroll_id,hits.hits._id",
            {"size": SCROLL_PAGE, "sort": ["_doc"], "_source": False},
        )
        scroll_id = answer["_scroll_id"]
        try:
            while hits := as_object(answer.get("hits") or {}, "hits").get("hits"):
                yield [as_str(hit["_id"], "_id") for hit in objects(hits, "hits")]
                answer = client.request_object(
                    "POST",
                    "/_search/scroll?filter_path=_scroll_id,hits.hits._id",
                    {"scroll": SCROLL_KEEP_ALIVE, "scroll_id": scroll_id},
                )
                scroll_id = answer.get("_scroll_id", scroll_id)
        finally:
            with contextlib.suppress(Exception):
                client.request("DELETE", "/_search/scroll", {"scroll_id": scroll_id}, ok=(200, 404))

    def _bulk_partial(self, field: str, value: str) -> int:
        partial = b'{"doc":' + orjson.dumps({field: value}) + b"}\n"
        updated = noops = pages = 0
        for ids in self._scroll_ids():
            body = b"".join(b'{"update":{"_id":' + orjson.dumps(i) + b"}}\n" + partial for i in ids)
            answer = self._bulk(body)
            results = [
                first_value(item, "bulk item").get("result") for item in as_array(answer["items"], "items")
            ]
            updated += results.count("updated")
            noops += results.count("noop")
            pages += 1
        search_index.refresh(self.client(), INDEX)
        self._last_bulk = {
            "updated": updated,
            "noops": noops,
            "bulk_requests": pages,
            "page_size": SCROLL_PAGE,
        }
        return updated

    def maintain(self) -> str:
        """Flush, wait until the shard's retention leases have passed the update, then merge
        away the deleted copies (see the module docstring for why the wait)."""
        client = self.client()
        client.request("POST", f"{self.prefix}/_flush")
        waited = self._wait_for_retention_leases()
        started = time.perf_counter()
        self.engine.long_request(
            "POST",
            f"{self.prefix}/_forcemerge?only_expunge_deletes=true",
            timeout=MERGE_TIMEOUT,
            what="force merge (expunge deletes)",
        )
        search_index.refresh(client, INDEX)
        return (
            f"_flush, {waited} for the soft-deletes retention lease to pass the update, "
            f"_forcemerge?only_expunge_deletes=true ({time.perf_counter() - started:.2f} s)"
        )

    def _wait_for_retention_leases(self) -> str:
        waited = wait_for_retention_leases(self.client(), INDEX, LEASE_TIMEOUT)
        if waited is None:
            return f"gave up after {LEASE_TIMEOUT:.0f} s waiting"
        return f"{waited:.1f} s waiting"

    # figures ----------------------------------------------------------------------------
    def sizes(self) -> StorageSize:
        # The detail names the codec and _source as the analytics default variant's does.
        return index_storage(self.engine, INDEX, {"codec": "default", "source": True})

    def extra_stats(self) -> JsonObject:
        answer = self.client().request("GET", f"{self.prefix}/_stats/docs,segments,indexing,merge,refresh")
        primaries = member_object(answer, "indices", INDEX, "primaries")
        stats: JsonObject = {
            "docs": member(primaries, "docs", "count"),
            "deleted_docs": member(primaries, "docs", "deleted"),
            "segments": member(primaries, "segments", "count"),
            "index_total": member(primaries, "indexing", "index_total"),
            "noop_update_total": member_object(primaries, "indexing").get("noop_update_total"),
            "merges": member(primaries, "merges", "total"),
            "merged_bytes": member(primaries, "merges", "total_size_in_bytes"),
            "refreshes": member(primaries, "refresh", "total"),
        }
        if self._last_bulk:
            stats["bulk"] = dict(self._last_bulk)
        return stats

    # point operations -------------------------------------------------------------------
    def session_spec(self) -> JsonObject:
        return {"url": self.engine.base_url, "index": INDEX}

    @classmethod
    def open_session(cls, spec: JsonMapping) -> SearchKeyValueSession:
        if as_str(spec["url"], "url").startswith("https://"):
            return SearchKeyValueSession(spec)
        return NonBlockingSearchSession(spec)
