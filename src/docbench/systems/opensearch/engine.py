"""OpenSearch 2.19: a managed single node from the ``integ-test-zip`` distribution, plus the
``lang-painless`` and ``reindex`` modules ``docbench setup opensearch`` adds (or the user's
cluster via URL).

Everything but the names and a few node settings is shared with Elasticsearch in
:mod:`docbench.systems.searchengine`; the index definition (``index.json``) and the five
aggregation requests (``queries.json``) are plain files next to this module.
"""

from __future__ import annotations

from typing import Any, ClassVar

from docbench.systems.searchengine.engine import SearchEngineBase


class OpenSearchEngine(SearchEngineBase):
    name = "opensearch"
    display_name = "OpenSearch"
    url_example = "http://localhost:9200"
    install_hint = "docbench setup opensearch"
    artifact = "opensearch"
    binary = "opensearch"
    version_prefix = "2.19."
    config_file = "opensearch.yml"
    java_opts_env = "OPENSEARCH_JAVA_OPTS"
    java_home_env = "OPENSEARCH_JAVA_HOME"
    path_conf_env = "OPENSEARCH_PATH_CONF"
    tmpdir_env = "OPENSEARCH_TMPDIR"
    # 2.x runs on Java 17 and 21 (it needs the security manager, which Java 24 removed).
    java_versions = (17, 21)
    distribution = "opensearch"
    # The integ-test-zip has no security plugin: plain HTTP on 127.0.0.1.
    server_settings: ClassVar[dict[str, Any]] = {}
    notes = ("OpenSearch 2.19 integ-test-zip + lang-painless/reindex modules (used by the updates "
             "workload only; no SQL/PPL plugins): aggregation API; "
             "keyword mapping, index sorted on the five paths, force-merged to one segment; Q2 "
             "exact by composite paging (the cardinality form recorded beside it); time_us a "
             "long (µs).")


ENGINE = OpenSearchEngine
