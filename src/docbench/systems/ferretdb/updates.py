"""FerretDB v1 (SQLite backend, managed server) in the updates workload: the mongodb
system's updates adapter (``$set``, unique index on ycsb_key, ``compact``) on FerretDB's own
server (the engine's); on-disk size = its SQLite data directory, server process = its PID."""

from __future__ import annotations

from docbench.contracts.common import Variant
from docbench.systems.ferretdb.engine import FerretDBEngine
from docbench.systems.mongodb.updates import MongoDBUpdates

VARIANTS: list[Variant] = [
    Variant("default", "FerretDB v1 over SQLite, collection ycsb, unique index on ycsb_key",
            settings={"type": "JSON text in SQLite", "index": "ycsb_key (unique)"}),
]


class FerretDBUpdates(MongoDBUpdates):
    engine: FerretDBEngine


ADAPTER = FerretDBUpdates

__all__ = ["ADAPTER", "VARIANTS", "FerretDBUpdates"]
