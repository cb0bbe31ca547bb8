#!/usr/bin/env python3
"""docbench's default ClickHouse variants (`lz4`, `zstd`: max_dynamic_paths = 0) beside
JSONBench's published ClickHouse sizes of the same codec family, per scale, as Markdown.

    scripts/clickhouse-defaults.py RESULT_FILE_OR_DIR...

JSONBench's figures: ZSTD(1) from its shipped results (src/docbench/report/published/
jsonbench.json), LZ4 from its last LZ4 results (docs/results/clickhouse-defaults/
jsonbench-lz4-published.json). Both were measured with the JSON type's default dynamic paths.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from docbench.results.files import latest_documents, load_results

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED_ZSTD = ROOT / "src" / "docbench" / "report" / "published" / "jsonbench.json"
PUBLISHED_LZ4 = ROOT / "docs" / "results" / "clickhouse-defaults" / "jsonbench-lz4-published.json"
SCALES = {1_000_000: "1m", 10_000_000: "10m", 100_000_000: "100m", 1_000_000_000: "1000m"}
# Which of JSONBench's configurations each docbench variant is set beside.
REFERENCE = {"lz4": "LZ4", "zstd": "ZSTD(1)", "jsonbench": "ZSTD(1)", "jsonbench_current": "ZSTD(1)"}


def published() -> dict[tuple[str, int], dict[str, Any]]:
    figures: dict[tuple[str, int], dict[str, Any]] = {}
    for result in json.loads(PUBLISHED_ZSTD.read_text())["results"]:
        if result["system"] == "ClickHouse":
            figures["ZSTD(1)", result["dataset_size"]] = result
    for result in json.loads(PUBLISHED_LZ4.read_text())["results"]:
        figures["LZ4", result["dataset_size"]] = result
    return figures


def megabytes(size: int | None) -> str:
    return "-" if size is None else f"{size / 1e6:,.1f} MB"


def table(paths: list[Path]) -> str:
    reference = published()
    runs = [
        d
        for d in latest_documents(load_results(paths))
        if d.get("system") == "clickhouse" and d.get("workload") == "analytics" and d["variant"] in REFERENCE
    ]
    runs.sort(key=lambda d: (d.get("dataset_size") or 0, d["variant"]))
    lines = [
        "| scale | variant | dynamic paths | loaded | total | JSONBench | JSONBench total | ratio "
        "| result file |",
        "|---|---|---|---:|---:|---|---:|---:|---|",
    ]
    for run in runs:
        size = int(run.get("dataset_size") or 0)
        config = REFERENCE[run["variant"]]
        theirs = reference.get((config, size))
        ratio = (
            f"x{run['total_size'] / theirs['total_size']:.2f}" if theirs and run.get("total_size") else "-"
        )
        paths_setting = (
            "0" if "max_dynamic_paths = 0" in json.dumps(run.get("variant_settings")) else "default"
        )
        lines.append(
            f"| {SCALES.get(size, size)} | {run['variant']} | {paths_setting} | "
            f"{run.get('num_loaded_documents') or 0:,} | {megabytes(run.get('total_size'))} | "
            f"{config} ({theirs['version'] if theirs else '-'}) | "
            f"{megabytes(theirs['total_size'] if theirs else None)} | {ratio} | "
            f"`{Path(run['_path']).name}` |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table([Path(arg) for arg in sys.argv[1:]]))
