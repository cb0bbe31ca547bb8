#!/usr/bin/env python3
"""The portable query runs of a results tree, as markdown: per collection (a directory of
analytics results) and query set, each system/variant's correct, wrong, not expressible and
failed queries, then the reasons (an engine's semantics that differ from JSON's, or what it
cannot express). Usage: scripts/portable-summary.py RESULTS_ROOT"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path


def summarize(root: Path) -> str:
    out: list[str] = []
    for collection in sorted(p for p in root.iterdir() if p.is_dir()):
        by_set: dict[str, list[tuple[str, dict]]] = collections.defaultdict(list)
        for path in sorted(collection.glob("analytics.*.json")):
            document = json.loads(path.read_text())
            system = f"{document['system']}/{document['variant']}"
            portable = document.get("portable") or {}
            source = Path(str(portable.get("source") or "")).name
            key = f"{portable['set']} ({source})" if portable else "(no query ran)"
            by_set[key].append((system, document))
        for query_set, runs in sorted(by_set.items()):
            out += [f"### {collection.name}: query set {query_set}", ""]
            out += [
                "| system/variant | correct | wrong | not expressible | failed |",
                "|---|---:|---:|---:|---:|",
            ]
            notes: list[str] = []
            for system, document in runs:
                portable = document.get("portable")
                if not portable:
                    error = (document.get("error") or "no portable section")[:300]
                    out.append(f"| {system} | - | - | - | run failed |")
                    notes.append(f"- {system}: the run failed: {error}")
                    continue
                queries = portable["queries"]
                counts = collections.Counter(q["status"] for q in queries)
                failed = len(queries) - counts["correct"] - counts["wrong"] - counts["not_expressible"]
                out.append(
                    f"| {system} | {counts['correct']}/{len(queries)} | {counts['wrong']} | "
                    f"{counts['not_expressible']} | {failed} |"
                )
                for q in queries:
                    if q["status"] != "correct":
                        notes.append(
                            f"- {system} `{q['name']}` {q['status']}: {(q.get('detail') or '')[:200]}"
                        )
            out += [""] + notes + [""]
    return "\n".join(out)


if __name__ == "__main__":
    print(summarize(Path(sys.argv[1])))
