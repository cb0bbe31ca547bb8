"""The registry of workloads. Adding a workload = one package here and its name in REGISTERED.

A workload package's ``__init__.py`` defines ``WORKLOAD``, a :class:`Workload`: its CLI
subcommand (``docbench run <name>``), the module name its systems provide
(``systems/<name>/<adapter_module>.py``), its terminal report and its dashboard section. The
contract it needs from a system lives in ``docbench/contracts/``. cli.py and report/ only
iterate this registry.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from docbench.core.jsontypes import JsonObject
from docbench.results.files import result_models
from docbench.workloads.measures import ComparedData, Measure

REGISTERED: list[str] = ["analytics", "updates", "storage", "throughput", "fidelity", "shapes"]
DEFAULT = "analytics"

Documents = list[JsonObject]


@dataclass(frozen=True)
class Workload:
    """A workload's registration. Its modules are named, not imported, so that the CLI starts
    without importing every workload's dependencies."""

    name: str
    summary: str
    # The module each taking-part system has in its folder (systems/<name>/<adapter_module>.py).
    adapter_module: str
    # Module with command() -> the `docbench run <name>` click command (and, when
    # bench_commands is set, bench_commands() -> extra `docbench bench` commands).
    cli: str
    # Module with print_report(documents, console, all_documents) for the terminal and
    # dashboard_section(documents, all_documents) -> {"label", "columns", "rows"} (a table of the
    # dashboard's workload view) or {"main": {...}} (the dashboard's main view), or None;
    # all_documents (every workload's) lets a section join another workload's labels.
    report: str
    bench_commands: bool = False
    # The cli module has top_commands() -> extra top-level commands (e.g. analytics: plan).
    top_commands: bool = False
    # Module with write_plots(documents, out_dir) -> [paths] (`docbench report --plots`).
    plots: str | None = None
    # Module with dashboard_section(documents, all_documents), when it is not the report module.
    dashboard: str | None = None
    # Module with measures(document) -> [Measure] (workloads/measures.py): the figures
    # `docbench compare` compares; None: its results are listed as not compared. It may also
    # have data(document) -> ComparedData: the data a result is matched on (else its label).
    compare: str | None = None
    # Its report, plots and dashboard section are given result models (results.models: its
    # own results, and every workload's as all_documents) instead of the documents as read.
    reads_models: bool = False

    def command(self) -> click.Command:
        return importlib.import_module(self.cli).command()

    def benches(self) -> list[click.Command]:
        return importlib.import_module(self.cli).bench_commands() if self.bench_commands else []

    def commands(self) -> list[click.Command]:
        return importlib.import_module(self.cli).top_commands() if self.top_commands else []

    def print_report(self, documents: Documents, console: Console, all_documents: Documents) -> None:
        module = importlib.import_module(self.report)
        module.print_report(self._given(documents), console, self._given(all_documents, quiet=True))

    def dashboard_section(self, documents: Documents, all_documents: Documents) -> JsonObject | None:
        module = importlib.import_module(self.dashboard or self.report)
        section: JsonObject | None = module.dashboard_section(
            self._given(documents), self._given(all_documents, quiet=True)
        )
        return section

    def write_plots(self, documents: Documents, out_dir: Path) -> list[Path]:
        if self.plots is None:
            return []
        return list(importlib.import_module(self.plots).write_plots(self._given(documents), out_dir))

    def _given(self, documents: Documents, quiet: bool = False) -> list[Any]:
        """What its modules read: the documents, or (reads_models) their models."""
        return result_models(documents, quiet) if self.reads_models else documents

    def measures(self, document: JsonObject) -> list[Measure] | None:
        """The figures of one of its results, or None when the workload has no comparison."""
        if self.compare is None:
            return None
        return list(importlib.import_module(self.compare).measures(document))

    def compared_data(self, document: JsonObject) -> ComparedData:
        """The data ``docbench compare`` matches one of its results on (workloads/measures.py)."""
        module = importlib.import_module(self.compare) if self.compare else None
        if module is not None and hasattr(module, "data"):
            data: ComparedData = module.data(document)
            return data
        return ComparedData(scale=str(document.get("dataset_label")))


def workload(name: str) -> Workload:
    if name not in REGISTERED:
        raise KeyError(f"unknown workload {name!r} (known: {', '.join(REGISTERED)})")
    return importlib.import_module(f"docbench.workloads.{name}").WORKLOAD


def all_workloads() -> list[Workload]:
    return [workload(name) for name in REGISTERED]
