#!/usr/bin/env python3
"""The figures of `docbench bench io-limit --json FILE` as a Markdown table, or (``--runs``)
those of throughput results with and without --io-limit: the generated blocks of
docs/results/io-limit/README.md.

Usage: scripts/io-limit-table.py docs/results/io-limit/probe.json
       scripts/io-limit-table.py --runs docs/results/io-limit/seed-003/uncapped ...
       scripts/io-limit-table.py --cells docs/results/io-limit/bench/uncapped ...

--cells: the rounds of `docbench bench throughput` (each cell run --repeat times, the order of
docbench and pgbench alternating) as one row per (io limit, mix, clients): each round's TPS of
both, in the order they ran, and the ratio's spread.
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
    for limit, run in runs_of(directories):
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


def runs_of(directories: list[str]):  # type: ignore[no-untyped-def]
    """(io limit, run entry) of every throughput result in the directories, oldest first."""
    for directory in directories:
        for path in sorted(Path(directory).glob("throughput.*.json")):
            if path.name.endswith(".intervals.json"):
                continue
            document = json.loads(path.read_text())
            limit = (document.get("io_limit") or {}).get("asked", "none")
            for run in document["runs"]:
                yield limit, run


def cells_table(directories: list[str]) -> None:
    """One row per (io limit, mix, clients) over the rounds in the directories."""
    import statistics

    cells: dict[tuple[str, str, int], list[dict]] = {}
    for limit, run in runs_of(directories):
        cells.setdefault((limit, run["mix"], run["clients"]), []).append(run)
    columns = (
        "io limit",
        "mix",
        "clients",
        "rounds",
        "docbench TPS by round",
        "pgbench TPS by round",
        "docbench / pgbench by round",
        "median ratio",
        "docbench spread",
        "pgbench spread",
    )
    print("| " + " | ".join(columns) + " |")
    print("|---|---|" + "---:|" * (len(columns) - 2))
    for (limit, mix, clients), runs in cells.items():
        ours = [run["summary"]["tps"] for run in runs]
        natives = [(run.get("native_reference") or {}).get("tps") for run in runs]
        ratios = [(run.get("native_reference") or {}).get("ratio") for run in runs]
        first = [
            "(p)" if (run.get("native_reference") or {}).get("order") == "native first" else ""
            for run in runs
        ]
        measured = [n for n in natives if n]
        known = [r for r in ratios if r]

        def spread(values: list[float]) -> str:
            return (
                f"{(max(values) - min(values)) / statistics.median(values):.0%}" if len(values) > 1 else "-"
            )

        cells_text = [
            limit,
            mix,
            str(clients),
            str(len(runs)),
            " · ".join(f"{tps:,.0f}" for tps in ours),
            " · ".join(f"{p}{n:,.0f}" if n else "-" for n, p in zip(natives, first, strict=True)),
            " · ".join(f"{r:.2f}" if r else "-" for r in ratios),
            f"{statistics.median(known):.2f}" if known else "-",
            spread(ours),
            spread(measured),
        ]
        print("| " + " | ".join(cells_text) + " |")
    print()
    print("(p): pgbench ran first in that round; spread: (max - min) / median of the rounds.")


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--runs":
        runs_table(argv[1:])
        return 0
    if argv and argv[0] == "--cells":
        cells_table(argv[1:])
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
