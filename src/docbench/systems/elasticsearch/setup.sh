#!/usr/bin/env bash
# Install Elasticsearch (the "integ-test-zip" distribution from Maven Central) into
# $DOCBENCH_OPT/elasticsearch-VERSION. Idempotent: does nothing when it is already there.
# The integ-test-zip has no bundled JDK and only the modules a node needs (no x-pack,
# no painless): docbench runs it with the machine's JDK 17+
# and queries it through the aggregation API.
# Painless (and reindex, which serves _update_by_query) cannot be added for 8.19 from Maven
# Central: org.elasticsearch.plugin:lang-painless / org.elasticsearch.module:lang-painless are
# not published, codelibs' org.codelibs.elasticsearch.module:lang-painless stops at 7.10.2 and
# org.elasticsearch.plugin:reindex-client at 7.17.29; only the painless SPI jar exists. So the
# updates workload measures Elasticsearch's bulk partial update only (systems/elasticsearch/updates.py).

set -euo pipefail

VERSION="${DOCBENCH_ELASTICSEARCH_VERSION:-8.19.21}"
GROUP="org.elasticsearch.distribution.integ-test-zip"
ARTIFACT="elasticsearch"
OPT="${DOCBENCH_OPT:-.docbench/opt}"
mkdir -p "$OPT"
OPT="$(cd "$OPT" && pwd)"
TARGET="$OPT/$ARTIFACT-$VERSION"

if [ -x "$TARGET/bin/$ARTIFACT" ] && [ -f "$TARGET/.docbench-installed" ]; then
    echo "$ARTIFACT $VERSION already installed in $TARGET"
    exit 0
fi

command -v mvn >/dev/null || { echo "mvn (Maven) is needed: apt-get install maven" >&2; exit 1; }
command -v unzip >/dev/null || command -v python3 >/dev/null \
    || { echo "unzip or python3 is needed" >&2; exit 1; }

DOWNLOAD="$OPT/.download"
mkdir -p "$DOWNLOAD"
ZIP="$DOWNLOAD/$ARTIFACT-$VERSION.zip"
if [ ! -s "$ZIP" ]; then
    echo "fetching $GROUP:$ARTIFACT:$VERSION:zip from Maven Central"
    mvn -q -B dependency:copy "-Dartifact=$GROUP:$ARTIFACT:$VERSION:zip" \
        "-DoutputDirectory=$DOWNLOAD" -Dmdep.overWriteReleases=true
fi

STAGE="$(mktemp -d "$OPT/.unzip-$ARTIFACT-XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
if command -v unzip >/dev/null; then
    unzip -q "$ZIP" -d "$STAGE"
else
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$ZIP" "$STAGE"
fi
chmod +x "$STAGE/$ARTIFACT-$VERSION/bin/"* 2>/dev/null || true
rm -rf "$TARGET"
mv "$STAGE/$ARTIFACT-$VERSION" "$TARGET"
# Readable by everyone: the server runs as an unprivileged user when docbench is root.
chmod -R a+rX "$TARGET"
touch "$TARGET/.docbench-installed"
rm -f "$ZIP"
echo "installed $ARTIFACT $VERSION in $TARGET"
