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
