"""The analytics workload's part of the dashboard: its main view (selectors for systems,
variants, scale, metric and queries, a summary score, a colour-graded detail table with the
answer status on every cell, a scaling view).

The figures come from the same functions as the terminal report (``cold_time``, ``hot_time``,
the answer status, ``TRUSTED``); the page recomputes only what depends on the reader's
selection (the best per query and the geometric-mean score), with the rule of
:func:`docbench.workloads.analytics.report.score`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from docbench.results import cluster_label, load_results
from docbench.results.files import trimmed_document
from docbench.workloads.analytics.report import (
    SHIFT,
    TRUSTED,
    _dataset,
    _name,
    _status,
    cold_time,
    hot_time,
    lossless_by_variant,
)

QUERY_COUNT = 5
# JSONBench's five queries, as a reader knows them.
QUERY_TITLES = [
    "Top event types",
    "Top event types with the number of distinct users",
    "When do people use Bluesky: events per hour of the day and type",
    "Top 3 post veterans (earliest first post)",
    "Top 3 users with the longest activity",
]


# ----- the figures of one run ---------------------------------------------------------------


def is_analytics(document: dict[str, Any]) -> bool:
    return document.get("workload") == "analytics"


def analytics_documents(results_dirs: list[Path]) -> list[dict[str, Any]]:
    return [d for d in load_results(results_dirs) if is_analytics(d)]


def run_key(document: dict[str, Any]) -> str:
    """``system/variant``, the name the terminal report uses."""
    return _name(document)


def dataset_label(document: dict[str, Any]) -> str:
    return _dataset(document)


def status(document: dict[str, Any], q: int) -> str:
    return _status(document, q)


def is_imported(document: dict[str, Any]) -> bool:
    return bool(document.get("imported")) or "imported" in (document.get("tags") or [])


def memory_hot(document: dict[str, Any], q: int) -> float | None:
    """Peak bytes of query ``q`` (0-based): the least over the hot tries, as the terminal shows."""
    row = (document.get("memory_usage") or [[]] * QUERY_COUNT)[q] or []
    values = [v for v in row[1:] if v is not None] or [v for v in row if v is not None]
    return min(values) if values else None


def first_query_error(document: dict[str, Any], q: int) -> str | None:
    errors = document.get("query_errors") or [[]] * QUERY_COUNT
    row = errors[q] if q < len(errors) else None
    return next((e for e in row or [] if e), None)


def geometric_mean(values: Iterable[float]) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def loaded_share(document: dict[str, Any]) -> float | None:
    offered, loaded = document.get("dataset_size"), document.get("num_loaded_documents")
    return loaded / offered if offered and loaded is not None else None


def scaling_value(
    document: dict[str, Any], metric: str, queries: Iterable[int] = range(QUERY_COUNT)
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
            value = pick(document, q)
            if value is None or status(document, q) not in TRUSTED:
                return None
            values.append(value)
        return geometric_mean(values)
    if metric == "storage":
        return document.get("total_size")
    if metric == "load":
        return document.get("load_time")
    if metric == "quality":
        share = loaded_share(document)
        return None if share is None else 100 * share
    raise ValueError(f"unknown metric {metric!r}")


def labels(document: dict[str, Any], lossless: bool | None = None) -> dict[str, Any]:
    """The run's representation labels (the dashboard's label filters): the result's own, or
    for a result without them (imported, older) what its retains_structure says; ``lossless``
    is the latest fidelity result's for the same system/variant (None: none found)."""
    own = document.get("representation")
    if isinstance(own, dict):
        return {
            "non_default": own.get("non_default"),
            "representation": own.get("name"),
            "retains_structure": own.get("retains_structure"),
            "schema_by_hand": own.get("schema_by_hand"),
            "lossless": lossless,
        }
    retains = document.get("retains_structure")
    return {
        "representation": None,
        "retains_structure": None if retains is None else retains == "yes",
        "schema_by_hand": None,
        "lossless": lossless,
    }


