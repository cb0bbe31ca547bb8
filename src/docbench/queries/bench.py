"""``docbench bench oracle``: the portable oracle's throughput on a dataset (documents per
second, wall clock, each run from scratch: no cached answer), native scan and Python."""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from docbench.dataset.native_scan import DISABLE_ENV
from docbench.dataset.reader import dataset_files
from docbench.queries.oracle import evaluate_set
from docbench.queries.spec import QuerySet


def bench_oracle(
    data: Path, query_set: QuerySet, jobs: int, runs: int, console: Console, python: bool = True
) -> None:
    """Time ``runs`` evaluations of the set over the data on ``jobs`` cores, natively, then
    once in Python alone (the fallback's speed); print docs/s."""
    files = dataset_files(data)
    table = Table(title=f"portable oracle: {query_set.name} ({len(query_set.queries)} queries) over {data}")
    for column in ("path", "jobs", "documents", "seconds (median)", "min-max", "docs/s"):
        table.add_column(column, justify="left" if column == "path" else "right")
    paths = [("native scan", "1", runs)] + ([("python only", "0", 1)] if python else [])
    for label, native, count in paths:
        previous = os.environ.get(DISABLE_ENV)
        os.environ[DISABLE_ENV] = native
        try:
            times, documents = [], 0
            for _ in range(count):
                started = time.perf_counter()
                documents = int(evaluate_set(query_set, files, jobs=jobs)["documents"])
                times.append(time.perf_counter() - started)
        finally:
            if previous is None:
                os.environ.pop(DISABLE_ENV, None)
            else:
                os.environ[DISABLE_ENV] = previous
        median = statistics.median(times)
        table.add_row(
            label,
            str(jobs),
            f"{documents:,}",
            f"{median:.2f}",
            f"{min(times):.2f}-{max(times):.2f}",
            f"{documents / median:,.0f}",
        )
    console.print(table)
    console.print(
        "[dim]the first run reads the files from disk unless the page cache holds them; "
        "the median is of every run[/dim]"
    )
