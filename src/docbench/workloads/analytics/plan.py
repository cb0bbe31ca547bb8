"""`docbench plan --scale 1000m`: what a scale will need before anything runs.

Per system and variant: the database's bytes on disk, its WAL/temporary bytes, load time,
query time and memory, extrapolated from the complete analytics results of that
system/variant on this machine (the method is printed beside every figure; with no result to
extrapolate from, the figure is a stated guess from the dataset's raw size). The dataset
itself counts when it still has to be generated. The plan refuses (non-zero exit, nothing
started or written) when the disk cannot hold it; `docbench run` makes the same check before
it starts a scale.

How: with results at two scales at least 3x apart (e.g. 1m and 10m), each figure follows the
power law through the two largest (value ~ N^b): sizes and load times come out close to
linear, query memory far below it (aggregation state grows with distinct users, not with
documents), a step that grows faster than the data shows as b > 1. With one scale only, the
figures are linear and said to be; a linear memory figure is then an upper bound.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docbench.core import paths
from docbench.core.jsontypes import JsonObject, as_array, as_float, as_int, object_or_empty, optional_float
from docbench.core.units import count_label, parse_count
from docbench.results import load_results
from docbench.results.environment import machine_slug
from docbench.systems import REGISTERED, adapter_variants, engine_class

# Bytes per generated document (Bluesky events as JSONBench publishes them: 1000m documents
# are about 482 GB of raw ndjson and 127 GB as zstd). Used when no dataset is here to measure.
RAW_BYTES_PER_DOC = 482
ZSTD_BYTES_PER_DOC = 127
# With no result of a system to extrapolate from: its database as large as the raw data.
GUESS_DB_PER_RAW_BYTE = 1.0
# Room kept free beyond the plan (filesystem metadata, logs, other writers).
HEADROOM = 1.10


@dataclass
class SystemNeed:
    system: str
    variant: str
    database_bytes: int
    temp_bytes: int
    load_seconds: float | None
    query_seconds: float | None
    memory_bytes: int | None
    basis: str


@dataclass
class Plan:
    documents: int
    label: str
    dataset_dir: Path
    dataset_bytes: int
    dataset_basis: str
    needs: list[SystemNeed] = field(default_factory=list)
    free: dict[str, int] = field(default_factory=dict)
    # docbench removes a variant's database once its result is written, unless told to keep
    # them (--keep-databases): then they add up.
    keep_databases: bool = False

    @property
    def disk_needed(self) -> int:
        each = [n.database_bytes + n.temp_bytes for n in self.needs]
        if self.keep_databases:
            databases = sum(n.database_bytes for n in self.needs) + max(
                (n.temp_bytes for n in self.needs), default=0
            )
        else:  # runs are sequential: the largest one at a time
            databases = max(each, default=0)
        return int((self.dataset_bytes + databases) * HEADROOM)

    @property
    def disk_free(self) -> int:
        return min(self.free.values()) if self.free else 0

    @property
    def fits(self) -> bool:
        return self.disk_needed <= self.disk_free


def _loaded(document: JsonObject) -> int:
    """The documents a result's system counted (its runs to scale from all have them)."""
    return as_int(document["num_loaded_documents"], "num_loaded_documents")


def _figure(value: object, what: str) -> float:
    """A figure of a result, 0 when absent."""
    return as_float(value or 0, what)


def _measured_runs(documents: list[JsonObject], system: str, variant: str) -> list[JsonObject]:
    """The complete local results of this system/variant, the latest per scale, smallest
    scale first (the bases to scale from)."""
    mine = [
        d
        for d in documents
        if d.get("workload") == "analytics"
        and d.get("system") == system
        and d.get("variant") == variant
        and d.get("complete")
        and d.get("num_loaded_documents")
        and not d.get("imported")
        and d.get("machine_slug", machine_slug()) == machine_slug()
    ]
    latest: dict[float, JsonObject] = {}
    for document in sorted(mine, key=lambda d: str(d.get("started_at") or d.get("date") or "")):
        latest[round(math.log10(_loaded(document)), 1)] = document
    return sorted(latest.values(), key=_loaded)


