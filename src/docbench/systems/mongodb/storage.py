"""MongoDB in the storage workload: one variant per WiredTiger block compressor.

Collection ``docbench.storage_matrix``, created with
``storageEngine: {wiredTiger: {configString: "block_compressor=<c>"}}`` (the ``create`` template
of ``collection.json``, as the analytics collections); the documents ``{"key", "payload"}``
are stored as offered, with the ObjectId ``_id`` the loader assigns, and the only index is
MongoDB's own ``_id_``. WiredTiger compresses each block (pages of up to 32 kB of
documents), so a block holds several documents when they are small.

Inserts: the analytics loader (``analytics.MongoDBLoader``: ``insert_many(ordered=False)``,
all or nothing per batch: what the server refuses is deleted again and reported with its
message). finish(): ``fsync``, which makes WiredTiger write a checkpoint -- between
checkpoints the new blocks are in its cache and journal, not yet in the collection's file that
``storageSize`` measures; a server that refuses ``fsync`` (a user without the privilege) is
recorded in the detail. Sizes: the analytics module's ``collection_size`` (``$collStats``:
``storageSize`` + ``totalIndexSize``; the compressor actually used, read back from the
WiredTiger creation string, in the detail). ``on_disk`` is the engine's: null for a server
reached by URL, whose data directory is not docbench's.

MongoDB runs only against the user's server (the engine's URL): no mongod can be installed
here. FerretDB's module (``docbench/systems/ferretdb/storage.py``) subclasses the adapter
below for its managed server, and the tests run this one against FerretDB by URL.
"""

from __future__ import annotations

import contextlib

from docbench.contracts.analytics import Loader
from docbench.contracts.common import StorageSize, Variant
from docbench.contracts.storage import TABLE, StorageMatrixTarget
from docbench.contracts.storage_documents import document_json
from docbench.core.jsontypes import optional_str
from docbench.systems.mongodb.analytics import collection_size, create_collection
from docbench.systems.mongodb.engine import MongoDBEngine
from docbench.systems.mongodb.loader import MongoDBLoader, short_message


def _variant(compressor: str, role: str, note: str) -> Variant:
    return Variant(
        compressor,
        f"WiredTiger collection, block_compressor={compressor}{note}",
        role=role,
        settings={"compressor": compressor},
    )


VARIANTS: list[Variant] = [
    _variant("snappy", "default", " (MongoDB's default)"),
    _variant("zstd", "best", ""),
    _variant("zlib", "other", ""),
    # WiredTiger's own name for no compression (its default outside MongoDB).
    _variant("none", "other", ": no compression"),
]


class MongoDBStorage(StorageMatrixTarget):
    """Collection ``docbench.storage_matrix`` with the variant's block compressor; the
    analytics module's loader, create and sizes on it."""

    engine: MongoDBEngine

    def __init__(self, engine: MongoDBEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.compressor = optional_str(variant.settings.get("compressor"), "compressor")
        self.loader: Loader | None = None
        self.checkpoint: str | None = None

    # ----- lifecycle -----------------------------------------------------------------------
    def stop(self) -> None:
        self.close_loader()
        super().stop()

    def close_loader(self) -> None:
        if self.loader is not None:
            with contextlib.suppress(Exception):
                self.loader.close()
            self.loader = None

    # ----- the collection ------------------------------------------------------------------
    def create(self) -> None:
        self.close_loader()
        self.checkpoint = None
        create_collection(self.engine, TABLE, self.compressor)

    def insert(self, rows: list[tuple[str, str]]) -> None:
        if self.loader is None:
            self.loader = MongoDBLoader(self.engine.uri(), TABLE)
        self.loader.load_batch([document_json(key, payload).encode() for key, payload in rows])

    def count(self) -> int:
        return int(self.engine.database()[TABLE].count_documents({}))

    def finish(self) -> None:
        self.close_loader()
        self.checkpoint = self.write_checkpoint()

    def write_checkpoint(self) -> str:
        """Make the collection's files hold every block; returns what was done."""
        from pymongo.errors import OperationFailure

        try:
            self.engine.client().admin.command("fsync")
        except OperationFailure as error:
            return f"fsync refused (sizes may miss blocks not yet checkpointed): {short_message(str(error))}"
        return "fsync (WiredTiger checkpoint)"

    def sizes(self) -> StorageSize:
        storage = collection_size(self.engine, TABLE, self.compressor)
        detail = dict(storage.detail)
        detail.update({"table": storage.data, "index": storage.index, "checkpoint": self.checkpoint})
        return StorageSize(
            total=storage.total,
            data=storage.data,
            index=storage.index,
            on_disk=storage.on_disk,
            detail=detail,
        )


ADAPTER = MongoDBStorage

__all__ = ["ADAPTER", "VARIANTS", "MongoDBStorage"]
