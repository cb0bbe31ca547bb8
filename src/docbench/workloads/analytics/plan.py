"""`docbench plan --scale 1000m`: what a scale will need before anything runs.

Per system and variant: the database's bytes on disk, its WAL/temporary bytes, load time,
query time and memory, extrapolated linearly in the number of documents from the largest
complete analytics result of that system/variant on this machine (the method is printed
beside every figure; with no result to extrapolate from, the figure is a stated guess from
the dataset's raw size). The dataset itself counts when it still has to be generated. The
plan refuses (non-zero exit, nothing started or written) when the disk cannot hold it;
`docbench run` makes the same check before it starts a scale.

Why linear: load time, table and index sizes grow with the documents loaded for every engine
here; query memory does not (aggregation state grows with distinct users, not documents), so
the memory figure is an upper bound and is said to be one.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docbench import paths
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
                (n.temp_bytes for n in self.needs), default=0)
        else:  # runs are sequential: the largest one at a time
            databases = max(each, default=0)
        return int((self.dataset_bytes + databases) * HEADROOM)

    @property
    def disk_free(self) -> int:
        return min(self.free.values()) if self.free else 0

    @property
    def fits(self) -> bool:
        return self.disk_needed <= self.disk_free


def _measured(documents: list[dict[str, Any]], system: str, variant: str) -> dict[str, Any] | None:
    """The largest complete local result of this system/variant (the best base to scale)."""
    mine = [d for d in documents if d.get("workload") == "analytics" and d.get("system") == system
            and d.get("variant") == variant and d.get("complete") and d.get("num_loaded_documents")
            and not d.get("imported") and d.get("machine_slug", machine_slug()) == machine_slug()]
    return max(mine, key=lambda d: d["num_loaded_documents"]) if mine else None


def _query_seconds(document: dict[str, Any]) -> float:
    return sum(t for row in document.get("result") or [] for t in row or [] if t is not None)


def system_need(system: str, variant: str, documents: int, raw_bytes: int,
                measured: dict[str, Any] | None) -> SystemNeed:
    if measured is None:
        return SystemNeed(system, variant, int(raw_bytes * GUESS_DB_PER_RAW_BYTE), 0, None, None, None,
                          "guess: no result of this system here (database taken as large as the raw data)")
    factor = documents / measured["num_loaded_documents"]
    storage = measured.get("storage") or {}
    size = max(measured.get("total_size") or 0, storage.get("on_disk") or 0)
    wal = (storage.get("detail") or {}).get("wal_bytes") or 0
    memory = [m for row in measured.get("memory_usage") or [] for m in row or [] if m]
    return SystemNeed(
        system, variant, int(size * factor), int(wal * factor),
        (measured.get("load_time") or 0) * factor, _query_seconds(measured) * factor,
        int(max(memory) * factor) if memory else None,
        f"x{factor:,.1f} of the {count_label(measured['num_loaded_documents'])} run "
        f"of {str(measured.get('started_at') or measured.get('date'))[:10]}")


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


def make_plan(scale: str, system_names: list[str] | None = None, variants: list[str] | None = None,
              results_dirs: list[Path] | None = None, compress: str = "none",
              keep_databases: bool = False) -> Plan:
    documents = parse_count(scale)
    label = count_label(documents)
    dataset_dir, dataset_bytes, dataset_basis = dataset_need(label, documents, compress)
    plan = Plan(documents, label, dataset_dir, dataset_bytes, dataset_basis, keep_databases=keep_databases)
    known = load_results(results_dirs or [paths.results_dir()])
    raw = documents * RAW_BYTES_PER_DOC
    names = system_names or [n for n in REGISTERED if engine_class(n).runs_by_default]
    for name in names:
        for variant in adapter_variants(name, "analytics"):
            if variants and variant.name not in variants:
                continue
            plan.needs.append(system_need(name, variant.name, documents, raw,
                                          _measured(known, name, variant.name)))
    # The dataset and the databases may live on different filesystems: the tighter one counts.
    plan.free = {str(paths.datasets_dir()): _filesystem_free(paths.datasets_dir()),
                 str(paths.work_dir()): _filesystem_free(paths.work_dir())}
    return plan


def refusal(plan: Plan) -> str | None:
    """Why the plan cannot run here, or None."""
    if plan.fits:
        return None
    return (f"the {plan.label} run needs about {plan.disk_needed / 1e9:,.1f} GB of disk "
            f"(dataset {plan.dataset_bytes / 1e9:,.1f} GB + "
            f"{'every database' if plan.keep_databases else 'the largest database'} + WAL, "
            f"+{HEADROOM - 1:.0%}) "
            f"but only {plan.disk_free / 1e9:,.1f} GB are free; run fewer systems or variants "
            "(--systems, --variants), a compressed dataset (generate --compress zstd), or free space")


def print_plan(plan: Plan, console: Any) -> None:
    from rich.table import Table

    def gb(value: float | None) -> str:
        return "-" if value is None else f"{value / 1e9:,.2f}"

    def hours(value: float | None) -> str:
        return "?" if value is None else f"{value / 3600:,.2f}"

    table = Table(title=f"Plan for {plan.label} ({plan.documents:,} documents) on this machine")
    for column in ("system/variant", "database GB", "WAL/temp GB", "load h", "queries h",
                   "query memory GB (upper bound)", "basis"):
        table.add_column(column, justify="left" if column in ("system/variant", "basis") else "right")
    for need in plan.needs:
        table.add_row(f"{need.system}/{need.variant}", gb(need.database_bytes), gb(need.temp_bytes),
                      hours(need.load_seconds), hours(need.query_seconds), gb(need.memory_bytes),
                      need.basis)
    console.print(table)
    console.print(f"dataset {plan.dataset_dir}: {gb(plan.dataset_bytes)} GB ({plan.dataset_basis})")
    for where, free in plan.free.items():
        console.print(f"free on the filesystem of {where}: {gb(free)} GB")
    known = [n for n in plan.needs if n.load_seconds is not None]
    total_hours = sum((n.load_seconds or 0) + (n.query_seconds or 0) for n in known) / 3600
    unknown = len(plan.needs) - len(known)
    time = (f"{total_hours:,.1f} h of loads and queries" if known else "time unknown") + (
        f" ({unknown} run{'s' if unknown > 1 else ''} without a result here to scale from)"
        if unknown and known else "")
    console.print(f"disk needed: {gb(plan.disk_needed)} GB (with {HEADROOM - 1:.0%} headroom); {time}")
    reason = refusal(plan)
    console.print(f"[red]does not fit: {reason}[/red]" if reason else "[green]fits on this disk[/green]")
