"""``docbench answers DIR``: the answers as tables, and how they were obtained."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from docbench.core.jsontypes import (
    JsonMapping,
    JsonObject,
    as_array,
    as_int,
    object_or_empty,
    optional_int,
)
from docbench.core.procstats import peak_rss
from docbench.dataset.oracle.answers_cache import answers_cache_path, load_or_compute
from docbench.dataset.oracle.compute_log import ComputeLog
from docbench.dataset.oracle.document import answer_rows
from docbench.dataset.reader import dataset_files, read_error_message

# (rich is imported where it is used: the oracle's workers import this package)
if TYPE_CHECKING:
    from rich.console import Console, JustifyMethod

MIB = 1 << 20


def format_time_us(value: int | None) -> str:
    if value is None:
        return "-"
    try:
        dt = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=value)
    except OverflowError:
        return str(value)
    return dt.strftime("%Y-%m-%d %H:%M:%S.%fZ")


def _label(value: object) -> str:
    if value is None:
        return "(null)"
    # lone surrogates (valid JSON escapes) cannot be printed as they are
    return str(value).encode("utf-8", "backslashreplace").decode("utf-8")


def _print_table(
    console: Console, q: int, columns: list[tuple[str, JustifyMethod]], rows: list[list[str]]
) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from docbench.core.answers import QUERY_TITLES

    console.print(f"[bold]Q{q}[/bold]  {QUERY_TITLES[q]}")
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    for name, justify in columns:
        t.add_column(name, justify=justify, no_wrap=True)
    for row in rows:
        t.add_row(*(Text(cell) for cell in row))  # data, not markup
    if not rows:
        t.add_row(*(["(no rows)"] + [""] * (len(columns) - 1)))
    console.print(t)
    console.print()


def print_answers(doc: JsonMapping, console: Console | None = None) -> None:
    """The five answers as rich tables."""
    from rich.console import Console
    from rich.text import Text

    out = console or Console()
    _print_table(
        out,
        1,
        [("collection", "left"), ("count", "right")],
        [[_label(c), f"{n:,}"] for c, n in answer_rows(doc, "q1")],
    )
    _print_table(
        out,
        2,
        [("collection", "left"), ("count", "right"), ("distinct dids", "right")],
        [[_label(c), f"{n:,}", f"{d:,}"] for c, n, d in answer_rows(doc, "q2")],
    )
    _print_table(
        out,
        3,
        [("collection", "left"), ("hour (UTC)", "right"), ("count", "right")],
        [[_label(c), _label(h), f"{n:,}"] for c, h, n in answer_rows(doc, "q3")],
    )
    _print_table(
        out,
        4,
        [("did", "left"), ("first post (UTC)", "left"), ("time_us", "right")],
        [[_label(d), format_time_us(optional_int(t, "q4 time")), str(t)] for d, t in answer_rows(doc, "q4")],
    )
    _print_table(
        out,
        5,
        [("did", "left"), ("span (ms)", "right"), ("span_us", "right")],
        [[_label(d), f"{as_int(s, 'q5 span') / 1000:,.3f}", str(s)] for d, s in answer_rows(doc, "q5")],
    )
    for q in (4, 5):
        ties = object_or_empty(doc.get(f"q{q}_ties"))
        if ties and as_int(ties["count"], "ties.count") > 1:
            out.print(
                Text(
                    f"Q{q}: {ties['count']:,} dids share the value of the last row "
                    f"({ties['value']}); any of them is a valid answer there."
                )
            )


def _computed_summary(
    console: Console, data_dir: Path, log: ComputeLog, jobs: int, elapsed: float, cpu: float
) -> None:
    """What a computation read, how fast, and the memory and CPU it took."""
    scanned = log.scanned_documents
    rate = scanned / elapsed if elapsed > 0 else 0.0
    cache = answers_cache_path(data_dir)
    where = f"written to {cache}" if not data_dir.is_file() and cache.exists() else "kept in memory"
    reused = f", {len(log.reused)} from cached partials" if log.reused else ""
    console.print(
        f"computed in {elapsed:.2f} s: {len(log.scanned)} file(s) scanned"
        f"{reused}; {scanned:,} documents scanned, {rate:,.0f} documents/s "
        f"(jobs={jobs}); {where}"
    )
    helper = log.helpers
    peaks = "".join(f" + {helper} {p / MIB:,.0f} MiB" for p in log.worker_peaks)
    cpus = "".join(f" + {helper} {c:.2f} s" for c in log.worker_cpu)
    console.print(
        f"peak RSS: this process {(peak_rss(os.getpid()) or 0) / MIB:,.0f} MiB"
        f"{peaks}; CPU: this process {cpu:.2f} s{cpus}"
    )


def _with_progress(
    console: Console,
    n_files: int,
    compute: Callable[[Callable[[int], None]], tuple[JsonObject, str]],
) -> tuple[JsonObject, str]:
    """``compute(progress)`` under a progress bar of lines; an unreadable file is named, not
    a traceback."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TextColumn("{task.completed:,.0f} lines"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(f"answers for {n_files} file(s)", total=None)
        try:
            return compute(lambda n: bar.advance(task, n))
        except OSError as error:
            bar.stop()
            console.print(read_error_message(error), style="red", markup=False)
            raise SystemExit(1) from None


