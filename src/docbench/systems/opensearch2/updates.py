"""OpenSearch 2.19 in the updates workload: the opensearch system's target on the 2.19 node,
``update_by_query`` through the lang-painless and reindex modules ``docbench setup opensearch2``
assembles from Maven Central's 2.19 jars, and ``bulk_partial``."""

from __future__ import annotations

from docbench.systems.opensearch.updates import VARIANTS, OpenSearchUpdates
from docbench.systems.opensearch2.engine import OpenSearch2Engine


class OpenSearch2Updates(OpenSearchUpdates):
    engine: OpenSearch2Engine


ADAPTER = OpenSearch2Updates

__all__ = ["ADAPTER", "VARIANTS", "OpenSearch2Updates"]
