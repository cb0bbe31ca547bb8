#!/usr/bin/env python3
"""The figures of `docbench bench io-limit --json FILE` as a Markdown table, or (``--runs``)
those of throughput results with and without --io-limit: the generated blocks of
docs/results/io-limit/README.md.

Usage: scripts/io-limit-table.py docs/results/io-limit/probe.json
       scripts/io-limit-table.py --runs docs/results/io-limit/seed-003/uncapped ...
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


def runs_table(directories: list[str]) -> None:
    """One row per run of the throughput results in each directory."""
    columns = (
        "io limit",
        "mix",
        "clients",
        "TPS",
        "p50 ms",
        "p99 ms",
        "engine reads/s",
        "engine writes/s",
        "paged in MB",
        "pgbench TPS (same statements)",
        "docbench / pgbench",
    )
    print("| " + " | ".join(columns) + " |")
    print("|---|---|" + "---:|" * (len(columns) - 2))
    for directory in directories:
        for path in sorted(Path(directory).glob("throughput.*.json")):
            if path.name.endswith(".intervals.json"):
                continue
            document = json.loads(path.read_text())
            limit = (document.get("io_limit") or {}).get("asked", "none")
            for run in document["runs"]:
                summary = run["summary"]
                served = run.get("io_served")
                seconds = run.get("wall_seconds") or 0
                native = run.get("native_reference") or {}
                rates = (
                    [f"{served['read_ios'] / seconds:,.0f}", f"{served['write_ios'] / seconds:,.0f}"]
                    if served and seconds
                    else ["-", "-"]
                )
                cells = [
                    limit,
                    run["mix"],
                    str(run["clients"]),
                    f"{summary['tps']:,.0f}",
                    f"{summary['latency']['p50_ms']:.3f}",
                    f"{summary['latency']['p99_ms']:.3f}",
                    *rates,
                    f"{run['memory_cap']['pages_in_bytes'] / 1e6:,.0f}" if run.get("memory_cap") else "-",
                    f"{native['tps']:,.0f}" if native.get("tps") else "-",
                    f"{native['ratio']:.2f}" if native.get("ratio") else "-",
                ]
                print("| " + " | ".join(cells) + " |")


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--runs":
        runs_table(argv[1:])
        return 0
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
