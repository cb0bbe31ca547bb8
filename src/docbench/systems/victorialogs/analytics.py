"""VictoriaLogs in the analytics workload: every event ingested by ``/insert/jsonline``
(``_time`` from ``time_us``, stream fields kind / commit.operation / commit.collection, as
JSONBench loads it), the five queries in LogsQL (``queries.logsql``).

The server (managed or the user's, by URL) is the engine's (``engine.py``); the loader is
``loader.py``, the query worker's session ``session.py``.
"""

from __future__ import annotations

import time
from typing import ClassVar

import orjson

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QuerySession
from docbench.contracts.capabilities import BlueskyQueries, LiveIngest, ReadBack
from docbench.contracts.common import StorageSize, Variant, directory_size
from docbench.contracts.engine import main_pid, system_file
from docbench.core.jsontypes import JsonMapping, JsonObject
from docbench.systems.victorialogs.engine import VictoriaLogsEngine
from docbench.systems.victorialogs.loader import VictoriaLogsLoader
from docbench.systems.victorialogs.session import VictoriaLogsSession

VARIANTS: list[Variant] = [
    Variant(
        "default",
        "jsonline ingestion, _time from time_us, stream fields kind, "
        "commit.collection, commit.operation (JSONBench's configuration)",
        role="default",
    ),
]

# Fields VictoriaLogs adds to every entry (not the document's).
OWN_FIELDS = frozenset({"_time", "_stream", "_stream_id", "_msg"})

_BLOCK_STATS = (
    "* | block_stats | stats sum(values_bytes) values_bytes, sum(dict_bytes) dict_bytes, "
    "sum(bloom_bytes) bloom_bytes, count() blocks"
)


class VictoriaLogsAnalytics(AnalyticsAdapter, BlueskyQueries, LiveIngest, ReadBack):
    variants: ClassVar[list[Variant]] = VARIANTS
    # Flattened into fields; arrays, numbers and booleans become strings; empty values go.
    retains_structure = False
    representation = "log fields (nested objects flattened to dotted names)"
    load_batch_size = 50_000
    # _time is kept in nanoseconds: time_us survives exactly.
    time_precision_us = 1
    # count_uniq is exact (it keeps every distinct value); no query is approximate.
    approximate_queries = frozenset()
    # The JSON parser's nesting limit is 300 levels (the generator's deep_nesting has 1000).
    refused_hard_kinds = frozenset({"deep_nesting"})
    # Its reader skips a line it cannot read and names it (in its log) in the same pass.
    native_refusals = "skips"
    engine: VictoriaLogsEngine

    def create(self) -> None:
        self.engine.empty()

    def loader(self) -> Loader:
        return VictoriaLogsLoader(self.engine)

    def finish_load(self) -> None:
        self.finish_step("force_flush", self.engine.client().force_flush)

    def _persisted(self) -> None:
        """Wait until no row is left in memory only (in-memory parts go to disk every 5 s),
        so that storage() measures the data directory with everything in it."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            metrics = self.engine.client().metrics()
            if not metrics.get('vl_storage_rows{type="storage/inmemory"}', 0):
                return
            time.sleep(0.5)

    def count(self) -> int:
        self.engine.client().force_flush()
        return self.engine.count()

    # Live ingest: jsonline as in the load; VictoriaLogs makes what arrived searchable within
    # about a second by itself.

    def live_loader(self) -> Loader:
        return VictoriaLogsLoader(self.engine, live=True)

    def visible_count(self) -> int:
        """What a query counts now: nothing flushed. On a connection of its own: the probe
        runs beside the loader's thread."""
        client = self.engine.connect()
        try:
            rows = client.query("* | count() rows")
            return int(rows[0]["rows"]) if rows else 0
        finally:
            client.close()

    def read_back(self) -> list[str]:
        """Each log entry's fields as VictoriaLogs returns them (nested objects flattened to
        dotted names, every value a string), without the fields it adds itself."""
        self.engine.client().force_flush()
        rows = self.engine.client().query("*")
        return [orjson.dumps({k: v for k, v in row.items() if k not in OWN_FIELDS}).decode() for row in rows]

    def storage(self) -> StorageSize:
        """VictoriaLogs' own figures: total = the compressed data it keeps for docbench's tenant
        (its /metrics vl_data_size_bytes of storage and indexdb, on docbench's own server; by
        URL other tenants count there too, so the block stats are used), data = values +
        dictionaries, index = bloom filters (JSONBench's block_stats split); the data
        directory on disk as the cross-check."""
        client = self.engine.client()
        client.force_flush()
        if self.engine.server is not None:
            self._persisted()  # not load time: VictoriaLogs writes them within 5 s by itself
        row = client.query(_BLOCK_STATS)[0]
        values, dicts, bloom = (int(row.get(k) or 0) for k in ("values_bytes", "dict_bytes", "bloom_bytes"))
        detail: JsonObject = {
            "block_stats": {k: int(v or 0) for k, v in row.items()},
            "jsonbench_total": values + dicts + bloom,
        }
        total = values + dicts + bloom
        on_disk = None
        if self.engine.server is not None:
            metrics = client.metrics()
            storage = int(metrics.get('vl_data_size_bytes{type="storage"}', 0))
            indexdb = int(metrics.get('vl_data_size_bytes{type="indexdb"}', 0))
            detail.update(
                {
                    "vl_data_size_bytes_storage": storage,
                    "vl_data_size_bytes_indexdb": indexdb,
                    "vl_uncompressed_data_size_bytes": int(
                        sum(v for k, v in metrics.items() if k.startswith("vl_uncompressed_data_size_bytes{"))
                    ),
                }
            )
            total = storage + indexdb
            on_disk = directory_size(self.engine.server.data_dir)
        return StorageSize(total=total, data=values + dicts, index=bloom, on_disk=on_disk, detail=detail)

    # ----- queries -----------------------------------------------------------------------
    def queries(self) -> list[str]:
        text = system_file(self.engine, "queries.logsql").read_text()
        return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]

    def session_spec(self) -> JsonObject:
        return {"url": self.engine.base_url(), "server_pid": main_pid(self.engine)}

    @classmethod
    def open_session(cls, spec: JsonMapping) -> QuerySession:
        return VictoriaLogsSession(spec)


ADAPTER = VictoriaLogsAnalytics

__all__ = ["ADAPTER", "VARIANTS", "VictoriaLogsAnalytics"]
