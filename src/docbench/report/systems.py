"""`docbench systems`: what can run here, which version, and what to do when it cannot."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from docbench.core.console import report_console
from docbench.systems import REGISTERED, adapter_module, adapter_variants, engine_class
from docbench.workloads import all_workloads


def print_systems(console: Console | None = None) -> None:
    console = console or report_console()
    table = Table(title="Systems")
    for column in (
        "system",
        "kind",
        "version",
        "runs here",
        "workloads",
        "analytics variants",
        "why not / install",
    ):
        table.add_column(column)
    for name in REGISTERED:
        cls = engine_class(name)
        availability = cls.availability()
        why = "" if availability.ok else (availability.reason or "")
        if not availability.ok and availability.install_hint:
            why += f" -> {availability.install_hint}"
        variants = ", ".join(f"{v.name} ({v.role})" for v in adapter_variants(name, "analytics"))
        workloads = ", ".join(
            w.name for w in all_workloads() if adapter_module(name, w.adapter_module) is not None
        )
        table.add_row(
            f"{name}\n[dim]{cls.display_name}[/dim]",
            "embedded" if cls.embedded else "server",
            availability.version or "-",
            "[green]yes[/green]" if availability.ok else "[red]no[/red]",
            workloads,
            variants,
            why,
        )
    console.print(table)
