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
import secrets
import threading
from pathlib import Path
from typing import Any

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QueryOutcome, QuerySession
from docbench.contracts.common import BatchRejected, StorageSize, Variant
from docbench.systems.mongodb.engine import (
    DATABASE,
    MongoDBEngine,
    mongo_client,
)

# The pipelines and collection settings, shared with the FerretDB system (a subclass).
FOLDER = Path(__file__).resolve().parent
INDEX_NAME = "docbench_paths"

# Server error codes that mean "this content cannot be stored" when a whole insert command fails
# (per-document refusals come as BulkWriteError writeErrors, which are always content errors):
# BadValue, Overflow, InvalidBSON, DollarPrefixedFieldName, EmptyFieldName, DottedFieldName,
# BSONObjectTooLarge, InvalidLength, TypeMismatch, FailedToParse.
CONTENT_ERROR_CODES = frozenset({2, 9, 14, 15, 16, 22, 52, 56, 57, 10334, 17280})

# A run of 19+ digits may be an integer literal beyond int64: orjson silently turns integers
# beyond 64 bits into floats, so lines with such runs are checked again exactly (rare: Bluesky
# ids are base32 and time_us has 16 digits). Found by mapping digits to '0' and the rest to ' '
# (newlines kept) and searching 19 '0's: ~15x faster than a regular expression.
_DIGIT_MAP = bytes(0x30 if 0x30 <= i <= 0x39 else (0x0A if i == 0x0A else 0x20)
                   for i in range(256))
_DIGIT_RUN = b"0" * 19
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def _checked_int(text: str) -> int:
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"integer {text[:30]} is beyond BSON's 64-bit integers")
    return value


def _check_big_ints(line: bytes) -> None:
    """Refuse a line whose integer literals do not fit BSON's int64 (orjson would make them
    floats); called only for lines with long digit runs."""
    try:
        json.loads(line, parse_int=_checked_int)
    except ValueError as error:
        raise BatchRejected(str(error)) from error
    except RecursionError as error:
        raise BatchRejected("document too deeply nested") from error


def _long_digit_lines(joined: bytes) -> set[int]:
    """Indexes of the newline-separated lines of `joined` with a run of 19 or more digits."""
    mapped = joined.translate(_DIGIT_MAP)
    lines: set[int] = set()
    line_index, offset = 0, 0
    position = mapped.find(_DIGIT_RUN)
    while position >= 0:
        line_index += mapped.count(b"\n", offset, position)
        offset = position
        lines.add(line_index)
        position = mapped.find(_DIGIT_RUN, position + len(_DIGIT_RUN))
    return lines


def short_message(message: str, limit: int = 300) -> str:
    """Server messages may quote the whole document: keep the start."""
    message = " ".join(message.split())
    return message if len(message) <= limit else message[:limit] + "..."


def _bson_refusal(error: BaseException, index: int | None) -> str:
    where = f" (batch line {index + 1})" if index is not None else ""
    if isinstance(error, RecursionError):
        return f"too deeply nested for BSON{where}"
    return f"cannot be BSON{where}: {short_message(str(error))}"


def _field(doc: dict[str, Any], path: str) -> Any:
    value: Any = doc
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _plain(value: Any) -> Any:
    """BSON values the checker and the result files understand (Int64 is an int already)."""
    from bson.decimal128 import Decimal128

    if isinstance(value, Decimal128):
        dec = value.to_decimal()
        return int(dec) if dec == dec.to_integral_value() else float(dec)
    return value


# ----- loading ----------------------------------------------------------------------------


