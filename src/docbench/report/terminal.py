"""`docbench report`: every registered workload's tables for what the results directories hold.

Only the latest run of each (workload, system, variant, data) is shown; older runs stay in the
directory and in the dashboard's data.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from docbench.core.console import report_console
from docbench.core.jsontypes import JsonObject
from docbench.results import load_results
from docbench.results.files import latest_documents
from docbench.workloads import all_workloads


def print_all_reports(results_dirs: list[Path], console: Console | None = None) -> None:
    console = console or report_console()
    documents = latest_documents(load_results(results_dirs))
    if not documents:
        console.print(f"No results in {', '.join(map(str, results_dirs))}.")
        return
    for workload in all_workloads():
        mine = [d for d in documents if d.get("workload") == workload.name]
        if mine:
            workload.print_report(mine, console, documents)


def documents_by_workload(documents: list[JsonObject]) -> dict[str, list[JsonObject]]:
    grouped: dict[str, list[JsonObject]] = {}
    for document in documents:
        grouped.setdefault(str(document.get("workload")), []).append(document)
    return grouped
