#!/usr/bin/env bash
# `docbench setup opensearch2`: OpenSearch 2.19, through the installer shared with the other
# search engines (systems/searchengine/setup.sh: the distribution, then the lang-painless and
# reindex modules it assembles from Maven Central's 2.19 jars). DOCBENCH_OPENSEARCH2_VERSION picks
# another 2.19.x.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../searchengine/setup.sh" opensearch "${DOCBENCH_OPENSEARCH2_VERSION:-2.19.6}"
