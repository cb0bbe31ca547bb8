"""OpenSearch 2.19 in the analytics workload: the opensearch system's adapter, index definition
and queries (``systems/opensearch/index.json``, ``queries.json``) on the 2.19 node."""

from __future__ import annotations

from pathlib import Path

from docbench.systems.opensearch.analytics import VARIANTS, OpenSearchAnalytics
from docbench.systems.opensearch2.engine import OpenSearch2Engine


class OpenSearch2Analytics(OpenSearchAnalytics):
    engine: OpenSearch2Engine

    def folder(self) -> Path:
        """The opensearch folder, whose index.json and queries.json this version shares
        (``system_file`` looks through the engine's bases)."""
        return self.engine.system_file("index.json").parent


ADAPTER = OpenSearch2Analytics

__all__ = ["ADAPTER", "VARIANTS", "OpenSearch2Analytics"]
