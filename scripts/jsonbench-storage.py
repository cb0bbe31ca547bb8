#!/usr/bin/env python3
"""docbench's results beside JSONBench's published sizes, as Markdown: the storage figures of
`docbench compare --against jsonbench RESULTS` (the same pairing and the same figures), one row
per pair; then the results with no JSONBench counterpart, and JSONBench's published results of
the same systems at the same scales that have no docbench result here.

    scripts/jsonbench-storage.py RESULT_FILE_OR_DIR...
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from docbench.report.compare import MetricComparison, Pair, compare, load_set, published_jsonbench
from docbench.report.compare.pairs import key_of
from docbench.report.compare.terminal import format_value

FIGURES = ("documents_loaded", "storage.total_bytes", "storage.data_bytes", "storage.index_bytes")
PER_DOCUMENT = (
    "storage.total_bytes_per_document",
    "storage.data_bytes_per_document",
    "storage.index_bytes_per_document",
)
ALONE_HEAD = (
    "| {what} | scale | loaded | total (data, index) | per document (data, index) | {source} |\n"
    "|---|---|---:|---:|---:|---|"
)


def megabytes(size: float | None) -> str:
    return "-" if size is None else f"{size / 1e6:,.1f} MB"


def per_document(size: float | None) -> str:
    return "-" if size is None else format_value(size, "bytes/document")


def count(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def ratio(value: float | None) -> str:
    return "-" if value is None else f"x{value:.3f}"


def with_parts(total: str, data: str, index: str) -> str:
    """A total with its data and index beside it, where the result has them."""
    return total if data == "-" and index == "-" else f"{total} ({data}, {index})"


def figures(pair: Pair) -> dict[str, MetricComparison]:
    return {metric.metric: metric for metric in pair.metrics}


def pair_row(pair: Pair) -> str:
    by_name = figures(pair)
    side: dict[str, list[str]] = {"baseline": [], "contender": []}
    for name in side:
        values = [getattr(by_name[f], name) if f in by_name else None for f in FIGURES]
        doc_values = [getattr(by_name[f], name) if f in by_name else None for f in PER_DOCUMENT]
        side[name] = [
            count(values[0]),
            with_parts(*(megabytes(v) for v in values[1:])),
            with_parts(*(per_document(v) for v in doc_values)),
        ]
    ratios = [by_name[f].ratio if f in by_name else None for f in PER_DOCUMENT]
    total_ratio = by_name["storage.total_bytes"].ratio if "storage.total_bytes" in by_name else None
    return (
        f"| {pair.baseline.get('display_name')} {pair.baseline.get('version') or ''} "
        f"| {pair.contender['system']}/{pair.contender['variant']}, {pair.contender.get('version') or '-'} "
        f"| {pair.key[3]} | {side['baseline'][0]} | {side['contender'][0]} "
        f"| {side['baseline'][1]} | {side['contender'][1]} | {ratio(total_ratio)} "
        f"| {side['baseline'][2]} | {side['contender'][2]} | {with_parts(*(ratio(r) for r in ratios))} "
        f"| `{Path(str(pair.contender['_path'])).name}` |"
    )


def alone_row(document: dict[str, Any], source: str) -> str:
    loaded = document.get("num_loaded_documents")
    sizes = [document.get(k) for k in ("total_size", "data_size", "index_size")]
    per_doc = [s / loaded if s is not None and loaded else None for s in sizes]
    return (
        f"| {document['system']}/{document['variant']}, {document.get('version') or '-'} "
        f"| {key_of(document)[3]} | {count(loaded)} | {with_parts(*(megabytes(s) for s in sizes))} "
        f"| {with_parts(*(per_document(s) for s in per_doc))} | {source} |"
    )


def main(paths: list[Path]) -> None:
    comparison = compare(published_jsonbench("baseline"), load_set(paths, "contender"), threshold=0.1)
    published = comparison.baseline.published or {}
    print(
        f"**Storage beside JSONBench's published results ({published.get('source')} at "
        f"{str(published.get('commit'))[:7]}, {str(published.get('commit_date'))[:10]}): "
        "ratios docbench / JSONBench**\n"
    )
    print(
        "| JSONBench | docbench | scale | JSONBench loaded | docbench loaded "
        "| JSONBench total (data, index) | docbench total (data, index) | ratio "
        "| JSONBench per document (data, index) | docbench per document (data, index) "
        "| ratio per document (data, index) | result file |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for pair in comparison.pairs:
        print(pair_row(pair))
    alone = comparison.only_contender
    if alone:
        print("\n**docbench results with no JSONBench counterpart**\n")
        print(ALONE_HEAD.format(what="docbench", source="result file"))
        for document in alone:
            print(alone_row(document, f"`{Path(str(document['_path'])).name}`"))
    run = {key_of(p.contender)[1:3] for p in comparison.pairs}
    scales = {key_of(d)[3] for d in comparison.contender.documents}
    not_run = [d for d in comparison.only_baseline if key_of(d)[1:3] in run and key_of(d)[3] in scales]
    if not_run:
        print("\n**JSONBench's published results of these systems, at these scales, not run here**\n")
        print(ALONE_HEAD.format(what="docbench counterpart", source="JSONBench file"))
        for document in not_run:
            source = str(document["_path"]).split(":", 1)[-1]
            print(alone_row(document, f"{document.get('display_name')}: `{source}`"))


if __name__ == "__main__":
    main([Path(arg) for arg in sys.argv[1:]])
