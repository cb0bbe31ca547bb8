"""OpenSearch in the storage workload: codec default / best_compression, with and without
``_source``, on the analytics adapter's managed node. Everything is shared with
Elasticsearch in :mod:`docbench.systems.searchengine_storage` (mapping, variants, sizes).
"""

from __future__ import annotations

from typing import ClassVar

from docbench.systems.opensearch.adapter import OpenSearch
from docbench.systems.searchengine import SearchEngineSystem
from docbench.systems.searchengine_storage import MATRIX_VARIANTS, SearchEngineStorageTarget

__all__ = ["MATRIX_VARIANTS", "StorageMatrixTarget"]


class StorageMatrixTarget(SearchEngineStorageTarget):
    system_class: ClassVar[type[SearchEngineSystem]] = OpenSearch
