"""The analytics workload's part of the dashboard: its main view (selectors for systems,
variants, scale, metric and queries, a summary score, a colour-graded detail table with the
answer status on every cell, a scaling view).

The figures come from the same functions as the terminal report (``cold_time``, ``hot_time``,
the answer status, ``TRUSTED``), read from the results' model; the page recomputes only what
depends on the reader's selection (the best per query and the geometric-mean score), with the
rule of :func:`docbench.workloads.analytics.report.score`. The details panel shows the result
file as it was read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, NotRequired, TypedDict

from docbench.core.jsontypes import JsonObject, as_object
from docbench.results import cluster_label
from docbench.results.files import trimmed_document
from docbench.results.models import AnalyticsResult, RunHeader
from docbench.results.models.analytics import (
    CeilingItem,
    IngestLevel,
    Level,
    Method,
    Portable,
    RetainsStructure,
)
from docbench.workloads.analytics.report import (
    QUERY_COUNT,
    SHIFT,
    TRUSTED,
    _dataset,
    _name,
    _status,
    analytics_only,
    cold_time,
    first_refusal,
    hot_time,
    lossless_by_variant,
    memory_hot,
    query_set_name,
)

# JSONBench's five queries, as a reader knows them.
QUERY_TITLES = [
    "Top event types",
    "Top event types with the number of distinct users",
    "When do people use Bluesky: events per hour of the day and type",
    "Top 3 post veterans (earliest first post)",
    "Top 3 users with the longest activity",
]


# ----- what the page reads (dashboard.js) ---------------------------------------------------


class Labels(TypedDict):
    """A run's representation labels: the dashboard's label filters."""

    non_default: NotRequired[str | None]
    representation: str | None
    retains_structure: bool | None
    schema_by_hand: bool | None
    lossless: bool | None


class LevelPoint(TypedDict):
    """A concurrency level (the engine's, or the driver's ceiling) as a chart's point."""

    clients: int
    qps: float | None
    p50_ms: float | None
    p99_ms: float | None
    not_ok: int
    queries: int
    cores: float | None
    error: str | None


class ConcurrencyView(TypedDict):
    mode: str
    rate: float | None
    duration_s: float
    levels: list[LevelPoint]
    ceiling: list[LevelPoint]


class IngestLevelView(TypedDict):
    """A live-ingest level: its figures, and its seconds as chart points."""

    target: float | None
    offered_rate: float | None
    sustained_rate: float | None
    lag_max_s: float | None
    refused: int
    freshness_by: str
    freshness_p50_ms: float | None
    freshness_p99_ms: float | None
    queries_idle_p50_ms: float | None
    queries_during_p50_ms: float | None
    queries_idle_p99_ms: float | None
    queries_during_p99_ms: float | None
    exact: bool
    final_count: int | None
    expected_count: int
    error: str | None
    rate_points: list[list[int]]
    freshness_points: list[list[float]]


class IngestView(TypedDict):
    duration_s: float | None
    clients: int | None
    levels: list[IngestLevelView]


class RunView(TypedDict):
    """One analytics run as the page shows it: per query (Q1-Q5) its figures and status; the
    load, storage and data figures; the result file as read (the details panel)."""

    key: str
    system: str
    cluster: JsonObject | None
    system_name: str
    variant: str
    role: str
    labels: Labels
    concurrency: ConcurrencyView | None
    ingest: IngestView | None
    dataset: str
    dataset_size: int | None
    imported: bool
    complete: bool
    error: str | None
    cold: list[float | None]
    hot: list[float | None]
    memory: list[float | None]
    status: list[str]
    detail: list[str | None]
    query_error: list[str | None]
    timeout: float
    total_size: int | None
    data_size: int | None
    index_size: int | None
    on_disk: int | None
    loaded: int | None
    offered: int | None
    refused: int | None
    first_refusal: str | None
    load_time: float | None
    load: JsonObject
    baselines: dict[str, int | None]
    path: str | None
    doc: JsonObject


class DatasetView(TypedDict):
    label: str
    size: int | None


