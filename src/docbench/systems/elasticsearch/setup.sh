#!/usr/bin/env bash
# `docbench setup elasticsearch`: Elasticsearch 8.19, through the installer shared with the other
# search engines (systems/searchengine/setup.sh, where what it installs is described).
# DOCBENCH_ELASTICSEARCH_VERSION picks another 8.19.x.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../searchengine/setup.sh" elasticsearch "${DOCBENCH_ELASTICSEARCH_VERSION:-8.19.21}"
