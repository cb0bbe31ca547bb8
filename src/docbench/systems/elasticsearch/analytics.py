"""Elasticsearch in the analytics workload: one index with one shard, loaded through
``_bulk``, force-merged to one segment, queried with the aggregation requests of
``queries.json``. Everything is shared with OpenSearch in
:mod:`docbench.systems.searchengine.analytics`; ``index.json`` and ``queries.json`` are next
to this module.
"""

from __future__ import annotations

from docbench.contracts.common import Variant
from docbench.systems.searchengine.analytics import SearchAnalyticsBase, jsonbench_variants, variants

# JSONBench ran Elasticsearch: its configuration is a variant here (not OpenSearch's).
VARIANTS: list[Variant] = variants() + jsonbench_variants()


class ElasticsearchAnalytics(SearchAnalyticsBase):
    variants = VARIANTS


ADAPTER = ElasticsearchAnalytics
