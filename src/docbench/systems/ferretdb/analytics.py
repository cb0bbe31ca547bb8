"""FerretDB v1 in the analytics workload: the MongoDB wire protocol over SQLite, on the
engine's managed server (``engine.py``), running the very same pipelines as the ``mongodb``
system (its adapter's subclass here).

FerretDB v1 refuses document keys that start with ``$`` (every Bluesky record has
``"$type"``); MongoDB 5.0+ stores them. So that the documents load at all, the loader (the
mongodb system's, which does this for any server that refuses such keys) stores them with the
``$`` replaced by its full-width look-alike ``＄`` (U+FF04, the substitute MongoDB's own
documentation suggested for reserved characters in keys) in the variant ``escaped-keys``. No
query reads those keys. Keys with a ``.`` (also refused by FerretDB v1, rare in the data) are
not rewritten: such documents are refused and logged.

What FerretDB v1 cannot compute (operators it has not implemented, such as ``$cond``,
``$hour``, ``$min``/``$max`` accumulators) fails the query with FerretDB's own error, and what it
computes wrongly is marked ``wrong`` by the answer checker: the pipelines are NOT adapted to it.
Sizes: MongoDB's (``$collStats``) plus the engine's data directory and SQLite files.
"""

from __future__ import annotations

import json

from docbench.contracts.common import Variant
from docbench.systems.ferretdb.engine import FerretDBEngine
from docbench.systems.mongodb.analytics import MongoDBAnalytics

VARIANTS: list[Variant] = [
    Variant("default", "FerretDB v1 with its SQLite backend (documents as SQLite JSON text; "
            "no compression option); documents stored as offered, so those with '$' keys "
            "are refused", role="default", settings={}),
    Variant("escaped-keys", "as default, but keys starting with '$' are stored with U+FF04 "
            "'＄' instead (documents modified so FerretDB v1 accepts them)", role="alt",
            settings={"escape_dollar_keys": True}),
]


class FerretDBAnalytics(MongoDBAnalytics):
    engine: FerretDBEngine
    variants = VARIANTS
    retains_structure = True
    load_batch_size = 20_000
    time_precision_us = 1

    # ----- queries -----------------------------------------------------------------------
    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """FerretDB's explain is SQLite's query plan plus whether the filter was pushed down to
        SQLite. Q2-Q5 filter on indexed paths: warn unless the filter is pushed down and SQLite
        searches an index."""
        if query_number == 1:
            return None
        if not plan:
            return f"Q{query_number}: no plan to check"
        try:
            doc = json.loads(plan)
        except ValueError:
            return f"Q{query_number}: the plan is not explain JSON"
        steps = (doc.get("queryPlanner") or {}).get("Plan") or []
        details = " | ".join(str(s).split("detail=", 1)[-1] for s in steps)
        if doc.get("filterPushdown") and "USING INDEX" in details.upper():
            return None
        return (f"Q{query_number}: FerretDB does not use the index (filterPushdown="
                f"{str(bool(doc.get('filterPushdown'))).lower()}, SQLite plan: {details or 'none'})")


ADAPTER = FerretDBAnalytics

__all__ = ["ADAPTER", "VARIANTS", "FerretDBAnalytics"]
