"""`docbench bench throughput`: docbench's driver against the native tool, cell by cell.

Runs the throughput workload with the native reference on (PostgreSQL: pgbench with the same
statements, clients, worker threads and duration, right after each docbench run, or right
before it in every second round, so the two alternate on the same server), ``--repeat``
times, and prints per (scenario, mix, clients) docbench's TPS, the native tool's, their
ratio (min-max over the repeats) and what each spent in CPU per operation; then the
driver's ceiling (the same loop on a no-op target) against the best engine figure. The
result files are kept like any run's.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

from rich.console import Console
from rich.table import Table

from docbench import results
from docbench.core.jsontypes import (
    JsonObject,
    JsonValue,
    as_array,
    as_float,
    as_int,
    as_object,
    as_str,
    object_or_empty,
    optional_float,
    optional_str,
)
from docbench.workloads.throughput.runner import ThroughputRequest, run_throughput

FLOOR = 0.9
CEILING_FACTOR = 3.0

# (system/variant, scenario, mix, clients)
CellKey: TypeAlias = tuple[str, str, str, int]


@dataclass
class Cell:
    """One cell's figures, one per round (None: not measured in that round)."""

    tps: list[float] = field(default_factory=list)
    native_tps: list[float] = field(default_factory=list)
    ratio: list[float] = field(default_factory=list)
    cpu: list[float | None] = field(default_factory=list)
    native_cpu: list[float | None] = field(default_factory=list)
    ceiling: list[float | None] = field(default_factory=list)
    tool: list[str | None] = field(default_factory=list)


def bench_throughput(request: ThroughputRequest, repeat: int, console: Console) -> int:
    before = set(_result_files(request.results_dir))
    for number in range(1, repeat + 1):
        # Rounds alternate which tool runs first in each cell, so that neither always finds
        # the server (its caches, its table, the page cache) as the other left it.
        request.native_first = number % 2 == 0
        order = "native tool first" if request.native_first else "docbench first"
        console.print(f"[bold]round {number} of {repeat}[/bold] ({order} in each cell)")
        run_throughput(request)
    # An unreadable result file (None) is left out rather than failing the whole table.
    documents = [
        document
        for path in _result_files(request.results_dir)
        if path not in before
        if (document := results.read_result(path)) is not None
    ]
    rows = collect(documents)
    print_table(rows, request, console)
    return 0 if rows else 1


def _result_files(folder: Path) -> list[Path]:
    return sorted(
        path for path in folder.glob("throughput.*.json") if not path.name.endswith(".intervals.json")
    )


def _object(value: JsonValue) -> JsonObject:
    """An optional part of a result: ``{}`` when absent (or empty, null, false, 0)."""
    return object_or_empty(value or None)


def collect(documents: Sequence[JsonObject]) -> dict[CellKey, Cell]:
    """Per (system/variant, scenario, mix, clients): the figures of every round."""
    cells: dict[CellKey, Cell] = {}
    for document in documents:
        label = f"{document['system']}/{document['variant']}"
        for item in as_array(document.get("runs", []), "runs"):
            run = as_object(item, "a run")
            if "summary" not in run:
                continue
            key = (
                label,
                as_str(run["scenario"], "scenario"),
                as_str(run["mix"], "mix"),
                as_int(run["clients"]),
            )
            cell = cells.setdefault(key, Cell())
            summary, native = as_object(run["summary"], "summary"), _object(run.get("native_reference"))
            cell.tps.append(as_float(summary["tps"], "tps"))
            cell.cpu.append(
                optional_float(_object(summary.get("driver")).get("cpu_us_per_op"), "cpu_us_per_op")
            )
            cell.ceiling.append(optional_float(_object(run.get("ceiling")).get("tps"), "ceiling tps"))
            if native.get("tps"):
                cell.native_tps.append(as_float(native["tps"], "native tps"))
                cell.ratio.append(as_float(native["ratio"], "ratio"))
                cell.native_cpu.append(
                    optional_float(_object(native.get("custom")).get("cpu_us_per_op"), "native cpu_us_per_op")
                )
                cell.tool.append(optional_str(native.get("tool"), "tool"))
    return cells


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _number(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def print_table(cells: dict[CellKey, Cell], request: ThroughputRequest, console: Console) -> None:
    table = Table(
        title=f"docbench driver vs native tool ({request.docs:,} documents, "
        f"{request.duration_s:g} s runs, client loop: {request.client_loop}; "
        "medians over the rounds, which alternate the tools' order)"
    )
    for column in (
        "system/variant",
        "scenario",
        "mix",
        "clients",
        "docbench TPS",
        "native TPS",
        "docbench/native",
        "driver CPU µs/op",
        "native CPU µs/op",
    ):
        table.add_column(
            column,
            justify="right"
            if column[0].isdigit()
            or "TPS" in column
            or "µs" in column
            or column in ("clients", "docbench/native")
            else "left",
        )
    low = []
    for key, cell in sorted(cells.items()):
        ratios = cell.ratio
        ratio = "-"
        if ratios:
            ratio = f"{statistics.median(ratios):.2f}"
            if len(ratios) > 1:
                ratio += f" ({min(ratios):.2f}-{max(ratios):.2f})"
            if statistics.median(ratios) < FLOOR:
                ratio = f"[red]{ratio}[/red]"
                low.append(key)
        table.add_row(
            key[0],
            key[1],
            key[2],
            str(key[3]),
            _number(_median(cell.tps)),
            _number(_median(cell.native_tps)),
            ratio,
            _number(_median(cell.cpu), 1),
            _number(_median(cell.native_cpu), 1),
        )
    console.print(table)
    _print_ceiling(cells, console)
    if low:
        console.print(
            f"[yellow]warning:[/yellow] {len(low)} cell(s) below {FLOOR}: the driver "
            "takes more of the machine than the native tool there; compare the CPU "
            "columns, and rerun on a quiet machine with --repeat 4 to see the spread."
        )


def _print_ceiling(cells: dict[CellKey, Cell], console: Console) -> None:
    most = max((key[3] for key in cells), default=None)
    if most is None:
        return
    at_most = {key: cell for key, cell in cells.items() if key[3] == most}
    ceiling = _median([v for cell in at_most.values() for v in cell.ceiling])
    best = max((_median(cell.tps) or 0.0 for cell in at_most.values()), default=0.0)
    if ceiling is None or not best:
        return
    factor = ceiling / best
    verdict = "ok" if factor >= CEILING_FACTOR else f"[red]below {CEILING_FACTOR:g}x[/red]"
    console.print(
        f"driver ceiling (no-op target, {most} clients): {ceiling:,.0f} ops/s = "
        f"{factor:.1f}x the best engine figure at {most} clients ({best:,.0f}): {verdict}"
    )
