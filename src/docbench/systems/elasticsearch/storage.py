"""Elasticsearch in the storage workload: codec default / best_compression, with and without
``_source``, on the engine's node. Everything is shared with OpenSearch in
:mod:`docbench.systems.searchengine.storage` (mapping, variants, sizes).
"""

from __future__ import annotations

from docbench.contracts.common import Variant
from docbench.systems.searchengine.storage import SearchStorageBase, variants

VARIANTS: list[Variant] = variants()


class ElasticsearchStorage(SearchStorageBase):
    pass


ADAPTER = ElasticsearchStorage
