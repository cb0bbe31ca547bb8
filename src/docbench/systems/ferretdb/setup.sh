#!/usr/bin/env bash
# Build FerretDB v1 from source (Go module proxy) into $DOCBENCH_OPT/bin/ferretdb. Idempotent:
# does nothing when that binary already reports the pinned version.
#
#   DOCBENCH_OPT       where docbench installs software (docbench setup sets it)
#   FERRETDB_VERSION   the module version to build (default v1.24.0)
set -euo pipefail

VERSION="${FERRETDB_VERSION:-v1.24.0}"
MODULE="github.com/FerretDB/FerretDB"
OPT="${DOCBENCH_OPT:-$PWD/.docbench/opt}"
BIN="$OPT/bin/ferretdb"
SRC="$OPT/src/ferretdb"

if [[ -x "$BIN" ]] && "$BIN" --version 2>/dev/null | grep -q "version: $VERSION\$"; then
    echo "ferretdb $VERSION already built at $BIN"
    exit 0
fi

if ! command -v go >/dev/null 2>&1; then
    echo "Go is required to build FerretDB (https://go.dev/dl/); install it and retry" >&2
    exit 1
fi

mkdir -p "$OPT/bin" "$OPT/src"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# 1. Fetch the module source through the Go module proxy (a throwaway module to run it in).
( cd "$TMP" && go mod init docbench.local/fetch-ferretdb >/dev/null 2>&1 \
    && go mod download -json "$MODULE@$VERSION" > "$TMP/download.json" )
DIR="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' "$TMP/download.json")"
HASH="$(sed -n 's/^[[:space:]]*"Hash": "\(.*\)",*$/\1/p' "$TMP/download.json")"
if [[ -z "$DIR" || ! -d "$DIR" ]]; then
    echo "go mod download did not report the module directory:" >&2
    cat "$TMP/download.json" >&2
    exit 1
fi

# 2. A writable copy of the source (the module cache is read-only).
rm -rf "$SRC.new"
cp -r "$DIR" "$SRC.new"
chmod -R u+w "$SRC.new"

# 3. build/version embeds *.txt: version.txt must look like `git describe` (v<major>.<minor>.<patch>);
#    commit.txt is the tag's commit (the build has no VCS information: -buildvcs=false).
printf '%s\n' "$VERSION" > "$SRC.new/build/version/version.txt"
if [[ -n "$HASH" ]]; then printf '%s\n' "$HASH" > "$SRC.new/build/version/commit.txt"; fi
printf '%s\n' "$VERSION" > "$SRC.new/build/version/branch.txt"
printf 'docbench-source-build\n' > "$SRC.new/build/version/package.txt"
rm -rf "$SRC"
mv "$SRC.new" "$SRC"

# 4. Build (dependencies come from the module proxy; go.sum pins them).
echo "building ferretdb $VERSION in $SRC (a few minutes on 2 cores)"
START=$(date +%s)
( cd "$SRC" && GOFLAGS=-buildvcs=false GOTOOLCHAIN=local go build -trimpath -o "$BIN.new" ./cmd/ferretdb )
mv "$BIN.new" "$BIN"
echo "built $BIN in $(( $(date +%s) - START )) s: $("$BIN" --version | tr '\n' ' ')"
