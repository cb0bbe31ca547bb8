"""Elasticsearch 9 in the updates workload: the elasticsearch system's target on the 9.x node
(``bulk_partial`` only: the integ-test-zip has neither lang-painless nor reindex, and Maven
Central has neither for 9.x; see ``systems/elasticsearch/updates.py``)."""

from __future__ import annotations

from docbench.systems.elasticsearch.updates import VARIANTS, ElasticsearchUpdates
from docbench.systems.elasticsearch9.engine import Elasticsearch9Engine


class Elasticsearch9Updates(ElasticsearchUpdates):
    engine: Elasticsearch9Engine


ADAPTER = Elasticsearch9Updates

__all__ = ["ADAPTER", "VARIANTS", "Elasticsearch9Updates"]
