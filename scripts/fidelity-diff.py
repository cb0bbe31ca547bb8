#!/usr/bin/env python3
"""Every fidelity verdict that differs between two result directories (the latest complete
result per system/variant on each side): OLD's outcome, NEW's own verdict, and NEW's
interaction for the document when it has one. Usage: scripts/fidelity-diff.py OLD NEW"""

from __future__ import annotations

import sys
from pathlib import Path

from docbench.results.files import latest_documents, load_results


def latest(directory: Path) -> dict[str, dict]:
    """The latest complete fidelity result of each system/variant (docbench's own choice)."""
    documents = [d for d in latest_documents(load_results([directory])) if d.get("workload") == "fidelity"]
    return {f"{d['system']}/{d['variant']}": d for d in documents if d.get("complete")}


def main(old_dir: Path, new_dir: Path) -> None:
    old, new = latest(old_dir), latest(new_dir)
    print("| system/variant | document | before | now (alone) | together (interaction) |")
    print("|---|---|---|---|---|")
    for name in sorted(set(old) & set(new)):
        before = {row["name"]: row for row in old[name]["documents"]}
        interactions = {i["document"]: i for i in new[name].get("interactions") or []}
        for row in new[name]["documents"]:
            was = before.get(row["name"])
            if was is None or was["outcome"] == row["outcome"]:
                continue
            found = interactions.get(row["name"])
            together = (
                f"{found['together']} after {found['after'] or 'the others'} ({', '.join(found['paths'])})"
                if found
                else "-"
            )
            print(f"| {name} | {row['name']} | {was['outcome']} | {row['outcome']} | {together} |")
    only_new = sorted(set(new) - set(old))
    if only_new:
        print(f"\nOnly in {new_dir}: {', '.join(only_new)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