def concurrency_view(document: dict[str, Any]) -> dict[str, Any] | None:
    """The concurrency levels (`--clients`) as the page draws them: per number of clients,
    QPS, latency percentiles and answers not ok, for the engine and the driver's ceiling."""
    record = document.get("concurrency")
    if not isinstance(record, dict):
        return None

    def points(levels: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for level in levels or []:
            latency = level.get("latency_ms") or {}
            sent = level.get("queries") or 0
            out.append(
                {
                    "clients": level.get("clients"),
                    "qps": level.get("qps") if sent else None,
                    "p50_ms": latency.get("p50_ms"),
                    "p99_ms": latency.get("p99_ms"),
                    "not_ok": sent - (level.get("outcomes") or {}).get("ok", 0),
                    "queries": sent,
                    "cores": (level.get("engine") or {}).get("cores"),
                    "error": level.get("error"),
                }
            )
        return out

    return {
        "mode": record.get("mode"),
        "rate": record.get("rate"),
        "duration_s": record.get("duration_s"),
        "levels": points(record.get("levels") or []),
        "ceiling": points(record.get("ceiling") or []),
    }


def ingest_view(document: dict[str, Any]) -> dict[str, Any] | None:
    """The live-ingest levels (`--ingest-rates`) as the page draws them: per level, the
    documents acknowledged and the freshness second by second, and the level's figures."""
    record = document.get("ingest")
    if not isinstance(record, dict) or not record.get("levels"):
        return None
    levels = []
    for level in record["levels"]:
        fresh = level.get("freshness_ms") or {}
        idle, during = level.get("queries_idle") or {}, level.get("queries_during") or {}
        levels.append(
            {
                "target": level.get("target_rate"),
                "offered_rate": level.get("offered_rate"),
                "sustained_rate": level.get("sustained_rate"),
                "lag_max_s": (level.get("lag_s") or {}).get("max"),
                "refused": level.get("refused"),
                "freshness_by": fresh.get("method", "count"),
                "freshness_p50_ms": fresh.get("p50"),
                "freshness_p99_ms": fresh.get("p99"),
                "queries_idle_p50_ms": idle.get("p50_ms"),
                "queries_during_p50_ms": during.get("p50_ms"),
                "queries_idle_p99_ms": idle.get("p99_ms"),
                "queries_during_p99_ms": during.get("p99_ms"),
                "exact": level.get("exact"),
                "final_count": level.get("final_count"),
                "expected_count": level.get("expected_count"),
                "error": level.get("error"),
                "rate_points": [[p["second"], p["acknowledged"]] for p in level.get("timeline") or []],
                "freshness_points": _freshness_points(level),
            }
        )
    return {"duration_s": record.get("duration_s"), "clients": record.get("clients"), "levels": levels}


def _freshness_points(level: dict[str, Any]) -> list[list[float]]:
    """[second, freshness s]: each marker at the second it was acknowledged, or (no markers)
    the median by count of the batches acknowledged in each second."""
    fresh = level.get("freshness_ms") or {}
    if fresh.get("method") == "markers":
        return [[second, ms / 1000] for second, ms in fresh.get("points") or []]
    return [
        [p["second"], p["freshness_p50_ms"] / 1000]
        for p in level.get("timeline") or []
        if p.get("freshness_p50_ms")
    ]


def run_view(document: dict[str, Any], key: str, lossless: bool | None = None) -> dict[str, Any]:
    """What the page needs about one analytics run, figures computed as the terminal does."""
    answers = document.get("answers") or []
    storage = document.get("storage") or {}
    errors = document.get("load_errors") or {}
    first = (errors.get("first") or [None])[0] if errors.get("count") else None
    dataset = document.get("dataset") or {}
    return {
        "key": key,
        "system": (document.get("display_name") or document["system"])
        + (f" [{cluster_label(document)}]" if cluster_label(document) else ""),
        "cluster": document.get("cluster"),
        "system_name": document.get("system"),
        "variant": document.get("variant", "-"),
        "role": document.get("variant_role", ""),
        "labels": labels(document, lossless),
        "concurrency": concurrency_view(document),
        "ingest": ingest_view(document),
        "dataset": dataset_label(document),
        "dataset_size": document.get("dataset_size"),
        "imported": is_imported(document),
        "complete": document.get("complete"),
        "error": document.get("error"),
        "cold": [cold_time(document, q) for q in range(QUERY_COUNT)],
        "hot": [hot_time(document, q) for q in range(QUERY_COUNT)],
        "memory": [memory_hot(document, q) for q in range(QUERY_COUNT)],
        "status": [status(document, q) for q in range(QUERY_COUNT)],
        "detail": [
            (answers[q] or {}).get("detail") if q < len(answers) and isinstance(answers[q], dict) else None
            for q in range(QUERY_COUNT)
        ],
        "query_error": [first_query_error(document, q) for q in range(QUERY_COUNT)],
        "timeout": document.get("timeout_seconds") or 600.0,
        "total_size": document.get("total_size"),
        "data_size": document.get("data_size"),
        "index_size": document.get("index_size"),
        "on_disk": storage.get("on_disk"),
        "loaded": document.get("num_loaded_documents"),
        "offered": document.get("dataset_size"),
        "refused": errors.get("count"),
        "first_refusal": (
            f"{first.get('file')}:{first.get('line')} {first.get('reason', '')}"
            if isinstance(first, dict)
            else None
        ),
        "load_time": document.get("load_time"),
        "load": document.get("load") or {},
        "baselines": dataset.get("baselines") or {},
        "path": document.get("_path"),
        "doc": trimmed_document(document),
    }


def unique_keys(documents: list[dict[str, Any]]) -> list[str]:
    """One key per document; a second run of the same system/variant on the same dataset
    (e.g. the same file in two result directories) gets ``#2``."""
    seen: dict[tuple[str, str], int] = {}
    keys = []
    for d in documents:
        base = run_key(d)
        n = seen.get((base, dataset_label(d)), 0) + 1
        seen[(base, dataset_label(d))] = n
        keys.append(base if n == 1 else f"{base}#{n}")
    return keys


def sort_documents(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Local runs first, by system and variant; imported ones after them."""
    return sorted(
        documents,
        key=lambda d: (is_imported(d), str(d.get("system")), str(d.get("variant", "")), d.get("_path") or ""),
    )


def datasets(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The dataset labels present, smallest first, with their size (documents offered)."""
    sizes: dict[str, int | None] = {}
    for d in documents:
        label = dataset_label(d)
        size = d.get("dataset_size")
        if size and (sizes.get(label) is None or size > (sizes[label] or 0)):
            sizes[label] = size
        else:
            sizes.setdefault(label, None)
    return [
        {"label": label, "size": size}
        for label, size in sorted(sizes.items(), key=lambda item: (item[1] is None, item[1] or 0, item[0]))
    ]


def dashboard_section(
    documents: list[dict[str, Any]], all_documents: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The dashboard's main view: every analytics run with its figures."""
    documents = sort_documents([d for d in documents if is_analytics(d)])
    keys = unique_keys(documents)
    lossless = lossless_by_variant(all_documents or [])
    return {
        "main": {
            "shift": SHIFT,
            "trusted": sorted(TRUSTED),
            "queries": QUERY_TITLES,
            "datasets": datasets(documents),
            "runs": [
                run_view(d, key, lossless.get((str(d.get("system")), str(d.get("variant")))))
                for d, key in zip(documents, keys, strict=True)
            ],
        },
        "extra": query_set_tables(documents),
    }


def query_set_tables(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A table per query set run with --queries (a tab of its own): per system/variant and
    query, the answer's check and the cold and hot seconds, named as the set names them."""
    tables = []
    for name in sorted({str(d["portable"].get("set")) for d in documents if d.get("portable")}):
        runs = [d for d in documents if (d.get("portable") or {}).get("set") == name]
        queries = [q["name"] for q in runs[0]["portable"]["queries"]]
        columns = ["system", "variant", "dataset", "correct"]
        for query in queries:
            columns += [f"{query} answer", f"{query} cold s", f"{query} hot s"]
        rows = []
        for d in runs:
            record = d["portable"]
            by_name = {q["name"]: q for q in record["queries"]}
            row: list[Any] = [d.get("system"), d.get("variant"), dataset_label(d)]
            row.append(
                f"{record.get('correct', 0)}/{len(record['queries'])}"
                + (" (all empty)" if record.get("all_empty") else "")
            )
            for query in queries:
                q = by_name.get(query, {})
                times = [t for t in q.get("result") or [] if t is not None]
                status = str(q.get("status", "-")) + (" (empty)" if q.get("empty") else "")
                row += [status, times[0] if times else None, min(times[1:]) if len(times) > 1 else None]
            rows.append(row)
        tables.append(
            {
                "workload": f"queries-{name}",
                "label": f"Queries: {name}",
                "columns": columns,
                "rows": rows,
                "docs": [trimmed_document(d) | {"_path": d.get("_path")} for d in runs],
            }
        )
    return tables
