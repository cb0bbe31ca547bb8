"""`docbench bench load`: docbench's load path against each system's native bulk load.

Both load the same files into a freshly created, empty table of the same variant (the post-load
step -- index build, VACUUM -- is left out of both, since it is the same work either way). The
native load is what a person would type by hand (psql \\copy, chDB INSERT ... FROM INFILE,
DuckDB read_ndjson_objects...). The ratio docbench/native is docbench's overhead; the target is
at most 1.2. Each side runs `repeat` times, alternating, and the minimum is kept.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from docbench import paths
from docbench.contracts.analytics import AnalyticsAdapter
from docbench.dataset.reader import dataset_files
from docbench.systems import REGISTERED, engine_class, open_adapter
from docbench.workloads.analytics.load import load_files
from docbench.workloads.analytics.runner import RunRequest, prepare_dataset

console = Console()
TARGET_RATIO = 1.2


def bench_load_overhead(system_names: list[str] | None, scale: str = "1m",
                        data_dir: Path | None = None, repeat: int = 2) -> list[dict[str, object]]:
    if data_dir is None:
        data_dir = prepare_dataset(RunRequest(scale=scale)).path
    files = dataset_files(data_dir)
    rows = []
    for name in system_names or REGISTERED:
        if not engine_class(name).availability().ok:
            console.print(f"[yellow]{name}: not available here, skipped[/yellow]")
            continue
        system = open_adapter(name, "analytics", paths.work_dir() / f"loadbench-{name}")
        system.engine.start()
        try:
            docbench_s, native_s, count = [], [], 0
            for _ in range(repeat):
                docbench_s.append(_timed_docbench_load(system, files))
                count = system.count()
                native_s.append(_timed_native_load(system, files))
        except Exception as error:  # noqa: BLE001 - e.g. the native load refuses a whole file
            console.print(f"[red]{name}: {type(error).__name__}: {str(error)[:300]}[/red]\n"
                          "  (a by-hand bulk load refuses the whole file for one bad document; "
                          "compare on data without hard documents: generate --hard-rate 0)")
            continue
        finally:
            system.release()
            system.engine.stop()
        best_docbench, best_native = min(docbench_s), min(native_s)
        rows.append({"system": name, "variant": system.variant.name, "documents": count,
                     "docbench_seconds": best_docbench, "native_seconds": best_native,
                     "ratio": best_docbench / best_native})
    print_table(rows, data_dir)
    return rows


def _timed_docbench_load(system: AnalyticsAdapter, files: list[Path]) -> float:
    system.create()
    started = time.perf_counter()
    load_files(system.loader(), files, type(system).load_batch_size)
    return time.perf_counter() - started


def _timed_native_load(system: AnalyticsAdapter, files: list[Path]) -> float:
    system.create()
    started = time.perf_counter()
    system.native_load(files)
    return time.perf_counter() - started


def print_table(rows: list[dict[str, object]], data_dir: Path) -> None:
    table = Table(title=f"Load: docbench vs native bulk load ({data_dir.name}, min of runs)")
    for column in ("system", "documents", "docbench s", "native s", "ratio", f"<= {TARGET_RATIO}"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for row in rows:
        ratio = float(row["ratio"])  # type: ignore[arg-type]
        table.add_row(f"{row['system']}/{row['variant']}", f"{row['documents']:,}",
                      f"{row['docbench_seconds']:.2f}", f"{row['native_seconds']:.2f}",
                      f"{ratio:.2f}", "[green]yes[/green]" if ratio <= TARGET_RATIO else "[red]no[/red]")
    console.print(table)
