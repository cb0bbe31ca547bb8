#!/usr/bin/env bash
# FerretDB 2 on DocumentDB for docbench. Idempotent: each step checks its own result.
#   1. DocumentDB (Debian sid's postgresql-18-documentdb) in the postgresql18 system's chroot
#      ($DOCBENCH_OPT/sid, made by that system's setup.sh with debootstrap);
#   2. FerretDB from the Go module proxy into $DOCBENCH_OPT/bin/ferretdb2 (needs Go >= 1.25).
#
#   DOCBENCH_OPT       where docbench installs software (docbench setup sets it)
#   FERRETDB_VERSION   the module version to build (default v2.7.0)
set -euo pipefail

VERSION="${FERRETDB_VERSION:-v2.7.0}"
OPT="${DOCBENCH_OPT:-$PWD/.docbench/opt}"
BIN="$OPT/bin/ferretdb2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
START=$(date +%s)

bash "$HERE/../postgresql18/setup.sh" postgresql-18-documentdb

if [[ -x "$BIN" ]] && "$BIN" --version 2>/dev/null | grep -q "version: $VERSION\$"; then
    echo "ferretdb: $VERSION already built at $BIN"
else
    if ! command -v go >/dev/null 2>&1; then
        for candidate in /usr/local/go/bin /usr/lib/go/bin; do
            [[ -x "$candidate/go" ]] && PATH="$candidate:$PATH"
        done
    fi
    command -v go >/dev/null 2>&1 || { echo "ferretdb: Go >= 1.25 is required (https://go.dev/dl/)" >&2; exit 1; }
    echo "ferretdb: building FerretDB $VERSION from the Go module proxy (about 2 min)"
    TMP="$(mktemp -d)"
    trap 'rm -rf "$TMP"' EXIT
    GOBIN="$TMP" GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-trimpath \
        go install "github.com/FerretDB/FerretDB/v2/cmd/ferretdb@$VERSION"
    mkdir -p "$OPT/bin"
    mv "$TMP/ferretdb" "$BIN.new"
    mv "$BIN.new" "$BIN"
fi
echo "ferretdb: $("$BIN" --version | head -1) at $BIN, DocumentDB in $OPT/sid" \
     "(setup took $(( $(date +%s) - START )) s)"
