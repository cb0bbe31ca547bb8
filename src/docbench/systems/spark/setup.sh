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

. "$(dirname "${BASH_SOURCE[0]}")/../pyvenv.sh"
docbench_pip_venv spark "$OPT/spark-$VERSION" pyspark pyspark "$VERSION" "about 450 MB"
echo "spark: Spark $VERSION is in $OPT/spark-$VERSION (setup took $(( $(date +%s) - START )) s)"
