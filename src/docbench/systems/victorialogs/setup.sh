#!/usr/bin/env bash
# VictoriaLogs for docbench: builds the single-node server from the Go module proxy into
# $DOCBENCH_OPT/victorialogs-$VERSION/bin/victoria-logs. Idempotent: nothing is done when that
# binary is there and says it is $VERSION. Go's own caches (GOPATH, GOCACHE, GOMODCACHE) live
# under $DOCBENCH_OPT/go, so nothing lands in $HOME; one compile job at a time (-p 1).
#
#   DOCBENCH_OPT           where docbench installs software (docbench setup sets it)
#   VICTORIALOGS_VERSION   the module version to build (default v1.52.1)
set -euo pipefail

VERSION="${VICTORIALOGS_VERSION:-v1.52.1}"
OPT="${DOCBENCH_OPT:-$PWD/.docbench/opt}"
DIR="$OPT/victorialogs-${VERSION#v}"
BIN="$DIR/bin/victoria-logs"
START=$(date +%s)

if [[ -x "$BIN" ]] && "$BIN" -version 2>/dev/null | grep -q -- "-tags-${VERSION}\$"; then
    echo "victorialogs: $VERSION already built at $BIN"
    exit 0
fi
if ! command -v go >/dev/null 2>&1; then
    for candidate in /usr/local/go/bin /usr/lib/go/bin; do
        [[ -x "$candidate/go" ]] && PATH="$candidate:$PATH"
    done
fi
command -v go >/dev/null 2>&1 || { echo "victorialogs: Go >= 1.25 is required (https://go.dev/dl/)" >&2; exit 1; }
echo "victorialogs: building VictoriaLogs $VERSION from the Go module proxy (about 2 min)"
mkdir -p "$DIR/bin" "$OPT/go"
TMP="$(mktemp -d "$DIR/build.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
# The version the binary prints (-version) and reports (/metrics) is set as VictoriaMetrics'
# Makefile sets it (…-tags-vX.Y.Z), so its short form is the module version.
GOPATH="$OPT/go" GOCACHE="$OPT/go/cache" GOMODCACHE="$OPT/go/pkg/mod" GOBIN="$TMP" \
    GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-trimpath -p=1" \
    go install -ldflags "-X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-logs-docbench-tags-${VERSION}" \
    "github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs@$VERSION"
mv "$TMP/victoria-logs" "$BIN.new"
mv "$BIN.new" "$BIN"
echo "victorialogs: $("$BIN" -version | head -1) at $BIN (setup took $(( $(date +%s) - START )) s)"
