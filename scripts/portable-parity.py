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
import re
import sys
from pathlib import Path
from typing import Any

from docbench.results.files import latest_documents, load_results


def latest(directory: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Each system/variant's run, chosen as the report chooses (results.files.latest_documents:
    the latest complete run of an identity, else its latest run)."""
    documents = [d for d in load_results([directory]) if d.get("workload") == "analytics"]
    return {(d["system"], d["variant"]): d for d in latest_documents(documents)}


def hot(times: list[float | None]) -> float | None:
    values = [t for t in times[1:] if t is not None]
    return min(values) if values else None


# Plans whose form says how the rows were read, and the index names in them: PostgreSQL's
# (FerretDB's too) JSON plan, SQLite's EXPLAIN QUERY PLAN, MariaDB's EXPLAIN FORMAT=JSON.
PLAN_FORMS = (r'"Node Type"', r"(?m)^\s*(?:SCAN|SEARCH) ", r'"query_block"')
INDEX_NAMES = (r'"Index Name": "([^"]+)"', r"USING (?:COVERING )?INDEX (\w+)", r'"key": "([^"]+)"')


def access(plan: Any) -> str:
    """How the plan reads the rows: "index NAME" where it reads an index, "full scan" where it
    reads no index, "-" where the plan's form is not one of PLAN_FORMS."""
    text = plan if isinstance(plan, str) else json.dumps(plan)
    if not plan or not any(re.search(form, text) for form in PLAN_FORMS):
        return "-"
    names = sorted({name for pattern in INDEX_NAMES for name in re.findall(pattern, text)})
    return "index " + ", ".join(names) if names else "full scan"


def main(hand_dir: str, spec_dir: str) -> None:
    hand, spec = latest(Path(hand_dir)), latest(Path(spec_dir))
    print(
        "| system/variant | query | hand-written | compiled | hot s (hand) | hot s (compiled) | ratio "
        "| access (hand / compiled) |"
    )
    print("|---|---|---|---|---:|---:|---:|---|")
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
            plans = (hand[key].get("plans") or [None] * 5)[number - 1], theirs.get("plan")
            reads = " / ".join(access(plan) for plan in plans)
            checks = f"{mine.get('status', '-')} | {status}"
            print(f"| {name} | Q{number} | {checks} | {times} | {ratio} | {reads} |")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[-1])
