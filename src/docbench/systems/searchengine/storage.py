"""Elasticsearch and OpenSearch in the storage workload (what their ``storage.py`` modules
share; each of those only names its variants and subclasses :class:`SearchStorageBase`).

Index ``storage_matrix``: one shard, no replica, the variant's ``index.codec`` and
``_source``, ``dynamic: strict`` and an explicit mapping of the two fields:

* ``key``     -- ``keyword`` (a lookup by key works; it has doc values, so it stays
  retrievable without ``_source``). The document ``_id`` is the engine's auto-generated one,
  as for documents loaded without ids (the analytics load does the same): the fast append-only
  path of ``_bulk``, and the key is stored as offered, like the other systems' documents.
* ``payload`` -- ``text`` with the standard analyzer: what a user storing documents gets
  (dynamic mapping makes a long string ``text``; its ``.keyword`` sub-field has
  ``ignore_above: 256`` and holds nothing at these sizes). So the size includes an inverted
  index of the payload's words with positions and norms -- a search engine's reason to be --
  beside the stored ``_source``. Not ``keyword``: one term per value, and Lucene refuses a
  term over 32766 bytes (the document would be refused) -- and nobody searches a 30 kB
  string by exact value. Not ``index: false``: without ``_source`` nothing would be left.

Variants (the analytics variants' names): ``index.codec`` ``default`` (LZ4 on stored fields)
or ``best_compression`` (zstd in Elasticsearch 8.19, DEFLATE in OpenSearch 2.19), with
``_source`` kept or disabled. The codec compresses stored fields only (``_source``, ``_id``),
in blocks of several documents; the inverted index has its own encodings whatever the codec.
Without ``_source`` the documents can no longer be retrieved: a search finds them and returns
the key (doc values), never the payload text.

Inserts: ``_bulk`` through the analytics loader,
:class:`~docbench.systems.searchengine.loader.BulkLoader` (all or nothing per batch; a refused
document -> ``BatchRejected`` with the engine's message). finish(): what the analytics
``finish_load()`` does (refresh back on, force-merge to one segment, refresh), so the sizes
are final.

Without ``_source`` both engines still store each document whole, in ``_recovery_source``
(for operation-based recovery of replicas), until the shard's retention lease has moved past
it; only a merge after that drops it, and a force-merge of an index that is already one
segment does nothing (elastic/elasticsearch#41628, #82595). Measured as is, ``no_source``
would weigh as much as ``default``. So for those variants finish() first re-indexes the last
document as it is (its old version is now a deletion in the first segment, the new one a
second segment), flushes, waits until the retention lease has passed every operation (the
engines renew it every 30 s; the wait counts in the finish time, not the insert time), and
only then force-merges: the merge drops every ``_recovery_source`` and the old version. The
detail says what happened (``recovery_source``).

Sizes: as the analytics ``storage()``
(:func:`~docbench.systems.searchengine.sizes.index_storage`): the index's primary store size
from ``_stats`` (every Lucene file: stored fields, terms, postings, positions, norms, doc
values, points), split into data (stored fields: ``_source``, ``_id``) and index by
Elasticsearch's ``_disk_usage`` API or, in OpenSearch, by the Lucene files' extensions;
``on_disk`` = the node's data directory (the index plus its translog and the cluster state) as
the cross-check.
"""

from __future__ import annotations

import contextlib
from urllib.parse import quote

from docbench.contracts.common import StorageSize, Variant
from docbench.contracts.storage import TABLE, StorageMatrixTarget
from docbench.contracts.storage_documents import document_json
from docbench.core.jsontypes import JsonObject, as_str
from docbench.systems.searchengine import index as search_index
from docbench.systems.searchengine.engine import SearchEngineBase
from docbench.systems.searchengine.http import BULK_TIMEOUT, member_array, objects
from docbench.systems.searchengine.leases import LEASE_TIMEOUT, wait_for_retention_leases
from docbench.systems.searchengine.loader import BulkLoader
from docbench.systems.searchengine.sizes import index_storage

_PATH = search_index.index_path(TABLE)

_NO_SOURCE = (
    "_source disabled: the documents cannot be retrieved any more (a search returns "
    "the key from its doc values, never the payload, kept only as indexed words)"
)


