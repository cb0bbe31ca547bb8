#!/usr/bin/env python3
"""Regenerate docbench's copy of JSONBench's published results from a JSONBench checkout.

    scripts/update-jsonbench-published.py /path/to/JSONBench [--rev HEAD]

The checkout may be a clone or a bare repository: every file is read from git at the given
revision (``git show REV:<path>``), never from a work tree, so what is shipped is exactly what
that commit published. Every ``<system>/results/*.json`` is taken (every system, machine and
scale, the ``_files_*`` size references too) and written, sorted by path, to
``src/docbench/report/published/jsonbench.json``:

    {"source": "https://github.com/ClickHouse/JSONBench", "commit": <sha>, "commit_date": <ISO>,
     "extracted": <ISO>, "results": [{"path": "<system>/results/<file>", ...the file...}]}

``docbench compare --against jsonbench`` reads that file (``docbench.report.compare.published``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SOURCE = "https://github.com/ClickHouse/JSONBench"
OUT = Path(__file__).resolve().parents[1] / "src" / "docbench" / "report" / "published" / "jsonbench.json"


def git(checkout: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(checkout), *args], check=True, capture_output=True, text=True
    ).stdout


def is_result_file(path: str) -> bool:
    """``<system>/results/<file>.json`` (not the plans, index usage or query results below it)."""
    parts = path.split("/")
    return len(parts) == 3 and parts[1] == "results" and parts[2].endswith(".json")


def published(checkout: Path, rev: str) -> dict[str, Any]:
    commit = git(checkout, "rev-parse", f"{rev}^{{commit}}").strip()
    commit_date = git(checkout, "show", "-s", "--format=%cI", commit).strip()
    entries = []
    for path in sorted(p for p in git(checkout, "ls-tree", "-r", "--name-only", commit).splitlines()):
        if not is_result_file(path):
            continue
        try:
            content = json.loads(git(checkout, "show", f"{commit}:{path}"))
        except json.JSONDecodeError as error:
            print(f"skipped {path}: not JSON ({error})", file=sys.stderr)
            continue
        if not isinstance(content, dict):
            print(f"skipped {path}: not a JSON object", file=sys.stderr)
            continue
        entries.append({"path": path, **content})
    return {
        "source": SOURCE,
        "commit": commit,
        "commit_date": commit_date,
        "extracted": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "results": entries,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a JSONBench clone or bare repository")
    parser.add_argument("--rev", default="HEAD", help="the revision to read [HEAD]")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write it [{OUT}]")
    args = parser.parse_args()
    try:
        document = published(args.checkout, args.rev)
    except subprocess.CalledProcessError as error:
        print(
            f"{args.checkout}: git {' '.join(error.cmd[3:])} failed: {error.stderr.strip()}", file=sys.stderr
        )
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(f".{args.out.name}.tmp")
    tmp.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    print(f"{len(document['results'])} JSONBench results of {document['commit'][:12]} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
