"""The terminal every report prints to."""

from __future__ import annotations

import os
from typing import IO

from rich.console import Console

# Written into a pipe or a file, a table has no terminal to fit: rich would assume 80 columns
# and cut the cells ("clickhouse…"). It gets this many instead, so every table keeps its
# natural width (rich does not stretch a table to the console's width).
UNBOUNDED_WIDTH = 1000


def report_console(stderr: bool = False, file: IO[str] | None = None) -> Console:
    """The console reports and progress print to: the terminal's width on a terminal; into a
    pipe or a file, tables at their natural width (``COLUMNS`` still decides when set)."""
    console = Console(stderr=stderr, file=file)
    if console.is_terminal or os.environ.get("COLUMNS"):
        return console
    return Console(stderr=stderr, file=file, width=UNBOUNDED_WIDTH)