def variants() -> list[Variant]:
    return [
        Variant(
            "default",
            "payload text-indexed, _source kept, codec default (LZ4)",
            role="default",
            settings={"source": True, "codec": "default"},
        ),
        Variant(
            "best_compression",
            "payload text-indexed, _source kept, codec best_compression",
            role="best",
            settings={"source": True, "codec": "best_compression"},
        ),
        Variant(
            "no_source",
            f"payload text-indexed, {_NO_SOURCE}, codec default",
            role="alt",
            settings={"source": False, "codec": "default", "retains_structure": False},
        ),
        Variant(
            "no_source_best_compression",
            f"payload text-indexed, {_NO_SOURCE}, codec best_compression",
            role="alt",
            settings={"source": False, "codec": "best_compression", "retains_structure": False},
        ),
    ]


def index_definition(variant: Variant) -> JsonObject:
    return {
        "settings": {
            "index": {
                "number_of_shards": 1,
                "number_of_replicas": 0,
                "codec": variant.settings["codec"],
                # Refreshed once in finish(), as the analytics load (a refresh per second would
                # only make small segments to merge).
                "refresh_interval": "-1",
            }
        },
        "mappings": {
            "_source": {"enabled": bool(variant.settings["source"])},
            "dynamic": "strict",
            "properties": {"key": {"type": "keyword"}, "payload": {"type": "text"}},
        },
    }


class SearchStorageBase(StorageMatrixTarget):
    """The storage target on the engine's node (managed, or the user's by URL): the index
    ``storage_matrix``, loaded, merged and measured as the analytics index is."""

    engine: SearchEngineBase

    def __init__(self, engine: SearchEngineBase, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.loader: BulkLoader | None = None
        # The last document the index took (re-indexed to prune _recovery_source).
        self.last_row: tuple[str, str] | None = None
        self.recovery_source: JsonObject | None = None

    # ----- lifecycle -----------------------------------------------------------------------
    def stop(self) -> None:
        self._close_loader()
        super().stop()

    def _close_loader(self) -> None:
        if self.loader is not None:
            with contextlib.suppress(Exception):
                self.loader.close()
            self.loader = None

    # ----- the index -----------------------------------------------------------------------
    def create(self) -> None:
        self._close_loader()
        self.last_row = self.recovery_source = None
        self.engine.create_index(TABLE, index_definition(self.variant))

    def insert(self, rows: list[tuple[str, str]]) -> None:
        if self.loader is None:
            self.loader = BulkLoader(self.engine.connect(BULK_TIMEOUT), TABLE)
        self.loader.load_batch([document_json(key, payload).encode() for key, payload in rows])
        if rows:
            self.last_row = rows[-1]

    def count(self) -> int:
        return search_index.count(self.engine.client(), TABLE)

    def finish(self) -> None:
        self._close_loader()
        if not self.variant.settings["source"]:
            self.recovery_source = self._prepare_recovery_source_pruning()
        search_index.merge_to_one_segment(self.engine, TABLE)

    def sizes(self) -> StorageSize:
        storage = index_storage(
            self.engine,
            TABLE,
            {"codec": self.variant.settings.get("codec"), "source": self.variant.settings.get("source")},
        )
        detail = dict(storage.detail)
        detail.update(
            {"table": storage.data, "index": storage.index, "payload_mapping": "text (standard analyzer)"}
        )
        if self.recovery_source is not None:
            detail["recovery_source"] = self.recovery_source
        return StorageSize(
            total=storage.total,
            data=storage.data,
            index=storage.index,
            on_disk=storage.on_disk,
            detail=detail,
        )

    # ----- _recovery_source (see the module docstring) -------------------------------------
    def _prepare_recovery_source_pruning(self) -> JsonObject:
        """Make the force-merge of finish() drop _recovery_source: a second segment and a
        deletion to merge, a commit, and the retention lease past every operation."""
        client = self.engine.client()
        search_index.refresh(client, TABLE)
        if not self._reindex_last_document():
            return {"pruned": False, "reason": "no document to re-index"}
        client.request("POST", f"{_PATH}/_flush")
        waited = wait_for_retention_leases(client, TABLE, LEASE_TIMEOUT)
        if waited is None:
            return {"pruned": False, "reason": f"the retention lease did not move in {LEASE_TIMEOUT:.0f} s"}
        return {"pruned": True, "lease_wait_seconds": round(waited, 1)}

    def _reindex_last_document(self) -> bool:
        if self.last_row is None:
            return False
        key, payload = self.last_row
        client = self.engine.client()
        answer = client.request(
            "POST", f"{_PATH}/_search", {"query": {"term": {"key": key}}, "size": 1, "_source": False}
        )
        hits = objects(member_array(answer, "hits", "hits"), "hits")
        if not hits:
            return False
        client.request(
            "PUT",
            f"{_PATH}/_doc/{quote(as_str(hits[0]['_id'], '_id'), safe='')}?refresh=true",
            document_json(key, payload).encode(),
            what="re-index a document",
        )
        return True