def _tries(document: JsonObject, key: str) -> list[float]:
    """Every try's figure of a per-query table (``result``, ``memory_usage``), failed ones left out."""
    rows = as_array(document.get(key) or [], key)
    return [as_float(t, key) for row in rows for t in as_array(row or [], key) if t is not None]


def _query_seconds(document: JsonObject) -> float:
    return sum(_tries(document, "result"))


def _peak_memory(document: JsonObject) -> float | None:
    memory = [m for m in _tries(document, "memory_usage") if m]
    return max(memory) if memory else None


def _size(document: JsonObject) -> float:
    storage = object_or_empty(document.get("storage") or None)
    return max(_figure(document.get("total_size"), "total_size"), _figure(storage.get("on_disk"), "on_disk"))


def _wal(document: JsonObject) -> float:
    detail = object_or_empty(object_or_empty(document.get("storage") or None).get("detail") or None)
    return _figure(detail.get("wal_bytes"), "wal_bytes")


def _label(document: JsonObject) -> str:
    return count_label(as_int(document.get("dataset_size") or _loaded(document), "dataset_size"))


class Scaler:
    """Extrapolates a figure from measured runs to `documents`: with two scales at least 3x
    apart, along the power law through the two largest (value ~ N^b, b clamped to [0, 2]:
    query memory grows with distinct users, far slower than documents; a merge can grow
    faster); with one scale, linearly (and says so)."""

    def __init__(self, runs: list[JsonObject], documents: int) -> None:
        self.runs = runs
        self.documents = documents
        self.last = runs[-1]
        self.pair = None
        if len(runs) >= 2 and _loaded(runs[-1]) >= 3 * _loaded(runs[-2]):
            self.pair = (runs[-2], runs[-1])

    def scale(self, figure: Callable[[JsonObject], float | None]) -> float | None:
        last = figure(self.last)
        if last is None:
            return None
        n_last = _loaded(self.last)
        exponent = 1.0
        if self.pair is not None:
            first = figure(self.pair[0])
            if first and last:
                ratio = _loaded(self.pair[1]) / _loaded(self.pair[0])
                exponent = min(2.0, max(0.0, math.log(last / first) / math.log(ratio)))
        return last * (self.documents / n_last) ** exponent

    def basis(self) -> str:
        date = str(self.last.get("started_at") or self.last.get("date"))[:10]
        if self.pair is not None:
            return (
                f"power law through the {_label(self.pair[0])} and {_label(self.pair[1])} "
                f"runs (latest {date})"
            )
        factor = self.documents / _loaded(self.last)
        return f"x{factor:,.1f} of the {_label(self.last)} run of {date} (linear: one scale measured)"


def system_need(
    system: str, variant: str, documents: int, raw_bytes: int, runs: list[JsonObject]
) -> SystemNeed:
    if not runs:
        return SystemNeed(
            system,
            variant,
            int(raw_bytes * GUESS_DB_PER_RAW_BYTE),
            0,
            None,
            None,
            None,
            "guess: no result of this system here (database taken as large as the raw data)",
        )
    scaler = Scaler(runs, documents)
    memory = scaler.scale(_peak_memory)
    return SystemNeed(
        system,
        variant,
        int(scaler.scale(_size) or 0),
        int(scaler.scale(_wal) or 0),
        scaler.scale(lambda d: optional_float(d.get("load_time") or None, "load_time")),
        scaler.scale(_query_seconds),
        int(memory) if memory is not None else None,
        scaler.basis(),
    )


def dataset_need(label: str, documents: int, compress: str) -> tuple[Path, int, str]:
    directory = paths.datasets_dir() / f"bluesky-{label}"
    if (directory / "dataset.json").exists():
        return directory, 0, "already generated"
    per_doc = ZSTD_BYTES_PER_DOC if compress == "zstd" else RAW_BYTES_PER_DOC
    form = "zstd-compressed" if compress == "zstd" else "plain"
    return directory, documents * per_doc, f"to generate: {per_doc} bytes per document, {form} ndjson"


