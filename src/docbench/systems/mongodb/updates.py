"""MongoDB (wire protocol, pymongo) in the updates workload: collection ``ycsb`` with a
unique index on ``ycsb_key``. Bulk style: ``update_many({}, {"$set": {"field11": ...}})``.
Point update: ``update_one({"ycsb_key": k}, {"$set": {field: value}})``. Maintenance: the
``compact`` command. Sizes: ``collStats`` (storageSize, totalIndexSize).

MongoDB itself runs only against a user's server (the engine's URL): its cache cannot be made
small (the io scenario is not supported) and no server process is measured. FerretDB
subclasses this with its managed server (``docbench/systems/ferretdb/updates.py``). YCSB
documents have no ``$`` keys, so nothing is escaped.
"""

from __future__ import annotations

import contextlib
from typing import ClassVar

import orjson

from docbench.contracts.common import StorageSize, Variant
from docbench.contracts.updates import KeyValueSession, UpdatesTarget
from docbench.core.jsontypes import JsonObject, as_str
from docbench.systems.mongodb.engine import DATABASE, MongoDBEngine, mongo_client

VARIANTS: list[Variant] = [
    Variant(
        "default",
        "collection ycsb, unique index on ycsb_key",
        settings={"type": "BSON", "index": "ycsb_key (unique)"},
    ),
]
COLLECTION = "ycsb"
INSERT_CHUNK = 5_000


class MongoKeyValueSession(KeyValueSession):
    def __init__(self, spec: JsonObject) -> None:
        self.client = mongo_client(as_str(spec["uri"], "uri"))
        self.coll = self.client[spec.get("database", DATABASE)][spec.get("collection", COLLECTION)]

    def read(self, key: str) -> JsonObject | None:
        return self.coll.find_one({"ycsb_key": key}, {"_id": 0})

    def update_field(self, key: str, field: str, value: str) -> int:
        return self.coll.update_one({"ycsb_key": key}, {"$set": {field: value}}).matched_count

    def insert(self, doc: dict[str, str]) -> None:
        self.coll.insert_one(dict(doc))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()


class MongoDBUpdates(UpdatesTarget):
    engine: MongoDBEngine
    styles: ClassVar[list[str]] = ["$set"]

    def coll(self):
        return self.engine.database()[COLLECTION]

    def engine_info(self) -> JsonObject:
        return {"buildInfo": self.engine.build_info().get("version")}

    def create(self) -> None:
        db = self.engine.database()
        db.drop_collection(COLLECTION)
        db.create_collection(COLLECTION)

    def load(self, docs: list[bytes]) -> None:
        coll = self.coll()
        for start in range(0, len(docs), INSERT_CHUNK):
            coll.insert_many(
                [orjson.loads(line) for line in docs[start : start + INSERT_CHUNK]], ordered=True
            )

    def create_key_index(self) -> None:
        self.coll().create_index("ycsb_key", unique=True, name="ycsb_key")

    def count(self) -> int:
        return int(self.coll().count_documents({}))

    def count_field(self, field: str, value: str) -> int:
        return int(self.coll().count_documents({field: value}))

    def bulk_update_styles(self) -> list[str]:
        return list(self.styles)

    def bulk_add_field(self, style: str, field: str, value: str) -> int:
        if style != "$set":
            raise ValueError(f"unknown style {style!r}")
        return int(self.coll().update_many({}, {"$set": {field: value}}).modified_count)

    def maintain(self) -> str:
        try:
            self.engine.database().command("compact", COLLECTION)
            return "compact"
        except Exception as error:  # noqa: BLE001 - recorded, not fatal
            return f"compact failed: {' '.join(str(error).split())[:200]}"

    def sizes(self) -> StorageSize:
        stats = self.engine.database().command("collStats", COLLECTION)
        storage = stats.get("storageSize")
        index = stats.get("totalIndexSize")
        total = (storage or 0) + (index or 0) if storage is not None else None
        return StorageSize(
            total=total,
            data=storage,
            index=index,
            on_disk=self.engine.on_disk(),
            detail={"size": stats.get("size"), "count": stats.get("count")},
        )

    def session_spec(self) -> JsonObject:
        return {"uri": self.engine.uri(), "database": DATABASE, "collection": COLLECTION}

    @classmethod
    def open_session(cls, spec: JsonObject) -> MongoKeyValueSession:
        return MongoKeyValueSession(spec)


ADAPTER = MongoDBUpdates

__all__ = ["ADAPTER", "COLLECTION", "VARIANTS", "MongoDBUpdates", "MongoKeyValueSession"]
