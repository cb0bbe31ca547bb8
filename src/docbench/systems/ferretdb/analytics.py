"""FerretDB 2 on DocumentDB in the analytics workload: the MongoDB wire protocol over
PostgreSQL 18, on the engine's managed servers (``engine.py``), running the very same pipelines
as the ``mongodb`` system (its adapter's subclass here). Nothing is adapted to FerretDB: what
it computes wrongly is marked ``wrong`` by the answer checker, what it cannot compute ``error``.

DocumentDB stores each collection as a PostgreSQL table (``documentdb_data.documents_<id>``)
whose ``document`` column holds the BSON; compression is PostgreSQL's TOAST compression of
that column, which only documents over ~2 kB reach. Variants: ``pglz`` (PostgreSQL's default)
and ``lz4`` (the column set to lz4 after the collection is created: managed server only, the
wire protocol has no such option). Sizes: DocumentDB's ``collStats`` (PostgreSQL relation
sizes) plus the cluster's data directory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import ClassVar

from docbench.contracts.common import NotSupported, Variant
from docbench.core.jsontypes import JsonObject, JsonValue
from docbench.systems.ferretdb.engine import FerretDBEngine
from docbench.systems.mongodb.analytics import INDEX_NAME, MongoDBAnalytics

VARIANTS: list[Variant] = [
    Variant(
        "pglz",
        "DocumentDB collection (a PostgreSQL 18 table of BSON), TOAST compression "
        "pglz (PostgreSQL's default)",
        role="default",
        settings={"toast_compression": "pglz"},
    ),
    Variant(
        "lz4",
        "DocumentDB collection, TOAST compression lz4 (ALTER TABLE on the "
        "collection's table; docbench's own server only)",
        role="best",
        settings={"toast_compression": "lz4"},
        own_server_only=True,
    ),
]


def set_toast_compression(engine: FerretDBEngine, collection: str, method: str) -> str:
    """Set the TOAST compression of ``docbench.<collection>``'s document column; the table."""
    table = engine.collection_table(collection)
    with engine.documentdb_connection() as conn:
        conn.execute(f"ALTER TABLE {table} ALTER COLUMN document SET COMPRESSION {method}")
    return table


class FerretDBAnalytics(MongoDBAnalytics):
    engine: FerretDBEngine
    variants = VARIANTS
    retains_structure = True
    engine_defaults: ClassVar[JsonObject] = {"toast_compression": "pglz"}
    representation = "BSON (DocumentDB on PostgreSQL)"
    load_batch_size = 20_000
    refused_hard_kinds = frozenset({"lone_surrogate", "bigint", "deep_nesting"})
    time_precision_us = 1

    def __init__(self, engine: FerretDBEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.compressor = None  # no WiredTiger block compressor: TOAST (see the variants)
        self.toast_compression = str(variant.settings.get("toast_compression", "pglz"))

    def create(self) -> None:
        super().create()
        if self.toast_compression == "pglz":
            return  # PostgreSQL's default: nothing to change
        if self.engine.server is None:
            raise NotSupported(
                "TOAST compression other than the server's default needs "
                "docbench's own DocumentDB (not a server reached by URL)"
            )
        # create_collection made the table; the column's compression applies to what is
        # written from now on.
        self.collection().insert_one({"_id": "docbench-create"})
        set_toast_compression(self.engine, self.collection_name, self.toast_compression)
        self.collection().delete_one({"_id": "docbench-create"})

    def finish_load(self) -> None:
        """The compound index (the mongodb system's step), then, on docbench's own server,
        ANALYZE of the collection's table (see ``FerretDBEngine.analyze``)."""
        super().finish_load()
        if self.engine.server is not None:
            self.finish_step(
                "ANALYZE (DocumentDB's table)", lambda: self.engine.analyze(self.collection_name)
            )

    # ----- queries -----------------------------------------------------------------------
    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """DocumentDB answers explain with PostgreSQL's plan, whose index scans name the Mongo
        index they use (``IndexDetails``). Q2-Q5 filter on a prefix of the compound index:
        warn unless a plan node scans it."""
        if query_number == 1:
            return None
        if not plan:
            return f"Q{query_number}: no plan to check"
        try:
            used = set(_indexes_used(json.loads(plan)))
        except ValueError:
            return f"Q{query_number}: the plan is not explain JSON"
        if INDEX_NAME in used:
            return None
        return (
            f"Q{query_number}: DocumentDB's plan does not scan the index {INDEX_NAME} "
            f"(indexes scanned: {', '.join(sorted(used)) or 'none'})"
        )


def _indexes_used(plan: JsonValue) -> Iterator[str]:
    """Names of the indexes the plan's nodes scan (their ``IndexDetails``), anywhere in it."""
    if isinstance(plan, list):
        for item in plan:
            yield from _indexes_used(item)
    elif isinstance(plan, dict):
        details = plan.get("IndexDetails")
        # (iterating anything but a list, as before, finds no dict)
        for detail in details if isinstance(details, list) else []:
            if isinstance(detail, dict) and detail.get("indexName"):
                yield str(detail["indexName"])
        for value in plan.values():
            if isinstance(value, dict | list):
                yield from _indexes_used(value)


ADAPTER = FerretDBAnalytics

__all__ = ["ADAPTER", "VARIANTS", "FerretDBAnalytics", "set_toast_compression"]
