"""`docbench bench load`: docbench's load of the default data against each system's native bulk
load of the same documents without the hard ones.

The docbench side loads the dataset as `docbench run` does (its hard documents included: the
engine skips and names what it refuses, bisection only as the fallback). The native side is
what a person would type by hand (psql \\copy, chDB INSERT ... FROM INFILE, DuckDB
read_ndjson_objects...) on the *clean twin* of the dataset: generated with the same seed, size
and compression and ``--hard-rate 0`` -- a by-hand bulk load refuses a whole file for one bad
document, so it can only be timed on clean data. Both load into a freshly created, empty
table of the same variant; the post-load steps (index build, VACUUM, merges) are left out of
both, since they are the same work either way. The ratio docbench/native is docbench's
overhead plus the cost of its refusals; the target is at most 1.15. Each side runs `repeat`
times, alternating (docbench first, then native first, ...), and the minimum is kept (every
time is printed).

Each timed load starts from the same state: the table just created, dirty pages written
(``sync``) and, when docbench may (root), the OS page cache dropped. Without that, at 10m
(two datasets of 4.8 GB, a 7 GB database and 6 GB of shared buffers in 24 GiB) a load paid
for the write-back of the previous one and read its files from the disk or from the cache
depending on what ran before it: the same command gave PostgreSQL 1.05 on one file and 1.21
on ten.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TypedDict

from rich.table import Table

from docbench.contracts.analytics import AnalyticsAdapter
from docbench.contracts.capabilities import NativeLoad, capability
from docbench.core import paths
from docbench.core.console import report_console
from docbench.core.procstats import can_drop_page_cache, drop_page_cache
from docbench.dataset.manifest import read_manifest
from docbench.dataset.oracle import load_or_compute_answers
from docbench.dataset.reader import dataset_files
from docbench.servers.managed import clear_work_directory
from docbench.systems import REGISTERED, engine_class, open_adapter
from docbench.workloads.analytics.runner import (
    RunRequest,
    generated_line_counts,
    prepare_dataset,
    verify_before_use,
)
from docbench.workloads.load import load_files

console = report_console()
TARGET_RATIO = 1.15


def clean_twin(data_dir: Path) -> Path | None:
    """The dataset's twin without hard documents (same seed, size, compression; generated
    under docbench's data directory when missing), or None when the data is not docbench's
    (no manifest: nothing to regenerate it from)."""
    manifest = read_manifest(data_dir)
    if manifest is None:
        return None
    if manifest.hard_rate == 0 and manifest.dirty_rate == 0:
        return data_dir
    twin = paths.datasets_dir() / f"{data_dir.name}-clean"
    if not (twin / "dataset.json").exists():
        from docbench.dataset.generate import generate_dataset

        console.print(f"Generating the clean twin of {data_dir} (--hard-rate 0) into {twin}")
        generate_dataset(
            manifest.docs,
            twin,
            seed=manifest.seed,
            compress=manifest.compress,
            hard_rate=0.0,
            dirty_rate=0.0,
            docs_per_file=manifest.docs_per_file,
        )
    return twin


def default_systems() -> list[str]:
    return [name for name in REGISTERED if engine_class(name).runs_by_default]


class LoadOverhead(TypedDict):
    """One system's row: docbench's load against the native one (seconds: min of the runs)."""

    system: str
    variant: str
    documents: int
    refused: int
    docbench_seconds: float
    native_seconds: float
    docbench_runs: list[float]
    native_runs: list[float]
    ratio: float


def bench_load_overhead(
    system_names: list[str] | None, scale: str = "1m", data_dir: Path | None = None, repeat: int = 2
) -> list[LoadOverhead]:
    if data_dir is None:
        data_dir = prepare_dataset(RunRequest(scale=scale)).path  # (verified there)
        files = dataset_files(data_dir)
    else:
        files = dataset_files(data_dir)
        verify_before_use(data_dir, files)
    clean_dir = clean_twin(data_dir)
    if clean_dir is None:
        console.print(
            f"[yellow]{data_dir} has no dataset.json: the native load runs on the same "
            "files (it fails on a file with a document the engine refuses)[/yellow]"
        )
        clean_dir = data_dir
    clean_files = dataset_files(clean_dir)
    # What a run knows before it loads: the line counts of files the generator wrote.
    known = generated_line_counts(data_dir, load_or_compute_answers(data_dir))
    rows: list[LoadOverhead] = []
    for name in system_names or default_systems():
        if not engine_class(name).availability().ok:
            console.print(f"[yellow]{name}: not available here, skipped[/yellow]")
            continue
        row = _bench_system(name, files, clean_files, repeat, known)
        if row is not None:
            rows.append(row)
    print_table(rows, data_dir, clean_dir)
    return rows


def _bench_system(
    name: str, files: list[Path], clean_files: list[Path], repeat: int, known: dict[str, int]
) -> LoadOverhead | None:
    workdir = paths.work_dir() / f"loadbench-{name}"
    system = open_adapter(name, "analytics", workdir)
    system.engine.start()
    try:
        docbench_s: list[float] = []
        native_s: list[float] = []
        count, refused = 0, 0
        for round_number in range(repeat):
            # Which side goes first alternates: the first load after the server starts pays
            # for touching its memory (PostgreSQL's 6 GB of shared buffers: 10-20 s at 10m).
            if round_number % 2:
                native_s.append(_timed_native_load(system, clean_files))
            seconds, refused = _timed_docbench_load(system, files, known)
            docbench_s.append(seconds)
            count = system.count()
            if not round_number % 2:
                native_s.append(_timed_native_load(system, clean_files))
    except Exception as error:  # noqa: BLE001 - reported, the next system runs
        console.print(f"[red]{name}: {type(error).__name__}: {str(error)[:300]}[/red]")
        return None
    finally:
        system.release()
        system.engine.stop()
        clear_work_directory(workdir)  # (its databases: 25 GB for the four systems at 10m)
    return {
        "system": name,
        "variant": system.variant.name,
        "documents": count,
        "refused": refused,
        "docbench_seconds": min(docbench_s),
        "native_seconds": min(native_s),
        "docbench_runs": docbench_s,
        "native_runs": native_s,
        "ratio": min(docbench_s) / min(native_s),
    }


def _same_start() -> None:
    """Write the previous load's dirty pages and drop the page cache where permitted: every
    timed load starts cold, with no write-back of another load in its time."""
    if not drop_page_cache():
        os.sync()


def _timed_docbench_load(
    system: AnalyticsAdapter, files: list[Path], known: dict[str, int]
) -> tuple[float, int]:
    system.create()
    _same_start()
    started = time.perf_counter()
    report = load_files(system.loader(), files, type(system).load_batch_size, known_documents=known)
    return time.perf_counter() - started, report.refused_count


def _timed_native_load(system: AnalyticsAdapter, files: list[Path]) -> float:
    native = capability(system, NativeLoad, "no native bulk load to compare with")
    system.create()
    _same_start()
    started = time.perf_counter()
    native.native_load(files)
    return time.perf_counter() - started


def print_table(rows: list[LoadOverhead], data_dir: Path, clean_dir: Path) -> None:
    table = Table(
        title=f"Load: docbench on {data_dir.name} vs native bulk load on {clean_dir.name} (min of runs)"
    )
    for column in ("system", "documents", "refused", "docbench s", "native s", "ratio", f"<= {TARGET_RATIO}"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for row in rows:
        ratio = row["ratio"]
        table.add_row(
            f"{row['system']}/{row['variant']}",
            f"{row['documents']:,}",
            f"{row['refused']:,}",
            " ".join(f"{s:.2f}" for s in row["docbench_runs"]),
            " ".join(f"{s:.2f}" for s in row["native_runs"]),
            f"{ratio:.2f}",
            "[green]yes[/green]" if ratio <= TARGET_RATIO else "[red]no[/red]",
        )
    console.print(table)
    start = "page cache dropped" if can_drop_page_cache() else "dirty pages synced (not root)"
    console.print(f"Each timed load started on a fresh table, {start}.")
