#!/usr/bin/env bash
# `docbench setup opensearch`: the installer shared with the other search engine
# (systems/searchengine/setup.sh, where what it installs is described), for opensearch.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../searchengine/setup.sh" opensearch "$@"
