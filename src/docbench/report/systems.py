"""`docbench systems`: what can run here, which version, and what to do when it cannot."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from docbench.report.terminal import report_console
from docbench.systems import REGISTERED, system_class


def print_systems(console: Console | None = None) -> None:
    console = console or report_console()
    table = Table(title="Systems")
    for column in ("system", "kind", "version", "runs here", "variants", "why not / install"):
        table.add_column(column)
    for name in REGISTERED:
        cls = system_class(name)
        availability = cls.availability()
        why = "" if availability.ok else (availability.reason or "")
        if not availability.ok and availability.install_hint:
            why += f" -> {availability.install_hint}"
        variants = ", ".join(f"{v.name} ({v.role})" for v in cls.variants)
        table.add_row(f"{name}\n[dim]{cls.display_name}[/dim]",
                      "embedded" if cls.embedded else "server",
                      availability.version or "-",
                      "[green]yes[/green]" if availability.ok else "[red]no[/red]",
                      variants, why)
    console.print(table)