def _verify_or_exit(console: Console, data_dir: Path, files: list[Path], jobs: int, full: bool) -> None:
    """No answers from a damaged file: every file is checked first (cut short, trailing
    garbage, not what dataset.json records; see :mod:`docbench.dataset.verify`), read when it
    changed since its last check or when ``full``; what was read goes to ``console``."""
    from rich.console import Console

    from docbench.dataset.verify import DamagedDataset, verify_dataset

    errors = Console(stderr=True)
    try:
        verified = verify_dataset(data_dir, files, jobs=jobs, full=full)
    except DamagedDataset as damaged:
        for line in damaged.problems:
            errors.print(line, style="red", markup=False, highlight=False, soft_wrap=True)
        raise SystemExit(1) from None
    except OSError as error:
        errors.print(read_error_message(error), style="red", markup=False, highlight=False, soft_wrap=True)
        raise SystemExit(1) from None
    for note in verified.notes:  # a stamp file not used or not written, and why
        console.print(note, style="yellow", markup=False, highlight=False, soft_wrap=True)
    console.print(verified.summary(data_dir), style="dim", markup=False, highlight=False, soft_wrap=True)


def answers_command(data_dir: Path, jobs: int = 1, refresh: bool = False, verify_full: bool = False) -> None:
    """``docbench answers DIR``: compute (or read the cached) answers and print them, with
    how they were obtained (files scanned or reused, documents/s, peak memory)."""
    from rich.console import Console

    console = Console()
    data_dir = Path(data_dir)
    files = dataset_files(data_dir)
    if not files:
        console.print(f"[red]no data files (*.json, *.jsonl, *.ndjson[.gz|.zst|.lz4]) in {data_dir}[/red]")
        raise SystemExit(1)
    _verify_or_exit(console, data_dir, files, jobs, verify_full)
    log = ComputeLog()
    started = time.perf_counter()
    cpu_started = time.process_time()
    doc, source = _with_progress(
        console,
        len(files),
        lambda progress: load_or_compute(data_dir, jobs=jobs, refresh=refresh, progress=progress, log=log),
    )
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    for note in log.messages():  # a cache not used, and why
        console.print(note, style="yellow", markup=False, highlight=False)
    print_answers(doc, console)
    console.print(
        f"files {len(as_array(doc['files'], 'files'))}, documents {doc['documents']:,}, "
        f"invalid lines {doc['invalid_lines']:,}, empty lines {doc['empty_lines']:,}"
    )
    if source == "computed":
        _computed_summary(console, data_dir, log, jobs, elapsed, cpu)
    else:
        console.print(
            f"read from {source} in {elapsed:.2f} s (computed originally in "
            f"{doc.get('compute_seconds', '?')} s); --refresh recomputes"
        )
