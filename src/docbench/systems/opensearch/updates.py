"""OpenSearch in the updates workload: the shared target of
:mod:`docbench.systems.searchengine.updates` (``_id`` = ycsb_key, keyword ycsb_key, partial
updates by ``_id``, ``_forcemerge?only_expunge_deletes=true``) on the engine's node.

Bulk styles: ``update_by_query`` (painless ``ctx._source[params.field] = params.value``) and
``bulk_partial`` (scroll over the ids, ``_bulk`` update actions with a partial ``doc``). The
integ-test-zip has neither ``lang-painless`` nor ``reindex`` (which serves
``_update_by_query``); ``docbench setup opensearch`` assembles both modules from the 2.19 jars
OpenSearch publishes on Maven Central (``org.opensearch.plugin:lang-painless``,
``org.opensearch.plugin:reindex-client`` and their dependencies). Without them (an older
install, or a server by URL lacking them) only ``bulk_partial`` runs.
"""

from __future__ import annotations

from docbench.contracts.common import Variant
from docbench.systems.searchengine.updates import SearchUpdatesBase, variants

VARIANTS: list[Variant] = variants()


class OpenSearchUpdates(SearchUpdatesBase):
    pass


ADAPTER = OpenSearchUpdates
