"""OpenSearch 2.19 in the storage workload: the opensearch system's target on the 2.19 node."""

from __future__ import annotations

from docbench.systems.opensearch.storage import VARIANTS, OpenSearchStorage
from docbench.systems.opensearch2.engine import OpenSearch2Engine


class OpenSearch2Storage(OpenSearchStorage):
    engine: OpenSearch2Engine


ADAPTER = OpenSearch2Storage

__all__ = ["ADAPTER", "VARIANTS", "OpenSearch2Storage"]