def _filesystem_free(path: Path) -> int:
    probe = path
    while not probe.exists():
        probe = probe.parent
    return shutil.disk_usage(probe).free


def make_plan(
    scale: str,
    system_names: list[str] | None = None,
    variants: list[str] | None = None,
    results_dirs: list[Path] | None = None,
    compress: str = "none",
    keep_databases: bool = False,
) -> Plan:
    documents = parse_count(scale)
    label = count_label(documents)
    dataset_dir, dataset_bytes, dataset_basis = dataset_need(label, documents, compress)
    plan = Plan(documents, label, dataset_dir, dataset_bytes, dataset_basis, keep_databases=keep_databases)
    known = load_results(results_dirs or [paths.results_dir()])
    raw = documents * RAW_BYTES_PER_DOC
    names = system_names or [n for n in REGISTERED if engine_class(n).runs_by_default]
    for name in names:
        for variant in adapter_variants(name, "analytics"):
            if not variant.chosen(variants):  # as `docbench run`
                continue
            plan.needs.append(
                system_need(name, variant.name, documents, raw, _measured_runs(known, name, variant.name))
            )
    # The dataset and the databases may live on different filesystems: the tighter one counts.
    plan.free = {
        str(paths.datasets_dir()): _filesystem_free(paths.datasets_dir()),
        str(paths.work_dir()): _filesystem_free(paths.work_dir()),
    }
    return plan


def refusal(plan: Plan) -> str | None:
    """Why the plan cannot run here, or None."""
    if plan.fits:
        return None
    return (
        f"the {plan.label} run needs about {plan.disk_needed / 1e9:,.1f} GB of disk "
        f"(dataset {plan.dataset_bytes / 1e9:,.1f} GB + "
        f"{'every database' if plan.keep_databases else 'the largest database'} + WAL, "
        f"+{HEADROOM - 1:.0%}) "
        f"but only {plan.disk_free / 1e9:,.1f} GB are free; run fewer systems or variants "
        "(--systems, --variants), a compressed dataset (generate --compress zstd), or free space"
    )


def print_plan(plan: Plan, console: Any) -> None:
    from rich.table import Table

    def gb(value: float | None) -> str:
        return "-" if value is None else f"{value / 1e9:,.2f}"

    def hours(value: float | None) -> str:
        return "?" if value is None else f"{value / 3600:,.2f}"

    table = Table(title=f"Plan for {plan.label} ({plan.documents:,} documents) on this machine")
    for column in (
        "system/variant",
        "database GB",
        "WAL/temp GB",
        "load h",
        "queries h",
        "query memory GB",
        "basis",
    ):
        table.add_column(column, justify="left" if column in ("system/variant", "basis") else "right")
    for need in plan.needs:
        table.add_row(
            f"{need.system}/{need.variant}",
            gb(need.database_bytes),
            gb(need.temp_bytes),
            hours(need.load_seconds),
            hours(need.query_seconds),
            gb(need.memory_bytes),
            need.basis,
        )
    console.print(table)
    console.print(f"dataset {plan.dataset_dir}: {gb(plan.dataset_bytes)} GB ({plan.dataset_basis})")
    for where, free in plan.free.items():
        console.print(f"free on the filesystem of {where}: {gb(free)} GB")
    known = [n for n in plan.needs if n.load_seconds is not None]
    total_hours = sum((n.load_seconds or 0) + (n.query_seconds or 0) for n in known) / 3600
    unknown = len(plan.needs) - len(known)
    time = (f"{total_hours:,.1f} h of loads and queries" if known else "time unknown") + (
        f" ({unknown} run{'s' if unknown > 1 else ''} without a result here to scale from)"
        if unknown and known
        else ""
    )
    console.print(f"disk needed: {gb(plan.disk_needed)} GB (with {HEADROOM - 1:.0%} headroom); {time}")
    reason = refusal(plan)
    console.print(f"[red]does not fit: {reason}[/red]" if reason else "[green]fits on this disk[/green]")
