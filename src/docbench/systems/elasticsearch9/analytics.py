"""Elasticsearch 9 in the analytics workload: the elasticsearch system's adapter, index
definition and queries (``systems/elasticsearch/index.json``, ``queries.json``) on the 9.x
node."""

from __future__ import annotations

from docbench.systems.elasticsearch.analytics import VARIANTS, ElasticsearchAnalytics
from docbench.systems.elasticsearch9.engine import Elasticsearch9Engine


class Elasticsearch9Analytics(ElasticsearchAnalytics):
    engine: Elasticsearch9Engine


ADAPTER = Elasticsearch9Analytics

__all__ = ["ADAPTER", "VARIANTS", "Elasticsearch9Analytics"]