class MainView(TypedDict):
    """The dashboard's main view: the analytics runs and what the page needs to show them."""

    shift: float
    trusted: list[str]
    queries: list[str]
    datasets: list[DatasetView]
    runs: list[RunView]


class QuerySetTable(TypedDict):
    """A query set's tab: per system/variant, each query's check and its cold and hot seconds."""

    workload: str
    label: str
    columns: list[str]
    rows: list[list[Any]]
    docs: list[JsonObject]


class DashboardSection(TypedDict):
    main: MainView
    extra: list[QuerySetTable]


# ----- the figures of one run ---------------------------------------------------------------


def run_key(run: AnalyticsResult) -> str:
    """``system/variant``, the name the terminal report uses."""
    return _name(run)


def dataset_label(run: AnalyticsResult) -> str:
    return _dataset(run)


def status(run: AnalyticsResult, q: int) -> str:
    return _status(run, q)


def is_imported(run: AnalyticsResult) -> bool:
    return run.imported is not None or "imported" in run.tags


def first_query_error(run: AnalyticsResult, q: int) -> str | None:
    errors = run.query_errors or []
    row = errors[q] if q < len(errors) else None
    return next((e for e in row or [] if e), None)


def geometric_mean(values: Iterable[float]) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def loaded_share(run: AnalyticsResult) -> float | None:
    offered, loaded = run.dataset_size, run.num_loaded_documents
    return loaded / offered if offered and loaded is not None else None


def scaling_value(
    run: AnalyticsResult, metric: str, queries: Iterable[int] = range(QUERY_COUNT)
) -> float | None:
    """The figure a scaling chart plots for one run.

    Timings and memory: the geometric mean over the queries, only when every one of them has
    a trusted answer (a wrong or missing answer leaves the point out). Storage: total bytes;
    load: seconds; quality: share of the offered documents loaded, in percent.
    """
    if metric in ("hot", "cold", "memory"):
        pick = {"hot": hot_time, "cold": cold_time, "memory": memory_hot}[metric]
        values = []
        for q in queries:
            value = pick(run, q)
            if value is None or status(run, q) not in TRUSTED:
                return None
            values.append(value)
        return geometric_mean(values)
    if metric == "storage":
        return run.total_size
    if metric == "load":
        return run.load_time
    if metric == "quality":
        share = loaded_share(run)
        return None if share is None else 100 * share
    raise ValueError(f"unknown metric {metric!r}")


def labels(run: AnalyticsResult, lossless: bool | None = None) -> Labels:
    """The run's representation labels (the dashboard's label filters): the result's own, or
    for a result without them (imported, older) what its retains_structure says; ``lossless``
    is the latest fidelity result's for the same system/variant (None: none found)."""
    own = run.representation
    if own is not None:
        return {
            "non_default": own.non_default,
            "representation": own.name,
            "retains_structure": own.retains_structure,
            "schema_by_hand": own.schema_by_hand,
            "lossless": lossless,
        }
    return {
        "representation": None,
        "retains_structure": run.retains_structure is RetainsStructure.yes,
        "schema_by_hand": None,
        "lossless": lossless,
    }


def concurrency_view(run: AnalyticsResult) -> ConcurrencyView | None:
    """The concurrency levels (`--clients`) as the page draws them: per number of clients,
    QPS, latency percentiles and answers not ok, for the engine and the driver's ceiling."""
    record = run.concurrency
    if record is None:
        return None
    return {
        "mode": record.mode.value,
        "rate": record.rate,
        "duration_s": record.duration_s,
        "levels": [_level_point(level) for level in record.levels],
        "ceiling": [_level_point(level) for level in record.ceiling],
    }


def _level_point(level: Level | CeilingItem) -> LevelPoint:
    sent = level.queries or 0
    return {
        "clients": level.clients,
        "qps": level.qps if sent else None,
        "p50_ms": level.latency_ms.p50_ms,
        "p99_ms": level.latency_ms.p99_ms,
        "not_ok": sent - level.outcomes.ok,
        "queries": sent,
        "cores": level.engine.cores if level.engine else None,
        "error": level.error,
    }


