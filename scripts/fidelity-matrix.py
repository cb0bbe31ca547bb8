#!/usr/bin/env python3
"""The fidelity matrix of a results directory, as markdown: per system/variant (the latest
complete result of each) each document's own verdict counted, the documents not returned
identical, then the interactions (outcomes that differ when the documents are loaded
together). Usage: scripts/fidelity-matrix.py RESULTS_DIR"""

from __future__ import annotations

import sys
from pathlib import Path

from docbench.results.files import latest_documents, load_results

OUTCOMES = ("identical", "same_value", "changed", "refused", "unreadable")
SHOWN = 8  # documents named per row


def latest(directory: Path) -> dict[str, dict]:
    """The latest complete fidelity result of each system/variant (docbench's own choice)."""
    documents = [d for d in latest_documents(load_results([directory])) if d.get("workload") == "fidelity"]
    return {f"{d['system']}/{d['variant']}": d for d in documents if d.get("complete")}


def lossless(document: dict) -> str:
    return {True: "yes", False: "no", None: "cannot read back"}[document.get("lossless")]


def matrix(documents: dict[str, dict]) -> list[str]:
    head = "| system/variant | representation | " + " | ".join(o.replace("_", " ") for o in OUTCOMES)
    lines = [
        head + " | lossless | not identical (first documents) |",
        "|---|---|" + "---:|" * len(OUTCOMES) + "---|---|",
    ]
    for name, document in sorted(documents.items()):
        counts = document.get("summary") or {}
        other = [
            row["name"] + ("" if row["outcome"] == "changed" else f" ({row['outcome'].replace('_', ' ')})")
            for row in document["documents"]
            if row["outcome"] not in ("identical", "same_value")
        ]
        shown = ", ".join(other[:SHOWN]) + (" ..." if len(other) > SHOWN else "")
        lines.append(
            f"| {name} | {(document.get('representation') or {}).get('name', '')} | "
            + " | ".join(str(counts.get(o, 0)) for o in OUTCOMES)
            + f" | {lossless(document)} | {shown} |"
        )
    return lines


def interactions(documents: dict[str, dict]) -> list[str]:
    lines = [
        "| system/variant | interactions | document: alone -> together, after (paths) |",
        "|---|---:|---|",
    ]
    for name, document in sorted(documents.items()):
        found = document.get("interactions")
        if found is None:
            continue
        shown = "; ".join(
            f"{i['document']}: {i['own']} -> {i['together']}, after "
            + (
                i["after"]
                if i["after"] and i["pairwise"]
                else f"the documents up to {i['after']}"
                if i["after"]
                else "the others"
            )
            + (f" ({', '.join(short(p) for p in i['paths'][:2])})" if i["paths"] else "")
            for i in found[:SHOWN]
        ) + (" ..." if len(found) > SHOWN else "")
        lines.append(f"| {name} | {len(found)} | {shown or '-'} |")
    return lines


def short(path: str) -> str:
    return path if len(path) <= 24 else path[:21] + "..."


def main(directory: Path) -> None:
    documents = latest(directory)
    print("### Each document alone in a fresh table (its own verdict)\n")
    print("\n".join(matrix(documents)))
    print("\n### The documents together: outcomes that differ from their own (interactions)\n")
    print("\n".join(interactions(documents)))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
