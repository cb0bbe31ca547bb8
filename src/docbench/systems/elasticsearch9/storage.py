"""Elasticsearch 9 in the storage workload: the elasticsearch system's target on the 9.x node."""

from __future__ import annotations

from docbench.systems.elasticsearch.storage import VARIANTS, ElasticsearchStorage
from docbench.systems.elasticsearch9.engine import Elasticsearch9Engine


class Elasticsearch9Storage(ElasticsearchStorage):
    engine: Elasticsearch9Engine


ADAPTER = Elasticsearch9Storage

__all__ = ["ADAPTER", "VARIANTS", "Elasticsearch9Storage"]