class MongoDBLoader(Loader):
    """``insert_many(ordered=False)`` of orjson-parsed documents, all or nothing per batch.

    Every document gets its ``_id`` here (an ObjectId, as the driver would assign), so the
    documents of a batch are known: when the server refuses some of them (BulkWriteError) or the
    driver cannot encode one (an integer beyond 64 bits, a NUL in a key, a document over the
    size limit, too deep nesting) the ones of the batch that were inserted are deleted again and
    the batch is refused. Documents carrying their own ``_id`` (not Bluesky's) are encoded to
    BSON before anything is sent, so that deleting never touches an older document.
    """

    def __init__(self, uri: str, collection: str) -> None:
        import bson
        import bson.errors
        import bson.raw_bson
        import orjson

        self.client = mongo_client(uri)
        self.collection = self.client[DATABASE][collection]
        hello = self.client.admin.command("hello")
        self.max_bson_size = int(hello.get("maxBsonObjectSize", 16 * 1024 * 1024))
        self._loads = orjson.loads
        self._decode_error = orjson.JSONDecodeError
        self._encode = bson.encode
        self._raw = bson.raw_bson.RawBSONDocument
        self._object_id = bson.ObjectId
        # What the BSON encoder raises for content it cannot hold (DocumentTooLarge is an
        # InvalidDocument).
        self._invalid = (bson.errors.InvalidDocument, bson.errors.InvalidStringData,
                         OverflowError, RecursionError)

    def _documents(self, lines: list[bytes]) -> tuple[list[Any], list[Any], bool]:
        """(documents, their _id's, whether some came with their own _id)."""
        joined = b"\n".join(lines)
        suspects = _long_digit_lines(joined)
        loads, object_id = self._loads, self._object_id
        docs: list[Any] = []
        ids: list[Any] = []
        own_ids = False
        for index, line in enumerate(lines):
            try:
                doc = loads(line)
            except self._decode_error as error:
                raise BatchRejected(f"invalid JSON (batch line {index + 1}): {error}") from error
            if type(doc) is not dict:
                raise BatchRejected(f"not a JSON object (batch line {index + 1})")
            if index in suspects:
                _check_big_ints(line)
            if "_id" in doc:
                own_ids = True
            else:
                doc["_id"] = object_id()
            ids.append(doc["_id"])
            docs.append(doc)
        return docs, ids, own_ids

    def _encoded(self, docs: list[Any]) -> list[Any]:
        """The documents as RawBSONDocument, refusing the batch on one BSON cannot hold."""
        raws = []
        for index, doc in enumerate(docs):
            try:
                data = self._encode(doc)
            except self._invalid as error:
                raise BatchRejected(_bson_refusal(error, index)) from error
            if len(data) > self.max_bson_size:
                raise BatchRejected(f"document of {len(data)} bytes exceeds the server's "
                                    f"maxBsonObjectSize {self.max_bson_size} "
                                    f"(batch line {index + 1})")
            raws.append(self._raw(data))
        return raws

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        from pymongo.errors import BulkWriteError, OperationFailure

        docs, ids, own_ids = self._documents(lines)
        if own_ids:
            docs = self._encoded(docs)
        try:
            self.collection.insert_many(docs, ordered=False)
        except BulkWriteError as error:
            details = error.details or {}
            errors = details.get("writeErrors") or []
            if not errors:  # only write concern errors: the server, not the content
                raise
            refused = {int(e.get("index", -1)) for e in errors}
            inserted = [ids[i] for i in range(len(ids)) if i not in refused]
            if inserted and details.get("nInserted", 1):
                self._delete(inserted)
            first = errors[0]
            message = short_message(str(first.get("errmsg")))
            named = {int(e.get("index", -1)): f"{short_message(str(e.get('errmsg')))} [code {e.get('code')}]"
                     for e in errors}
            raise BatchRejected(f"{message} [code {first.get('code')}, batch line "
                                f"{int(first.get('index', -1)) + 1}; {len(errors)} refused]",
                                refused=named) from error
        except OperationFailure as error:
            if error.code in CONTENT_ERROR_CODES:
                self._delete(ids)
                message = error.details.get("errmsg") if error.details else str(error)
                raise BatchRejected(f"{short_message(str(message))} [code {error.code}]") from error
            raise
        except self._invalid as error:
            # Raised by the driver while encoding, before or between wire messages: what was
            # sent (every _id there is one we just made) is deleted.
            self._delete(ids)
            raise BatchRejected(_bson_refusal(error, None)) from error

    def _delete(self, ids: list[Any]) -> None:
        for start in range(0, len(ids), 10_000):
            self.collection.delete_many({"_id": {"$in": ids[start:start + 10_000]}})

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()


# ----- query sessions ---------------------------------------------------------------------


