#!/usr/bin/env python3
"""The figures of `docbench bench io-limit --json FILE` as a Markdown table (the generated
block of docs/results/io-limit/README.md).

Usage: scripts/io-limit-table.py docs/results/io-limit/probe.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

COLUMNS = (
    "IO",
    "limit asked",
    "4 KiB blocks",
    "expected s",
    "took s",
    "blocks/s",
    "of the limit",
    "disk requests",
    "disk IOPS",
    "cgroup requests",
)


def asked(probe: dict, block_bytes: int) -> str:
    limit = probe["limit"]
    if limit is None:
        return "none"
    if probe["kind"] == "read-direct":
        return f"read_iops={limit:,}"
    if probe["kind"] == "write-direct":
        return f"write_iops={limit:,}"
    return f"write_bps={limit * block_bytes / 1e6:,.2f} MB/s"


def main(argv: list[str]) -> int:
    document = json.loads(Path(argv[0]).read_text())
    print(
        f"{document['device_name']} ({document['device']}), cgroup {document['cgroup']}, "
        f"kernel {document['kernel']}; blocks of {document['block_bytes']} B.\n"
    )
    print("| " + " | ".join(COLUMNS) + " |")
    print("|---|---|" + "---:|" * (len(COLUMNS) - 2))
    for probe in document["probes"]:
        limit = probe["limit"]
        cells = [
            probe["kind"],
            asked(probe, document["block_bytes"]),
            f"{probe['blocks']:,}",
            f"{probe['expected_s']:.1f}" if probe["expected_s"] else "-",
            f"{probe['seconds']:.2f}",
            f"{probe['block_rate']:,.0f}",
            f"{probe['block_rate'] / limit:.1%}" if limit else "-",
            f"{probe['requests']:,}",
            f"{probe['observed_iops']:,.0f}",
            "-" if probe["cgroup_requests"] is None else f"{probe['cgroup_requests']:,}",
        ]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
