"""FerretDB 2 on DocumentDB in the storage workload.

The mongodb system's adapter (``docbench/systems/mongodb/storage.py``: the analytics
loader's ``insert_many``, collection ``docbench.storage_matrix`` with only the ``_id_``
index, sizes from ``$collStats``/``collStats``) on FerretDB's own servers, which the engine
starts and stops.

DocumentDB keeps a collection as a PostgreSQL table with the document as BSON in one column:
rows over ~2 kB are compressed (pglz, PostgreSQL's default) and moved to the TOAST table,
smaller ones are stored as they are. One variant: WiredTiger's compressors do not exist here
(``storageEngine`` options are ignored); the analytics workload's ``lz4`` variant shows the
other TOAST compression.

What differs from MongoDB, for sizes that are this cell's and final:

* create() drops the whole ``docbench`` database first (DocumentDB drops its tables), so each
  cell starts from empty relations;
* finish() restarts the servers: PostgreSQL's shutdown checkpoint writes every dirty page, so
  the data directory then holds what the sizes count (FerretDB has no ``fsync``).

Sizes: ``storageSize`` + ``totalIndexSize`` as DocumentDB computes them from PostgreSQL's
relation sizes; ``on_disk`` = the cluster's data directory (WAL and catalogs included).
"""

from __future__ import annotations

from docbench.contracts.common import Variant
from docbench.systems.ferretdb.engine import FerretDBEngine
from docbench.systems.mongodb.engine import DATABASE
from docbench.systems.mongodb.storage import MongoDBStorage

VARIANTS: list[Variant] = [
    Variant(
        "default",
        "FerretDB 2 on DocumentDB: BSON in a PostgreSQL 18 table, TOAST compression pglz for rows over ~2 kB",
        role="default",
        settings={"backend": "documentdb"},
    ),
]


class FerretDBStorage(MongoDBStorage):
    engine: FerretDBEngine

    def create(self) -> None:
        if self.engine.server is not None:
            # Our own server: fresh relations per cell.
            self.close_loader()
            self.engine.client().drop_database(DATABASE)
        super().create()

    def write_checkpoint(self) -> str:
        if self.engine.server is None:
            return "none (a server reached by URL is not restarted)"
        self.engine.restart()
        return "servers restarted (PostgreSQL's shutdown checkpoint)"


ADAPTER = FerretDBStorage

__all__ = ["ADAPTER", "FerretDBStorage", "VARIANTS"]
