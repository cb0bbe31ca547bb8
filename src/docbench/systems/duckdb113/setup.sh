#!/usr/bin/env bash
# DuckDB 1.1.3 for docbench's duckdb113 system: a venv at $DOCBENCH_OPT/duckdb-1.1.3 with
# duckdb==1.1.3 from PyPI, the version JSONBench's published DuckDB figures were measured with.
# docbench runs it in a worker process with that venv's Python (worker.py): docbench's own
# environment keeps the current DuckDB. Idempotent: a venv that imports duckdb 1.1.3 and has the
# mark this script writes last is left alone; anything else there is made again.
#
#   DOCBENCH_OPT      where docbench installs software (docbench setup sets it)
#   DOCBENCH_PYTHON   the Python 3.11+ to make the venv with (default: python3)
set -euo pipefail

VERSION=1.1.3
OPT="${DOCBENCH_OPT:-$PWD/.docbench/opt}"
mkdir -p "$OPT"
OPT="$(cd "$OPT" && pwd)"
DIR="$OPT/duckdb-$VERSION"
MARK="$DIR/.docbench-installed"
PYTHON="${DOCBENCH_PYTHON:-python3}"
CHECK="import duckdb, sys; sys.exit(duckdb.__version__ != '$VERSION')"

if [ -f "$MARK" ] && "$DIR/bin/python" -I -c "$CHECK" 2>/dev/null; then
    echo "duckdb113: DuckDB $VERSION already installed in $DIR"
    exit 0
fi
command -v "$PYTHON" >/dev/null || { echo "duckdb113: $PYTHON is needed to make the venv (DOCBENCH_PYTHON)" >&2; exit 1; }

rm -rf "$DIR"
if ! "$PYTHON" -m venv "$DIR" 2>/dev/null; then
    # Debian's own python3 makes venvs only with its python3-venv package.
    rm -rf "$DIR"
    if [ "$(command -v "$PYTHON")" = /usr/bin/python3 ]; then
        . "$(dirname "${BASH_SOURCE[0]}")/../apt.sh"
        docbench_apt_install duckdb113 python3-venv
    fi
    "$PYTHON" -m venv "$DIR" || { echo "duckdb113: $PYTHON -m venv $DIR failed" >&2; exit 1; }
fi
echo "duckdb113: fetching duckdb==$VERSION from PyPI into $DIR"
if ! "$DIR/bin/python" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-compile \
        "duckdb==$VERSION"; then
    echo "duckdb113: could not install duckdb==$VERSION into $DIR" >&2
    exit 1
fi
"$DIR/bin/python" -I -c "$CHECK" || { echo "duckdb113: $DIR/bin/python does not import duckdb $VERSION" >&2; exit 1; }
chmod -R a+rX "$DIR"
touch "$MARK"
echo "duckdb113: installed DuckDB $VERSION in $DIR"
