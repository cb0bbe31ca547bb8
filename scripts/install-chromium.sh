#!/usr/bin/env bash
# Installs Debian's chromium for the dashboard's browser test (idempotent: nothing to do when
# /usr/bin/chromium exists). Debian packages only; needs root or sudo for apt-get.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "install-chromium.sh: need root (or sudo) to apt-get install chromium" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
test -x /usr/bin/chromium
echo "chromium installed: $(/usr/bin/chromium --version 2>/dev/null || echo unknown version)"
