"""OpenSearch 2.19 beside OpenSearch 3 (the ``opensearch`` system): the same engine on the
2.19 ``integ-test-zip``, plus the ``lang-painless`` and ``reindex`` modules
``docbench setup opensearch2`` assembles from Maven Central's 2.19 jars (or the user's cluster
via URL). Same index definition, queries and adapters (the opensearch folder's files), so
results compare the two versions on the same data.
"""

from __future__ import annotations

from docbench.systems.opensearch.engine import OpenSearchEngine


class OpenSearch2Engine(OpenSearchEngine):
    name = "opensearch2"
    display_name = "OpenSearch 2"
    url_example = "http://localhost:9200"
    install_hint = "docbench setup opensearch2"
    smoke_tests_only = True
    # 2.x's own launcher: its JVM options need nothing a JDK 17 lacks.
    binary = "opensearch"
    version_prefix = "2.19."
    # 2.x runs on Java 17 and 21 (it needs the security manager, which Java 24 removed).
    java_versions = (17, 21)
    notes = (
        "OpenSearch 2.19 integ-test-zip + lang-painless/reindex modules (used by the updates "
        "workload only; no SQL/PPL plugins), on Java 17: the opensearch system's index, "
        "queries and adapters unchanged."
    )


ENGINE = OpenSearch2Engine

__all__ = ["ENGINE", "OpenSearch2Engine"]
