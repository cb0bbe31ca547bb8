#!/usr/bin/env bash
# Apache Spark for docbench's spark system: a venv at $DOCBENCH_OPT/spark-$VERSION with
# pyspark==$VERSION from PyPI (Spark's jars and its bin/spark-class, spark-submit: the Connect
# server, master and workers docbench starts), and a Java 17 runtime from Debian when the
# machine has no Java 17 or 21. docbench's own environment holds only the Connect client
# (pyspark-client). Idempotent: a venv with the mark this script writes last, whose pyspark is
# $VERSION, is left alone.
#
#   DOCBENCH_OPT      where docbench installs software (docbench setup sets it)
#   DOCBENCH_PYTHON   the Python 3.11+ to make the venv with (default: python3)
set -euo pipefail

VERSION=4.1.3
OPT="${DOCBENCH_OPT:-$PWD/.docbench/opt}"
mkdir -p "$OPT"
OPT="$(cd "$OPT" && pwd)"
DIR="$OPT/spark-$VERSION"
MARK="$DIR/.docbench-installed"
PYTHON="${DOCBENCH_PYTHON:-python3}"
CHECK="import pyspark, sys; sys.exit(pyspark.__version__ != '$VERSION')"
START=$(date +%s)

have_java() {
    for java in /usr/lib/jvm/*/bin/java "${JAVA_HOME:-/nonexistent}/bin/java"; do
        [ -x "$java" ] || continue
        if "$java" -version 2>&1 | grep -Eq 'version "(17|21)[."]'; then
            return 0
        fi
    done
    return 1
}

if ! have_java; then
    echo "spark: no Java 17 or 21 runtime: installing Debian's openjdk-17-jre-headless"
    . "$(dirname "${BASH_SOURCE[0]}")/../apt.sh"
    docbench_apt_install spark openjdk-17-jre-headless
fi

if [ -f "$MARK" ] && "$DIR/bin/python" -I -c "$CHECK" 2>/dev/null; then
    echo "spark: Spark $VERSION already installed in $DIR"
    exit 0
fi
command -v "$PYTHON" >/dev/null || { echo "spark: $PYTHON is needed to make the venv (DOCBENCH_PYTHON)" >&2; exit 1; }
rm -rf "$DIR"
if ! "$PYTHON" -m venv "$DIR" 2>/dev/null; then
    rm -rf "$DIR"
    if [ "$(command -v "$PYTHON")" = /usr/bin/python3 ]; then
        . "$(dirname "${BASH_SOURCE[0]}")/../apt.sh"
        docbench_apt_install spark python3-venv
    fi
    "$PYTHON" -m venv "$DIR" || { echo "spark: $PYTHON -m venv $DIR failed" >&2; exit 1; }
fi
echo "spark: fetching pyspark==$VERSION from PyPI into $DIR (about 450 MB)"
if ! "$DIR/bin/python" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-compile \
        "pyspark==$VERSION"; then
    echo "spark: could not install pyspark==$VERSION into $DIR" >&2
    exit 1
fi
"$DIR/bin/python" -I -c "$CHECK" || { echo "spark: $DIR/bin/python does not import pyspark $VERSION" >&2; exit 1; }
chmod -R a+rX "$DIR"
touch "$MARK"
echo "spark: installed Spark $VERSION in $DIR (setup took $(( $(date +%s) - START )) s)"
