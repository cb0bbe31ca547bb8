"""Tables written into a pipe or a file keep their cells whole (rich would assume 80 columns
there and cut them: ``clickhouse…``)."""

from __future__ import annotations

import io
import os
import subprocess
import sys

from rich.table import Table

from docbench.core.console import report_console
from docbench.systems import REGISTERED


def test_a_table_into_a_file_keeps_its_widest_cell_whole(monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    table = Table("system", "figure")
    name = "a-system-name-far-wider-than-eighty-columns/" + "variant-" * 25  # > 160 columns
    table.add_row(name, "1,234")
    out = io.StringIO()
    report_console(file=out).print(table)
    assert name in out.getvalue() and "…" not in out.getvalue()


def test_docbench_systems_into_a_pipe_names_every_system_whole() -> None:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    output = subprocess.run(
        [sys.executable, "-m", "docbench.cli", "systems"], env=env, check=True, capture_output=True, text=True
    ).stdout
    assert "…" not in output
    for name in REGISTERED:
        assert f"│ {name} " in output, name
