"""OpenSearch adapter against a real node started by the test (installed by `docbench setup`).

The cases are shared with Elasticsearch: see tests/test_system_elasticsearch.py.
"""

from __future__ import annotations

from test_system_elasticsearch import SearchEngineSuite


class TestOpenSearch(SearchEngineSuite):
    system_name = "opensearch"
