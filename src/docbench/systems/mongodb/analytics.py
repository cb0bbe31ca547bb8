"""MongoDB in the analytics workload (JSONBench): one collection of the documents as they are,
a compound index on the five JSONBench paths, aggregation pipelines for Q1-Q5.

The server is the engine's (``engine.py``: a server the user brings, ``--mongodb-url``).
docbench uses its own database ``docbench`` there (one collection per variant) and touches
nothing else.

Everything MongoDB-specific that a contributor may want to change is a plain file next to this
module: ``collection.json`` (collection options per variant, the index) and
``queries/q1.json`` ... ``queries/q5.json`` (``{"columns": [...], "pipeline": [...]}``: the
pipeline as given to ``db.collection.aggregate()`` and the result fields, in the canonical column
order, that make a row).

The FerretDB system (``docbench/systems/ferretdb``) subclasses this adapter and runs the very
same pipelines on a managed FerretDB server.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QuerySession
from docbench.contracts.capabilities import BlueskyQueries, LiveIngest, NativeLoad, ReadBack
from docbench.contracts.common import StorageSize, Variant
from docbench.core.jsontypes import (
    JsonObject,
    JsonValue,
    as_array,
    as_int,
    as_object,
    as_str,
    optional_str,
)
from docbench.systems.mongodb.engine import DATABASE, MongoDBEngine
from docbench.systems.mongodb.loader import MongoDBLoader
from docbench.systems.mongodb.session import MongoDBSession

# The pipelines and collection settings, shared with the FerretDB system (a subclass).
FOLDER = Path(__file__).resolve().parent
INDEX_NAME = "docbench_paths"


# ----- docbench's collections -------------------------------------------------------------


def collection_spec(compressor: str | None) -> JsonObject:
    """collection.json with the compressor filled in."""
    text = (FOLDER / "collection.json").read_text()
    return as_object(json.loads(text.replace("{compressor}", str(compressor or ""))), "collection.json")


def create_collection(engine: MongoDBEngine, name: str, compressor: str | None) -> None:
    """Drop and create ``docbench.<name>``, with the WiredTiger block compressor if given."""
    db = engine.database()
    db.drop_collection(name)
    db.create_collection(
        name, **(as_object(collection_spec(compressor)["create"], "create") if compressor else {})
    )


def collection_stats(engine: MongoDBEngine, name: str) -> JsonObject:
    """``$collStats.storageStats`` of ``docbench.<name>``, else the ``collStats`` command."""
    db = engine.database()
    with contextlib.suppress(Exception):
        rows = list(db[name].aggregate([{"$collStats": {"storageStats": {}}}]))
        if rows and rows[0].get("storageStats"):
            return dict(rows[0]["storageStats"])
    return dict(db.command("collStats", name))


def collection_size(engine: MongoDBEngine, name: str, compressor: str | None) -> StorageSize:
    """Sizes of ``docbench.<name>`` by the server's statistics, with the engine's on-disk
    figure and detail."""
    stats = collection_stats(engine, name)
    db_stats: JsonObject = {}
    with contextlib.suppress(Exception):
        db_stats = dict(engine.database().command("dbStats"))
    data = _int(stats.get("storageSize"))
    index = _int(stats.get("totalIndexSize"))
    total = _int(stats.get("totalSize"))
    if total is None and data is not None:
        total = data + (index or 0)
    index_sizes: JsonObject = {
        k: _int(v) for k, v in as_object(stats.get("indexSizes") or {}, "indexSizes").items()
    }
    detail: JsonObject = {
        "collection": f"{DATABASE}.{name}",
        "documents": _int(stats.get("count")),
        "uncompressed_bytes": _int(stats.get("size")),
        "avg_document_bytes": _int(stats.get("avgObjSize")),
        "free_storage_bytes": _int(stats.get("freeStorageSize")),
        "index_sizes": index_sizes,
        "database": {
            k: _int(db_stats.get(k))
            for k in ("dataSize", "storageSize", "indexSize", "totalSize", "objects")
            if k in db_stats
        },
    }
    creation = as_str(as_object(stats.get("wiredTiger") or {}, "wiredTiger").get("creationString") or "")
    match = re.search(r"block_compressor=(\w*)", creation)
    if match:
        detail["block_compressor"] = match.group(1) or "none"
    elif compressor:
        detail["block_compressor_requested"] = compressor
    detail.update(engine.storage_detail())
    return StorageSize(total=total, data=data, index=index, on_disk=engine.on_disk(), detail=detail)


# ----- the adapter ------------------------------------------------------------------------

VARIANTS: list[Variant] = [
    Variant(
        "snappy",
        "WiredTiger collection, block compressor snappy (MongoDB's default)",
        role="default",
        settings={"compressor": "snappy"},
    ),
    Variant(
        "zstd", "WiredTiger collection, block compressor zstd", role="best", settings={"compressor": "zstd"}
    ),
]


class MongoDBAnalytics(AnalyticsAdapter, BlueskyQueries, LiveIngest, ReadBack, NativeLoad):
    engine: MongoDBEngine
    variants = VARIANTS
    # Live ingest: insertMany batches (the loader's), each acknowledged by the server.
    retains_structure = True
    engine_defaults: ClassVar[JsonObject] = {"compressor": "snappy"}
    representation = "BSON"
    # 20k documents (~10 MB) per insert_many: one or two wire messages, cheap to re-send
    # while a refused batch is bisected.
    load_batch_size = 20_000
    # Q4/Q5 use time_us as stored (an int64 of µs), Q3 only needs the hour: exact answers.
    time_precision_us = 1

    def __init__(self, engine: MongoDBEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.collection_name = f"bluesky_{variant.name}"
        self.compressor = optional_str(variant.settings.get("compressor"), "compressor")

    def collection(self):
        """This variant's collection on the engine's shared client."""
        return self.engine.database()[self.collection_name]

    # ----- loading -----------------------------------------------------------------------
    def create(self) -> None:
        create_collection(self.engine, self.collection_name, self.compressor)

    def loader(self) -> Loader:
        return MongoDBLoader(self.engine.uri(), self.collection_name)

    def finish_load(self) -> None:
        """The compound index on the five paths, built once after the load."""
        index = as_object(collection_spec(self.compressor)["index"], "index")
        name = as_str(index["name"], "index name")
        keys = [_index_key(key) for key in as_array(index["keys"], "index keys")]
        self.finish_step(f"createIndex {name}", lambda: self.collection().create_index(keys, name=name))

    def native_load(self, files: list[Path]) -> None:
        """What a person writes by hand: read the lines, json-parse, ``insert_many`` in chunks
        (orjson for parsing, as docbench's loader; no checks, no clean-up)."""
        import orjson

        from docbench.dataset.reader import iter_lines

        collection = self.collection()
        chunk: list[JsonObject] = []
        for path in files:
            for line in iter_lines(path):
                if not line.strip():
                    continue
                chunk.append(orjson.loads(line))
                if len(chunk) >= self.load_batch_size:
                    collection.insert_many(chunk, ordered=False)
                    chunk = []
        if chunk:
            collection.insert_many(chunk, ordered=False)

    def count(self) -> int:
        return int(self.collection().count_documents({}))

    def read_back(self) -> list[str]:
        """The stored BSON documents as MongoDB Extended JSON (relaxed: plain numbers where
        JSON has them), without the _id the server added."""
        import sys

        from bson import json_util

        options = json_util.RELAXED_JSON_OPTIONS
        # json_util converts recursively: a document the server holds at its nesting limit
        # needs more of Python's stack than its default limit allows.
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20_000))
        try:
            documents = self.collection().find({}, {"_id": 0})
            return [json_util.dumps(doc, json_options=options) for doc in documents]
        finally:
            sys.setrecursionlimit(limit)

    def storage(self) -> StorageSize:
        return collection_size(self.engine, self.collection_name, self.compressor)

    # ----- queries -----------------------------------------------------------------------
    def queries(self) -> list[str]:
        texts = []
        for number in range(1, 6):
            query = json.loads((FOLDER / "queries" / f"q{number}.json").read_text())
            texts.append(json.dumps(query, separators=(",", ":")))
        return texts

    def session_spec(self) -> JsonObject:
        return {
            "uri": self.engine.uri(),
            "database": DATABASE,
            "collection": self.collection_name,
            "index": INDEX_NAME,
            "pids": list(self.engine.query_pids()),
        }

    @classmethod
    def open_session(cls, spec: JsonObject) -> QuerySession:
        return MongoDBSession(spec)

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """Q2-Q5 filter on a prefix of the index and need only indexed paths: the plan should be
        a covered scan of our index (IXSCAN, no FETCH, no COLLSCAN). Q1 reads every document,
        so a collection scan is what it should do."""
        if query_number == 1:
            return None
        if not plan:
            return f"Q{query_number}: no plan to check"
        try:
            stages = list(_plan_stages(json.loads(plan)))
        except (ValueError, TypeError):
            return f"Q{query_number}: the plan is not explain JSON"
        names = {stage for stage, _ in stages}
        ours = any(stage == "IXSCAN" and index == INDEX_NAME for stage, index in stages)
        if not ours:
            return (
                f"Q{query_number}: the plan does not scan the index {INDEX_NAME} "
                f"(stages: {', '.join(sorted(names)) or 'none'})"
            )
        if "FETCH" in names or "COLLSCAN" in names:
            return f"Q{query_number}: the index scan is not covered (stages: {', '.join(sorted(names))})"
        return None


