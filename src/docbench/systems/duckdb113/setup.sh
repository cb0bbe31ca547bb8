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
. "$(dirname "${BASH_SOURCE[0]}")/../pyvenv.sh"
docbench_pip_venv duckdb113 "$OPT/duckdb-$VERSION" duckdb duckdb "$VERSION"
echo "duckdb113: DuckDB $VERSION is in $OPT/duckdb-$VERSION"
