"""FerretDB v1 (SQLite backend, managed server) in the updates workload: the mongodb
system's updates target (``$set``, unique index on ycsb_key, ``compact``) on FerretDB's own
server; on-disk size = its SQLite data directory."""

from __future__ import annotations

from typing import ClassVar

from docbench.systems.base import Variant, directory_size
from docbench.systems.ferretdb.adapter import FerretDB
from docbench.systems.mongodb import updates as mongo

UPDATE_VARIANTS: list[Variant] = [
    Variant("default", "FerretDB v1 over SQLite, collection ycsb, unique index on ycsb_key",
            settings={"type": "JSON text in SQLite", "index": "ycsb_key (unique)"}),
]


class UpdatesTarget(mongo.UpdatesTarget):
    system_class: ClassVar[type[FerretDB]] = FerretDB

    def on_disk(self) -> int | None:
        server = self.system.server
        return directory_size(server.data_dir) if server is not None else None