def _int(value: object) -> int | None:
    """A figure of the server's statistics as an int; None when absent or not a number."""
    if not isinstance(value, int | float | str):
        return None  # None, or a value int() refuses (a document, an array, Decimal128)
    try:
        return int(value)
    except ValueError:
        return None


def _index_key(key: JsonValue) -> tuple[str, int]:
    """``["path", 1]`` of collection.json as pymongo's (path, direction)."""
    path, direction = as_array(key, "index key")
    return as_str(path, "index path"), as_int(direction, "index direction")


def _plan_stages(plan: JsonValue) -> Iterator[tuple[str, JsonValue]]:
    """(stage, indexName) of every plan stage of an explain document, classic or SBE, whatever
    it is nested in ($cursor, queryPlanner, winningPlan, queryPlan, inputStage(s), shards)."""
    if isinstance(plan, list):
        for item in plan:
            yield from _plan_stages(item)
    elif isinstance(plan, dict):
        stage = plan.get("stage")
        if isinstance(stage, str):
            yield stage, plan.get("indexName")
        for key, value in plan.items():
            if key in {"rejectedPlans", "slotBasedPlan", "command"}:
                continue
            if isinstance(value, dict | list):
                yield from _plan_stages(value)


ADAPTER = MongoDBAnalytics

__all__ = ["ADAPTER", "VARIANTS", "MongoDBAnalytics", "MongoDBLoader", "MongoDBSession"]
