"""FerretDB 2 on DocumentDB in the updates workload: the mongodb system's updates adapter
(``$set``, unique index on ycsb_key, ``compact``) on FerretDB's own servers (the engine's);
on-disk size = DocumentDB's PostgreSQL data directory, server processes = FerretDB, the
postmaster and its backends."""

from __future__ import annotations

from docbench.contracts.common import Variant
from docbench.systems.ferretdb.engine import FerretDBEngine
from docbench.systems.mongodb.updates import COLLECTION, MongoDBUpdates

VARIANTS: list[Variant] = [
    Variant(
        "default",
        "FerretDB 2 on DocumentDB (BSON in a PostgreSQL 18 table), collection ycsb, unique index on ycsb_key",
        settings={"type": "BSON in DocumentDB", "index": "ycsb_key (unique)"},
    ),
]


class FerretDBUpdates(MongoDBUpdates):
    engine: FerretDBEngine

    def create_key_index(self) -> None:
        """The unique key index, then ANALYZE on docbench's own server (``engine.analyze``):
        point operations are measured with statistics, as PostgreSQL's are."""
        super().create_key_index()
        if self.engine.server is not None:
            self.engine.analyze(COLLECTION)

    def maintain(self) -> str:
        done = super().maintain()
        if self.engine.server is not None:
            done += f"; {self.engine.analyze(COLLECTION)}"
        return done


ADAPTER = FerretDBUpdates

__all__ = ["ADAPTER", "VARIANTS", "FerretDBUpdates"]
