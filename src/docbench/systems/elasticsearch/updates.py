"""Elasticsearch in the updates workload: the shared target of
:mod:`docbench.systems.searchengine.updates` (``_id`` = ycsb_key, keyword ycsb_key, partial
updates by ``_id``, ``_forcemerge?only_expunge_deletes=true``) on the engine's node.

Bulk style: ``bulk_partial`` only (scroll over the ids, ``_bulk`` update actions with a
partial ``doc``). ``_update_by_query`` is not measured on the managed node: the 8.19
integ-test-zip has neither the ``reindex`` module (which serves ``_update_by_query``) nor
``lang-painless`` (its script), and neither can be had from Maven Central for 8.19 --
``org.elasticsearch.plugin:lang-painless`` and ``org.elasticsearch.module:lang-painless`` are
not published at all, codelibs' republication ``org.codelibs.elasticsearch.module:lang-painless``
stops at 7.10.2, ``org.elasticsearch.plugin:reindex-client`` at 7.17.29; only the painless
SPI jar (``elasticsearch-scripting-painless-spi``) exists for 8.19, without the language. A
user's full Elasticsearch (``--elasticsearch-url``) has both modules, and the target then
offers ``update_by_query`` too (it asks the node for its modules).
"""

from __future__ import annotations

from docbench.contracts.common import Variant
from docbench.systems.searchengine.updates import SearchUpdatesBase, variants

VARIANTS: list[Variant] = variants()


class ElasticsearchUpdates(SearchUpdatesBase):
    pass


ADAPTER = ElasticsearchUpdates
