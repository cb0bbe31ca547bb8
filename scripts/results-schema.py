#!/usr/bin/env python3
"""Write each workload's JSON Schema from its result model (src/docbench/results/models) into
src/docbench/results/schema/<workload>.schema.json; with --check, exit 1 naming each file that
differs from what the models give (CI runs the check through tests/test_result_models.py)."""

from __future__ import annotations

import argparse
import sys

from docbench.results.models import RESULT_MODELS, model_schema
from docbench.results.schema import schema_path, schema_text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify instead of writing")
    args = parser.parse_args()
    stale = []
    for workload in RESULT_MODELS:
        path = schema_path(workload)
        text = schema_text(model_schema(workload))
        if path.exists() and path.read_text() == text:
            continue
        stale.append(path)
        if not args.check:
            path.write_text(text)
    for path in stale:
        print(f"{path}: {'differs from its model' if args.check else 'written'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
