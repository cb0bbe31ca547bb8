#!/usr/bin/env python3
"""Every fidelity verdict that differs between two result directories (the latest complete
result per system/variant on each side): OLD's outcome, NEW's own verdict, and NEW's
interaction for the document when it has one. Usage: scripts/fidelity-diff.py OLD NEW"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def latest(directory: Path) -> dict[str, dict]:
    found: dict[str, dict] = {}
    for path in sorted(directory.glob("fidelity.*.json")):
        document = json.loads(path.read_text())
        if not document.get("complete"):
            continue
        name = f"{document['system']}/{document['variant']}"
        if name not in found or document.get("started_at", "") > found[name].get("started_at", ""):
            found[name] = document
    return found


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
