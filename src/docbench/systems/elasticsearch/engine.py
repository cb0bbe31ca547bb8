"""Elasticsearch 8.19: a managed single node from the ``integ-test-zip`` distribution (or the
user's cluster via URL).

Everything but the names and a few node settings is shared with OpenSearch in
:mod:`docbench.systems.searchengine`; the index definition (``index.json``) and the five
aggregation requests (``queries.json``) are plain files next to this module.
"""

from __future__ import annotations

from typing import ClassVar

from docbench.core.jsontypes import JsonObject
from docbench.systems.searchengine.engine import SearchEngineBase


class ElasticsearchEngine(SearchEngineBase):
    name = "elasticsearch"
    display_name = "Elasticsearch"
    url_example = "http://localhost:9200"
    install_hint = "docbench setup elasticsearch"
    artifact = "elasticsearch"
    binary = "elasticsearch"
    version_prefix = "8.19."
    config_file = "elasticsearch.yml"
    java_opts_env = "ES_JAVA_OPTS"
    launcher_java_opts_env = "CLI_JAVA_OPTS"
    java_home_env = "ES_JAVA_HOME"
    path_conf_env = "ES_PATH_CONF"
    tmpdir_env = "ES_TMPDIR"
    # 8.19 runs on Java 17 (the machine's JDK) and 21.
    java_versions = (17, 21)
    distribution = None
    server_settings: ClassVar[JsonObject] = {
        # Loopback-only test node: no TLS, no users (the x-pack-security module is present).
        "xpack.security.enabled": False,
    }
    notes = (
        "Elasticsearch 8.19 integ-test-zip (no painless, no ES|QL): aggregation API; keyword "
        "mapping, index sorted on the five paths, force-merged to one segment; Q2 exact by "
        "composite paging (the cardinality form recorded beside it); time_us a long (µs)."
    )


ENGINE = ElasticsearchEngine
