"""FerretDB v1 (SQLite backend, managed server) in the storage workload.

The mongodb system's adapter (``docbench/systems/mongodb/storage.py``: the analytics
loader's ``insert_many``, collection ``docbench.storage_matrix`` with only the ``_id_``
index, sizes from ``$collStats``/``collStats``) on FerretDB's own server, which the engine
starts and stops.

One variant: FerretDB v1 has no compression knob. Its SQLite backend keeps each document as
JSON text (with FerretDB's type annotations) in a table per collection, 4 kB pages, long
documents in chains of overflow pages; ``storageEngine`` options are ignored. So repetitive
payloads take as much room as text, and random ones more: FerretDB writes its JSON with Go's
encoder, which escapes ``<``, ``>`` and ``&`` (3 of the 92 characters of random payloads) as
six-byte ``\\u003c``-style escapes, ~16 % more bytes.

What differs from MongoDB, for sizes that are this cell's and final:

* create() drops the whole ``docbench`` database first: FerretDB deletes its SQLite file, so
  each cell starts from an empty file (free pages of an earlier cell are not counted);
* finish() restarts the server: FerretDB has no ``fsync``, and closing its connections is
  what makes SQLite checkpoint the write-ahead log into the database file and delete it, so
  the data directory then holds exactly the database (the cross-check).

Sizes: ``storageSize`` (the collection's table) + ``totalIndexSize`` (the ``_id_`` index),
which FerretDB computes from SQLite's ``dbstat`` page counts; ``on_disk`` = the data
directory (``docbench.sqlite``, which also holds FerretDB's metadata table).
"""

from __future__ import annotations

from docbench.contracts.common import Variant
from docbench.systems.ferretdb.engine import FerretDBEngine
from docbench.systems.mongodb.engine import DATABASE
from docbench.systems.mongodb.storage import MongoDBStorage

VARIANTS: list[Variant] = [
    Variant("default", "FerretDB v1 over SQLite: documents as JSON text, 4 kB pages with "
            "overflow pages; no compression (FerretDB v1 has no compressor option)",
            role="default", settings={"backend": "sqlite"}),
]


class FerretDBStorage(MongoDBStorage):
    engine: FerretDBEngine

    def create(self) -> None:
        if self.engine.server is not None:
            # Our own server: a fresh SQLite file per cell.
            self.close_loader()
            self.engine.client().drop_database(DATABASE)
        super().create()

    def write_checkpoint(self) -> str:
        if self.engine.server is None:
            return "none (a server reached by URL is not restarted)"
        self.engine.restart()
        return "server restarted (SQLite WAL checkpointed into the database file)"


ADAPTER = FerretDBStorage

__all__ = ["ADAPTER", "VARIANTS", "FerretDBStorage"]
