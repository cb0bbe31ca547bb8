"""MongoDB's query session: the analytics workload's query worker runs the aggregation pipelines
through it."""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.core.jsontypes import JsonObject, as_array, as_float, as_int, as_object, as_str
from docbench.systems.mongodb.engine import mongo_client


def _field(doc: Mapping[str, object], path: str) -> object:
    """The value at a dotted path of a BSON document (None where a key is missing)."""
    value: object = doc
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _plain(value: object) -> object:
    """BSON values the checker and the result files understand (Int64 is an int already)."""
    from bson.decimal128 import Decimal128

    if isinstance(value, Decimal128):
        dec = value.to_decimal()
        return int(dec) if dec == dec.to_integral_value() else float(dec)
    return value


class MongoDBSession(QuerySession):
    """A pymongo client in the query worker.

    engine_seconds: the server's own latency of the aggregate on our collection, from
    ``$collStats: {latencyStats}`` (the delta of ``reads.latency`` around the query, minus what
    the statistics command itself adds, measured at open); None when the server has no
    latency statistics (FerretDB) or other reads on the collection interfered.
    """

    def __init__(self, spec: JsonObject) -> None:
        self.spec = spec
        self.client = mongo_client(as_str(spec["uri"], "uri"))
        self.db = self.client[spec["database"]]
        self.collection = self.db[spec["collection"]]
        timeout = spec.get("timeout")
        self.max_time_ms = int(as_float(timeout, "timeout") * 1000) if timeout else None
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
    def parse(text: str) -> tuple[list[str], list[JsonObject]]:
        query = as_object(json.loads(text), "query")
        columns = [as_str(column, "column") for column in as_array(query["columns"], "columns")]
        return columns, [
            as_object(stage, "pipeline stage") for stage in as_array(query["pipeline"], "pipeline")
        ]

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        columns, pipeline = self.parse(text)
        before = None
        if self._self_cost is not None:
            with contextlib.suppress(Exception):
                before = self._latency()
        token = f"docbench-q{query_number}-{secrets.token_hex(6)}"
        with self._lock:
            self._token = token
        options: dict[str, bool | int | str] = {"allowDiskUse": True, "comment": token, "batchSize": 100_000}
        if self.max_time_ms:
            options["maxTimeMS"] = self.max_time_ms
        from pymongo.errors import OperationFailure

        try:
            docs = list(self.collection.aggregate(pipeline, **options))
        except OperationFailure as error:
            # The server's own words, once (pymongo appends the whole reply to the message).
            details = error.details or {}
            message = details.get("errmsg") or str(error)
            raise OperationFailure(
                f"{message} [{details.get('codeName', 'code')} {error.code}]", error.code
            ) from None
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
        plan = self.db.command(
            {
                "explain": {"aggregate": self.collection.name, "pipeline": pipeline, "cursor": {}},
                "verbosity": "queryPlanner",
            }
        )
        plan.pop("$clusterTime", None)
        plan.pop("operationTime", None)
        return json_util.dumps(plan, indent=1)

    def engine_pids(self) -> list[int]:
        # A managed server on this machine (FerretDB and its DocumentDB) reports its processes
        # in the spec; a server reached by URL runs elsewhere or as someone else: nothing
        # measurable.
        pids = [as_int(pid, "pid") for pid in as_array(self.spec.get("pids") or [], "pids")]
        return [pid for pid in pids if Path(f"/proc/{pid}").exists()]

    def cancel(self) -> None:
        """killOp of our aggregate, found by its comment in $currentOp (best effort)."""
        with self._lock:
            token = self._token
        if token is None:
            return
        with contextlib.suppress(Exception):
            client = mongo_client(as_str(self.spec["uri"], "uri"), serverSelectionTimeoutMS=3000)
            try:
                ops = client.admin.aggregate([{"$currentOp": {}}, {"$match": {"command.comment": token}}])
                for op in ops:
                    client.admin.command("killOp", op=op["opid"])
            finally:
                client.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
