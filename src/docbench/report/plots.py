"""`docbench report --plots DIR`: each workload's charts as PNG files (workloads with a
``plots`` module in their registration: ``write_plots(documents, out_dir) -> [paths]``)."""

from __future__ import annotations

from pathlib import Path

from docbench.results import load_results
from docbench.results.files import latest_documents
from docbench.workloads import all_workloads


def write_plots(results_dirs: list[Path], out_dir: Path) -> list[Path]:
    documents = latest_documents(load_results(results_dirs))
    written: list[Path] = []
    for workload in all_workloads():
        mine = [d for d in documents if d.get("workload") == workload.name]
        if mine:
            written += workload.write_plots(mine, out_dir)
    return written
