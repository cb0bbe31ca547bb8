"""MongoDB in the storage workload: one variant per WiredTiger block compressor.

Collection ``docbench.storage_matrix``, created with
``storageEngine: {wiredTiger: {configString: "block_compressor=<c>"}}`` (the ``create`` template
of ``collection.json``, as the analytics collections); the documents ``{"key", "payload"}``
are stored as offered, with the ObjectId ``_id`` the loader assigns, and the only index is
MongoDB's own ``_id_``. WiredTiger compresses each block (pages of up to 32 kB of
documents), so a block holds several documents when they are small.

Inserts: the analytics loader (``insert_many(ordered=False)``, all or nothing per batch: what
the server refuses is deleted again and reported with its message). finish(): ``fsync``, which
makes WiredTiger write a checkpoint -- between checkpoints the new blocks are in its cache
and journal, not yet in the collection's file that ``storageSize`` measures; a server that
refuses ``fsync`` (a user without the privilege) is recorded in the detail. Sizes: the
analytics adapter's ``$collStats`` (``storageSize`` + ``totalIndexSize``; the compressor
actually used, read back from the WiredTiger creation string, in the detail). ``on_disk`` is
null: the data directory is not docbench's.

MongoDB runs only against the user's server (``url``): no mongod can be installed here.
FerretDB's module (``docbench/systems/ferretdb/storage_matrix.py``) subclasses the target
below for its managed server, and the tests run this one against FerretDB by URL.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import ClassVar

from docbench.systems.base import Loader, StorageSize, Variant
from docbench.systems.mongodb.adapter import MongoDB, _short
from docbench.workloads.storage.documents import document_json

TABLE = "storage_matrix"


def _variant(compressor: str, role: str, note: str) -> Variant:
    return Variant(compressor, f"WiredTiger collection, block_compressor={compressor}{note}",
                   role=role, settings={"compressor": compressor})


MATRIX_VARIANTS: list[Variant] = [
    _variant("snappy", "default", " (MongoDB's default)"),
    _variant("zstd", "best", ""),
    _variant("zlib", "other", ""),
    # WiredTiger's own name for no compression (its default outside MongoDB).
    _variant("none", "other", ": no compression"),
]


class StorageMatrixTarget:
    """The storage target on the analytics adapter (``system_class``), whose collection is
    pointed at ``storage_matrix``: its lifecycle, loader, create and sizes are reused."""

    system_class: ClassVar[type[MongoDB]] = MongoDB

    def __init__(self, workdir: Path, variant: Variant, url: str | None = None) -> None:
        self.workdir = workdir
        self.variant = variant
        self.system = self.system_class(workdir, variant, url)
        self.system.collection_name = TABLE
        self.loader: Loader | None = None
        self.checkpoint: str | None = None

    # ----- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        self.system.start()

    def stop(self) -> None:
        self._close_loader()
        self.system.stop()

    def _close_loader(self) -> None:
        if self.loader is not None:
            with contextlib.suppress(Exception):
                self.loader.close()
            self.loader = None

    def version(self) -> str | None:
        return self.system.version()

    # ----- the collection ------------------------------------------------------------------
    def create(self) -> None:
        self._close_loader()
        self.checkpoint = None
        self.system.create()

    def insert(self, rows: list[tuple[str, str]]) -> None:
        if self.loader is None:
            self.loader = self.system.loader()
        self.loader.load_batch([document_json(key, payload).encode() for key, payload in rows])

    def count(self) -> int:
        return self.system.count()

    def finish(self) -> None:
        self._close_loader()
        self.checkpoint = self.write_checkpoint()

    def write_checkpoint(self) -> str:
        """Make the collection's files hold every block; returns what was done."""
        from pymongo.errors import OperationFailure

        try:
            self.system._client().admin.command("fsync")
        except OperationFailure as error:
            return f"fsync refused (sizes may miss blocks not yet checkpointed): {_short(str(error))}"
        return "fsync (WiredTiger checkpoint)"

    def sizes(self) -> StorageSize:
        storage = self.system.storage()
        detail = dict(storage.detail)
        detail.update({"table": storage.data, "index": storage.index,
                       "checkpoint": self.checkpoint})
        return StorageSize(total=storage.total, data=storage.data, index=storage.index,
                           on_disk=storage.on_disk, detail=detail)