def ingest_view(run: AnalyticsResult) -> IngestView | None:
    """The live-ingest levels (`--ingest-rates`) as the page draws them: per level, the
    documents acknowledged and the freshness second by second, and the level's figures."""
    record = run.ingest
    if record is None or not record.levels:
        return None
    levels = [_ingest_level(level) for level in record.levels]
    return {"duration_s": record.duration_s, "clients": record.clients, "levels": levels}


def _ingest_level(level: IngestLevel) -> IngestLevelView:
    fresh, idle, during = level.freshness_ms, level.queries_idle, level.queries_during
    return {
        "target": level.target_rate,
        "offered_rate": level.offered_rate,
        "sustained_rate": level.sustained_rate,
        "lag_max_s": level.lag_s.max if level.lag_s else None,
        "refused": level.refused,
        "freshness_by": fresh.method.value if fresh else "count",
        "freshness_p50_ms": fresh.p50 if fresh else None,
        "freshness_p99_ms": fresh.p99 if fresh else None,
        "queries_idle_p50_ms": idle.p50_ms if idle else None,
        "queries_during_p50_ms": during.p50_ms if during else None,
        "queries_idle_p99_ms": idle.p99_ms if idle else None,
        "queries_during_p99_ms": during.p99_ms if during else None,
        "exact": level.exact,
        "final_count": level.final_count,
        "expected_count": level.expected_count,
        "error": level.error,
        "rate_points": [[p.second, p.acknowledged] for p in level.timeline or []],
        "freshness_points": _freshness_points(level),
    }


def _freshness_points(level: IngestLevel) -> list[list[float]]:
    """[second, freshness s]: each marker at the second it was acknowledged, or (no markers)
    the median by count of the batches acknowledged in each second."""
    fresh = level.freshness_ms
    if fresh is not None and fresh.method is Method.markers:
        return [[second, ms / 1000] for second, ms in fresh.points or []]
    return [[p.second, p.freshness_p50_ms / 1000] for p in level.timeline or [] if p.freshness_p50_ms]


def run_view(run: AnalyticsResult, key: str, lossless: bool | None = None) -> RunView:
    """What the page needs about one analytics run, figures computed as the terminal does."""
    answers = run.answers or []
    refused = run.load_errors.count if run.load_errors else None
    shape = cluster_label(run)
    return {
        "key": key,
        "system": (run.display_name or run.system) + (f" [{shape}]" if shape else ""),
        "cluster": run.cluster.model_dump(mode="json", exclude_unset=True) if run.cluster else None,
        "system_name": run.system,
        "variant": run.variant,
        "role": run.variant_role,
        "labels": labels(run, lossless),
        "concurrency": concurrency_view(run),
        "ingest": ingest_view(run),
        "dataset": dataset_label(run),
        "dataset_size": run.dataset_size,
        "imported": is_imported(run),
        "complete": run.complete,
        "error": run.error,
        "cold": [cold_time(run, q) for q in range(QUERY_COUNT)],
        "hot": [hot_time(run, q) for q in range(QUERY_COUNT)],
        "memory": [memory_hot(run, q) for q in range(QUERY_COUNT)],
        "status": [status(run, q) for q in range(QUERY_COUNT)],
        "detail": [answers[q].detail if q < len(answers) else None for q in range(QUERY_COUNT)],
        "query_error": [first_query_error(run, q) for q in range(QUERY_COUNT)],
        "timeout": run.timeout_seconds or 600.0,
        "total_size": run.total_size,
        "data_size": run.data_size,
        "index_size": run.index_size,
        "on_disk": run.storage.on_disk if run.storage else None,
        "loaded": run.num_loaded_documents,
        "offered": run.dataset_size,
        "refused": refused,
        "first_refusal": (first_refusal(run) or None) if refused else None,
        "load_time": run.load_time,
        # The load record and the document as the file holds them (the details panel).
        "load": as_object(run.as_read.get("load") or {}, "load"),
        "baselines": run.dataset.baselines.sizes(),
        "path": run.path,
        "doc": trimmed_document(run.as_read),
    }


