"""OpenSearch 2.19 in the analytics workload: the opensearch system's adapter, index definition
and queries (``systems/opensearch/index.json``, ``queries.json``) on the 2.19 node."""

from __future__ import annotations

from docbench.systems.opensearch.analytics import VARIANTS, OpenSearchAnalytics
from docbench.systems.opensearch2.engine import OpenSearch2Engine


class OpenSearch2Analytics(OpenSearchAnalytics):
    engine: OpenSearch2Engine


ADAPTER = OpenSearch2Analytics

__all__ = ["ADAPTER", "VARIANTS", "OpenSearch2Analytics"]
