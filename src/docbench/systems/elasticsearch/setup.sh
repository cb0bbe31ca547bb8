#!/usr/bin/env bash
# `docbench setup elasticsearch`: the installer shared with the other search engine
# (systems/searchengine/setup.sh, where what it installs is described), for elasticsearch.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../searchengine/setup.sh" elasticsearch "$@"
