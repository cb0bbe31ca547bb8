#!/usr/bin/env python3
"""JSONBench's Q1-Q5 hand-written (each system's queries file) beside the same five compiled
from the portable spec (`--queries jsonbench`), from two result directories of runs on the
same data, or from one directory of `--queries jsonbench` runs on Bluesky data (which run the
hand-written Q1-Q5 beside the compiled ones, on the same load): per system/variant and query,
both answers' checks and the hot times' ratio compiled / hand-written (hot = the best of tries
2..n). Prints a Markdown table.

Usage: scripts/portable-parity.py HAND_RESULTS [SPEC_RESULTS]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def latest(directory: Path) -> dict[tuple[str, str], dict[str, Any]]:
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(directory.glob("analytics.*.json")):
        document = json.loads(path.read_text())
        if "system" not in document:  # a result still being written (reserved)
            continue
        key = (document["system"], document["variant"])
        if key not in runs or document["started_at"] > runs[key]["started_at"]:
            runs[key] = document
    return runs


def hot(times: list[float | None]) -> float | None:
    values = [t for t in times[1:] if t is not None]
    return min(values) if values else None


def main(hand_dir: str, spec_dir: str) -> None:
    hand, spec = latest(Path(hand_dir)), latest(Path(spec_dir))
    print("| system/variant | query | hand-written | compiled | hot s (hand) | hot s (compiled) | ratio |")
    print("|---|---|---|---|---:|---:|---:|")
    for key in sorted(set(hand) & set(spec)):
        compiled = {q["name"]: q for q in (spec[key].get("portable") or {}).get("queries", [])}
        for number in range(1, 6):
            answers = hand[key].get("answers") or []
            mine = next((a for a in answers if a.get("query") == number), {})
            theirs = compiled.get(f"q{number}", {})
            hand_hot = hot((hand[key].get("result") or [[]] * 5)[number - 1] or [])
            spec_hot = hot(theirs.get("result") or [])
            ratio = f"{spec_hot / hand_hot:.2f}" if hand_hot and spec_hot else "-"
            status = theirs.get("status", "-")
            if theirs.get("detail"):
                status += f" ({theirs['detail'][:60]})"
            times = " | ".join("-" if t is None else f"{t:.4f}" for t in (hand_hot, spec_hot))
            name = f"{key[0]}/{key[1]}"
            print(f"| {name} | Q{number} | {mine.get('status', '-')} | {status} | {times} | {ratio} |")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[-1])