class MongoDBSession(QuerySession):
    """A pymongo client in the query worker.

    engine_seconds: the server's own latency of the aggregate on our collection, from
    ``$collStats: {latencyStats}`` (the delta of ``reads.latency`` around the query, minus what
    the statistics command itself adds, measured at open); None when the server has no
    latency statistics (FerretDB) or other reads on the collection interfered.
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.client = mongo_client(spec["uri"])
        self.db = self.client[spec["database"]]
        self.collection = self.db[spec["collection"]]
        timeout = spec.get("timeout")
        self.max_time_ms = int(float(timeout) * 1000) if timeout else None
        self._token: str | None = None
        self._lock = threading.Lock()
        self._self_cost: tuple[int, int] | None = None
        with contextlib.suppress(Exception):
            first = self._latency()
            second = self._latency()
            if first is not None and second is not None:
                self._self_cost = (second[0] - first[0], second[1] - first[1])

    def _latency(self) -> tuple[int, int] | None:
        """(reads.ops, reads.latency µs) of our collection, or None if not reported."""
        stats = list(self.collection.aggregate([{"$collStats": {"latencyStats": {}}}]))
        reads = ((stats[0] if stats else {}).get("latencyStats") or {}).get("reads")
        if not reads or "latency" not in reads:
            return None
        return int(reads["ops"]), int(reads["latency"])

    @staticmethod
    def parse(text: str) -> tuple[list[str], list[dict[str, Any]]]:
        query = json.loads(text)
        return list(query["columns"]), list(query["pipeline"])

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        columns, pipeline = self.parse(text)
        before = None
        if self._self_cost is not None:
            with contextlib.suppress(Exception):
                before = self._latency()
        token = f"docbench-q{query_number}-{secrets.token_hex(6)}"
        with self._lock:
            self._token = token
        options: dict[str, Any] = {"allowDiskUse": True, "comment": token, "batchSize": 100_000}
        if self.max_time_ms:
            options["maxTimeMS"] = self.max_time_ms
        from pymongo.errors import OperationFailure

        try:
            docs = list(self.collection.aggregate(pipeline, **options))
        except OperationFailure as error:
            # The server's own words, once (pymongo appends the whole reply to the message).
            details = error.details or {}
            message = details.get("errmsg") or str(error)
            raise OperationFailure(f"{message} [{details.get('codeName', 'code')} {error.code}]",
                                   error.code) from None
        finally:
            with self._lock:
                self._token = None
        rows = [tuple(_plain(_field(doc, c)) for c in columns) for doc in docs]
        outcome = QueryOutcome(rows=rows)
        if before is not None and self._self_cost is not None:
            with contextlib.suppress(Exception):
                after = self._latency()
                if after is not None and after[0] - before[0] == self._self_cost[0] + 1:
                    micros = after[1] - before[1] - self._self_cost[1]
                    outcome.engine_seconds = max(micros, 0) / 1e6
        return outcome

    def explain(self, query_number: int, text: str) -> str | None:
        from bson import json_util

        _, pipeline = self.parse(text)
        plan = self.db.command({"explain": {"aggregate": self.collection.name,
                                            "pipeline": pipeline, "cursor": {}},
                                "verbosity": "queryPlanner"})
        plan.pop("$clusterTime", None)
        plan.pop("operationTime", None)
        return json_util.dumps(plan, indent=1)

    def engine_pids(self) -> list[int]:
        # A managed server on this machine (FerretDB and its DocumentDB) reports its processes
        # in the spec; a server reached by URL runs elsewhere or as someone else: nothing
        # measurable.
        return [int(pid) for pid in self.spec.get("pids") or [] if Path(f"/proc/{pid}").exists()]

    def cancel(self) -> None:
        """killOp of our aggregate, found by its comment in $currentOp (best effort)."""
        with self._lock:
            token = self._token
        if token is None:
            return
        with contextlib.suppress(Exception):
            client = mongo_client(self.spec["uri"], serverSelectionTimeoutMS=3000)
            try:
                ops = client.admin.aggregate([{"$currentOp": {}},
                                              {"$match": {"command.comment": token}}])
                for op in ops:
                    client.admin.command("killOp", op=op["opid"])
            finally:
                client.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()


# ----- docbench's collections -------------------------------------------------------------


def collection_spec(compressor: str | None) -> dict[str, Any]:
    """collection.json with the compressor filled in."""
    text = (FOLDER / "collection.json").read_text()
    return json.loads(text.replace("{compressor}", str(compressor or "")))


def create_collection(engine: MongoDBEngine, name: str, compressor: str | None) -> None:
    """Drop and create ``docbench.<name>``, with the WiredTiger block compressor if given."""
    db = engine.database()
    db.drop_collection(name)
    db.create_collection(name, **(collection_spec(compressor)["create"] if compressor else {}))


def collection_stats(engine: MongoDBEngine, name: str) -> dict[str, Any]:
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
    db_stats: dict[str, Any] = {}
    with contextlib.suppress(Exception):
        db_stats = dict(engine.database().command("dbStats"))
    data = _int(stats.get("storageSize"))
    index = _int(stats.get("totalIndexSize"))
    total = _int(stats.get("totalSize"))
    if total is None and data is not None:
        total = data + (index or 0)
    detail: dict[str, Any] = {
        "collection": f"{DATABASE}.{name}",
        "documents": _int(stats.get("count")),
        "uncompressed_bytes": _int(stats.get("size")),
        "avg_document_bytes": _int(stats.get("avgObjSize")),
        "free_storage_bytes": _int(stats.get("freeStorageSize")),
        "index_sizes": {k: _int(v) for k, v in (stats.get("indexSizes") or {}).items()},
        "database": {k: _int(db_stats.get(k)) for k in
                     ("dataSize", "storageSize", "indexSize", "totalSize", "objects")
                     if k in db_stats},
    }
    creation = ((stats.get("wiredTiger") or {}).get("creationString")) or ""
    match = re.search(r"block_compressor=(\w*)", creation)
    if match:
        detail["block_compressor"] = match.group(1) or "none"
    elif compressor:
        detail["block_compressor_requested"] = compressor
    detail.update(engine.storage_detail())
    return StorageSize(total=total, data=data, index=index, on_disk=engine.on_disk(),
                       detail=detail)


# ----- the adapter ------------------------------------------------------------------------

VARIANTS: list[Variant] = [
    Variant("snappy", "WiredTiger collection, block compressor snappy (MongoDB's default)",
            role="default", settings={"compressor": "snappy"}),
    Variant("zstd", "WiredTiger collection, block compressor zstd", role="best",
            settings={"compressor": "zstd"}),
]


class MongoDBAnalytics(AnalyticsAdapter):
    engine: MongoDBEngine
    variants = VARIANTS
    retains_structure = True
    # 20k documents (~10 MB) per insert_many: one or two wire messages, cheap to re-send
    # while a refused batch is bisected.
    load_batch_size = 20_000
    # Q4/Q5 use time_us as stored (an int64 of µs), Q3 only needs the hour: exact answers.
    time_precision_us = 1

    def __init__(self, engine: MongoDBEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.collection_name = f"bluesky_{variant.name}"
        self.compressor: str | None = variant.settings.get("compressor")

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
        index = collection_spec(self.compressor)["index"]
        keys = [(path, int(direction)) for path, direction in index["keys"]]
        self.finish_step(f"createIndex {index['name']}",
                         lambda: self.collection().create_index(keys, name=index["name"]))

    def native_load(self, files: list[Path]) -> None:
        """What a person writes by hand: read the lines, json-parse, ``insert_many`` in chunks
        (orjson for parsing, as docbench's loader; no checks, no clean-up)."""
        import orjson

        from docbench.dataset.reader import iter_lines

        collection = self.collection()
        chunk: list[dict[str, Any]] = []
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

    def storage(self) -> StorageSize:
        return collection_size(self.engine, self.collection_name, self.compressor)

    # ----- queries -----------------------------------------------------------------------
    def queries(self) -> list[str]:
        texts = []
        for number in range(1, 6):
            query = json.loads((FOLDER / "queries" / f"q{number}.json").read_text())
            texts.append(json.dumps(query, separators=(",", ":")))
        return texts

    def session_spec(self) -> dict[str, Any]:
        return {"uri": self.engine.uri(), "database": DATABASE, "collection": self.collection_name,
                "index": INDEX_NAME, "pids": self.engine.query_pids()}

    @classmethod
    def open_session(cls, spec: dict[str, Any]) -> QuerySession:
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
            return (f"Q{query_number}: the plan does not scan the index {INDEX_NAME} "
                    f"(stages: {', '.join(sorted(names)) or 'none'})")
        if "FETCH" in names or "COLLSCAN" in names:
            return (f"Q{query_number}: the index scan is not covered (stages: "
                    f"{', '.join(sorted(names))})")
        return None


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _plan_stages(plan: Any):
    """(stage, indexName) of every plan stage of an explain document, classic or SBE, whatever
    it is nested in ($cursor, queryPlanner, winningPlan, queryPlan, inputStage(s), shards)."""
    if isinstance(plan, list):
        for item in plan:
            yield from _plan_stages(item)
    elif isinstance(plan, dict):
        if isinstance(plan.get("stage"), str):
            yield plan["stage"], plan.get("indexName")
        for key, value in plan.items():
            if key in {"rejectedPlans", "slotBasedPlan", "command"}:
                continue
            if isinstance(value, dict | list):
                yield from _plan_stages(value)


ADAPTER = MongoDBAnalytics

__all__ = ["ADAPTER", "VARIANTS", "MongoDBAnalytics", "MongoDBLoader", "MongoDBSession"]