def unique_keys(runs: Sequence[AnalyticsResult]) -> list[str]:
    """One key per run; a second run of the same system/variant on the same dataset (e.g. the
    same file in two result directories) gets ``#2``."""
    seen: dict[tuple[str, str], int] = {}
    keys = []
    for run in runs:
        base = run_key(run)
        n = seen.get((base, dataset_label(run)), 0) + 1
        seen[(base, dataset_label(run))] = n
        keys.append(base if n == 1 else f"{base}#{n}")
    return keys


def sort_runs(runs: Iterable[AnalyticsResult]) -> list[AnalyticsResult]:
    """Local runs first, by system and variant; imported ones after them."""
    return sorted(runs, key=lambda r: (is_imported(r), r.system, r.variant, r.path or ""))


def datasets(runs: Sequence[AnalyticsResult]) -> list[DatasetView]:
    """The dataset labels present, smallest first, with their size (documents offered)."""
    sizes: dict[str, int | None] = {}
    for run in runs:
        label = dataset_label(run)
        size = run.dataset_size
        if size and (sizes.get(label) is None or size > (sizes[label] or 0)):
            sizes[label] = size
        else:
            sizes.setdefault(label, None)
    return [
        {"label": label, "size": size}
        for label, size in sorted(sizes.items(), key=lambda item: (item[1] is None, item[1] or 0, item[0]))
    ]


def dashboard_section(
    results: Sequence[RunHeader], all_results: Sequence[RunHeader] | None = None
) -> DashboardSection:
    """The dashboard's main view: every analytics run with its figures."""
    runs = sort_runs(analytics_only(results))
    keys = unique_keys(runs)
    lossless = lossless_by_variant(all_results or [])
    return {
        "main": {
            "shift": SHIFT,
            "trusted": sorted(TRUSTED),
            "queries": QUERY_TITLES,
            "datasets": datasets(runs),
            "runs": [
                run_view(run, key, lossless.get((run.system, run.variant)))
                for run, key in zip(runs, keys, strict=True)
            ],
        },
        "extra": query_set_tables(runs),
    }


def query_set_tables(runs: Sequence[AnalyticsResult]) -> list[QuerySetTable]:
    """A table per query set run with --queries (a tab of its own): per system/variant and
    query, the answer's check and the cold and hot seconds, named as the set names them."""
    with_sets = [(r, r.portable) for r in runs if r.portable is not None]
    tables: list[QuerySetTable] = []
    for name in sorted({query_set_name(portable) for _, portable in with_sets}):
        group = [(r, portable) for r, portable in with_sets if query_set_name(portable) == name]
        queries = [q.name for q in group[0][1].queries]
        columns = ["system", "variant", "dataset", "correct"]
        for query in queries:
            columns += [f"{query} answer", f"{query} cold s", f"{query} hot s"]
        tables.append(
            {
                "workload": f"queries-{name}",
                "label": f"Queries: {name}",
                "columns": columns,
                "rows": [query_set_row(run, portable, queries) for run, portable in group],
                "docs": [trimmed_document(r.as_read) | {"_path": r.path} for r, _ in group],
            }
        )
    return tables


def query_set_row(run: AnalyticsResult, record: Portable, queries: list[str]) -> list[Any]:
    """A run's row of its query set's table: per query its check, cold and hot seconds."""
    by_name = {q.name: q for q in record.queries}
    row: list[Any] = [run.system, run.variant, dataset_label(run)]
    row.append(f"{record.correct or 0}/{len(record.queries)}" + (" (all empty)" if record.all_empty else ""))
    for query in queries:
        found = by_name.get(query)
        times = [t for t in (found.result if found else None) or [] if t is not None]
        check = (found.status.value if found else "-") + (" (empty)" if found and found.empty else "")
        row += [check, times[0] if times else None, min(times[1:]) if len(times) > 1 else None]
    return row
