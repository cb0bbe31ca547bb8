"""OpenSearch adapter against a real node started by the test (installed by `docbench setup`):
OpenSearch 3 (the opensearch system) with every case, OpenSearch 2.19 (opensearch2) with the
smoke cases.

The cases are shared with Elasticsearch: see tests/test_system_elasticsearch.py.
"""

from __future__ import annotations

from test_system_elasticsearch import SearchEngineSmoke, SearchEngineSuite


class TestOpenSearch(SearchEngineSuite):
    system_name = "opensearch"
    update_by_query = True


class TestOpenSearch2(SearchEngineSmoke):
    system_name = "opensearch2"
    update_by_query = True


# ----- the storage workload (moved from tests/test_storage_workload.py) -----------------------


def test_search_engine_cells() -> None:
    """test_storage_workload.search_engine_cells on an OpenSearch node."""
    from test_storage_workload import search_engine_cells

    search_engine_cells("opensearch")


# ----- the updates workload (from tests/test_updates_workload.py: its run reads these) --------

# One HTTP request per operation to a JVM on 2 cores: 200 keep them at a few seconds.
UPDATES_OPS = 200
UPDATES_STYLES = {"update_by_query", "bulk_partial"}  # the bulk styles it must run (more may)
