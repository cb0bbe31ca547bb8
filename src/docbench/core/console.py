"""The terminal every report prints to."""

from __future__ import annotations

from rich.console import Console


def report_console() -> Console:
    """Wide enough for the tables when printing to a file or CI log (rich assumes 80 there)."""
    probe = Console()
    return probe if probe.is_terminal else Console(width=160)
