#!/usr/bin/env bash
# Install Elasticsearch or OpenSearch (the "integ-test-zip" distribution from Maven Central)
# into $DOCBENCH_OPT/<distribution>-VERSION:
#
#     setup.sh elasticsearch|opensearch
#
# `docbench setup elasticsearch` / `docbench setup opensearch` run it through the tiny setup.sh
# of the system's folder. Idempotent: does nothing when the distribution is already there.
# The integ-test-zip has no bundled JDK and only the modules a node needs (no x-pack, no
# security plugin, no painless): docbench runs it with the machine's JDK 17+ (OpenSearch 2.x;
# 3.x would need Java 21) and queries it through the aggregation API.
#
# OpenSearch then gets two modules of the full distribution, for the updates workload's
# _update_by_query: lang-painless (the script) and reindex (the REST action), assembled in
# modules/ from the jars OpenSearch publishes on Maven Central (see install_module below).
# Also idempotent.
#
# Elasticsearch gets neither: painless (and reindex, which serves _update_by_query) cannot be
# added for 8.19 from Maven Central: org.elasticsearch.plugin:lang-painless /
# org.elasticsearch.module:lang-painless are not published, codelibs'
# org.codelibs.elasticsearch.module:lang-painless stops at 7.10.2 and
# org.elasticsearch.plugin:reindex-client at 7.17.29; only the painless SPI jar exists. So the
# updates workload measures Elasticsearch's bulk partial update only
# (systems/elasticsearch/updates.py).

set -euo pipefail

DISTRIBUTION="${1:-}"
case "$DISTRIBUTION" in
    elasticsearch)
        VERSION="${DOCBENCH_ELASTICSEARCH_VERSION:-8.19.21}"
        GROUP="org.elasticsearch.distribution.integ-test-zip"
        ;;
    opensearch)
        VERSION="${DOCBENCH_OPENSEARCH_VERSION:-2.19.6}"
        GROUP="org.opensearch.distribution.integ-test-zip"
        ;;
    *)
        echo "usage: $0 elasticsearch|opensearch" >&2
        exit 2
        ;;
esac
ARTIFACT="$DISTRIBUTION"
OPT="${DOCBENCH_OPT:-.docbench/opt}"
mkdir -p "$OPT"
OPT="$(cd "$OPT" && pwd)"
TARGET="$OPT/$ARTIFACT-$VERSION"

install_distribution() {
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
}

# ----- OpenSearch's modules -------------------------------------------------------------------
# install_module NAME GROUP:ARTIFACT CLASSNAME DESCRIPTION DEPENDENCIES POLICY
# Maven Central has no module zips for 2.19 (org.opensearch.plugin:lang-painless:zip is not
# published), but it has each module's jar and a POM naming its dependencies, so the module
# directory is assembled the way the distribution's build does it: the jar, its runtime
# dependencies minus what lib/ already holds (same release, same file names; duplicates would
# be jar hell), the plugin descriptor and the module's security policy (copied from the
# module's sources: src/main/plugin-metadata/plugin-security.policy).
# DEPENDENCIES is "direct" (lang-painless: its POM excludes every transitive dependency but
# the SPI's, which would drag the whole server in) or "all".
install_module() {
    local name="$1" coordinates="$2" classname="$3" description="$4" deps="$5" policy="$6"
    local dir="$TARGET/modules/$name"
    if [ -f "$dir/plugin-descriptor.properties" ]; then
        echo "module $name already installed in $dir"
        return 0
    fi
    local group="${coordinates%%:*}" artifact="${coordinates##*:}"
    local stage
    stage="$(mktemp -d "$OPT/.module-$name-XXXXXX")"
    echo "fetching $coordinates:$VERSION and its dependencies from Maven Central"
    mvn -q -B dependency:copy "-Dartifact=$group:$artifact:$VERSION:jar" "-DoutputDirectory=$stage/jars" \
        && mvn -q -B dependency:copy "-Dartifact=$group:$artifact:$VERSION:pom" "-DoutputDirectory=$stage" \
        && mvn -q -B -f "$stage/$artifact-$VERSION.pom" dependency:copy-dependencies -DincludeScope=runtime \
            "-DexcludeTransitive=$([ "$deps" = direct ] && echo true || echo false)" \
            "-DoutputDirectory=$stage/jars" \
        || { rm -rf "$stage"; echo "could not fetch module $name" >&2; return 1; }
    for jar in "$stage/jars"/*.jar; do
        if [ -e "$TARGET/lib/$(basename "$jar")" ]; then rm "$jar"; fi
    done
    cat > "$stage/jars/plugin-descriptor.properties" <<DESCRIPTOR
# written by docbench's setup.sh (the distribution's build writes the same keys)
description=$description
version=$VERSION
name=$name
classname=$classname
java.version=11
opensearch.version=$VERSION
custom.foldername=
extended.plugins=
has.native.controller=false
DESCRIPTOR
    printf '%s\n' "$policy" > "$stage/jars/plugin-security.policy"
    rm -rf "$dir"
    mv "$stage/jars" "$dir"
    rm -rf "$stage"
    chmod -R a+rX "$dir"
    echo "installed module $name in $dir"
}

PAINLESS_POLICY='grant {
  // needed to generate runtime classes
  permission java.lang.RuntimePermission "createClassLoader";
  // needed to find the classloader to load whitelisted classes from
  permission java.lang.RuntimePermission "getClassLoader";
};'
REINDEX_POLICY='grant {
  // reindex opens socket connections using the rest client (reindex from remote)
  permission java.net.SocketPermission "*", "connect";
};
grant codeBase "${codebase.opensearch-rest-client}" {
  permission java.net.NetPermission "getProxySelector";
};
grant codeBase "${codebase.httpasyncclient}" {
  permission java.net.NetPermission "getProxySelector";
};'

if [ -x "$TARGET/bin/$ARTIFACT" ] && [ -f "$TARGET/.docbench-installed" ]; then
    echo "$ARTIFACT $VERSION already installed in $TARGET"
else
    install_distribution
fi
if [ "$DISTRIBUTION" = opensearch ]; then
    install_module lang-painless org.opensearch.plugin:lang-painless org.opensearch.painless.PainlessPlugin \
        "An easy, safe and fast scripting language for OpenSearch" direct "$PAINLESS_POLICY"
    install_module reindex org.opensearch.plugin:reindex-client org.opensearch.index.reindex.ReindexPlugin \
        "The Reindex module adds APIs to reindex from one index to another or update documents in place." \
        all "$REINDEX_POLICY"
fi
