"""The static HTML dashboard: one self-contained file with every figure, script and style inline.

``docbench report --html FILE`` writes a page in the spirit of JSONBench's: selectors for systems,
variants, scale, metric and queries, a summary score, a colour-graded detail table with the
answer status on every cell, a scaling view, generic views of other workloads, and the
environment of every result one click away. Nothing is fetched when the page is viewed, so it
works offline, attached to a mail or published as is.

The figures come from the same functions as the terminal report (``cold_time``, ``hot_time``,
the answer status, ``TRUSTED``); the page recomputes only what depends on the reader's
selection (the best per query and the geometric-mean score), with the rule of
:func:`docbench.report.terminal.score`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from docbench import __version__
from docbench.report.terminal import SHIFT, TRUSTED, _dataset, _name, _status, cold_time, hot_time
from docbench.results import load_results, now_iso, read_result

QUERY_COUNT = 5
TEMPLATE_DIR = Path(__file__).parent / "dashboard"
# Result documents of these workloads get a generic table of their scalar fields.
EXTRA_WORKLOADS = ("updates", "throughput", "storage")
# JSONBench's five queries, as a reader knows them.
QUERY_TITLES = [
    "Top event types",
    "Top event types with the number of distinct users",
    "When do people use Bluesky: events per hour of the day and type",
    "Top 3 post veterans (earliest first post)",
    "Top 3 users with the longest activity",
]
# Keys of a result document that the page does not need in the details panel (already shown
# as figures, or bulky).
_DROPPED_KEYS = {"result", "memory_usage", "engine_time", "bytes_read", "_path"}
_PLAN_CHARS = 4000


# ----- the figures of one run ---------------------------------------------------------------


def is_analytics(document: dict[str, Any]) -> bool:
    return document.get("workload", "analytics") == "analytics"


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
    errors = (document.get("query_errors") or [[]] * QUERY_COUNT)
    row = errors[q] if q < len(errors) else None
    return next((e for e in row or [] if e), None)


def geometric_mean(values: Iterable[float]) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def loaded_share(document: dict[str, Any]) -> float | None:
    offered, loaded = document.get("dataset_size"), document.get("num_loaded_documents")
    return loaded / offered if offered and loaded is not None else None


def scaling_value(document: dict[str, Any], metric: str,
                  queries: Iterable[int] = range(QUERY_COUNT)) -> float | None:
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


def _trimmed(document: dict[str, Any]) -> dict[str, Any]:
    """The document as the details panel shows it: without the figures and the bulky parts."""
    trimmed = {k: v for k, v in document.items() if k not in _DROPPED_KEYS}
    if isinstance(trimmed.get("answers"), list):
        trimmed["answers"] = [{k: v for k, v in a.items() if k != "rows"}
                              if isinstance(a, dict) else a for a in trimmed["answers"]]
    if isinstance(trimmed.get("plans"), list):
        trimmed["plans"] = [p[:_PLAN_CHARS] + ("…" if len(p) > _PLAN_CHARS else "")
                            if isinstance(p, str) else p for p in trimmed["plans"]]
    if isinstance(trimmed.get("error_traceback"), str):
        trimmed["error_traceback"] = trimmed["error_traceback"][-_PLAN_CHARS:]
    return trimmed


def run_view(document: dict[str, Any], key: str) -> dict[str, Any]:
    """What the page needs about one analytics run, figures computed as the terminal does."""
    answers = document.get("answers") or []
    storage = document.get("storage") or {}
    errors = document.get("load_errors") or {}
    first = (errors.get("first") or [None])[0] if errors.get("count") else None
    dataset = document.get("dataset") or {}
    return {
        "key": key,
        "system": document.get("system"),
        "system_name": document.get("system_name") or document.get("system"),
        "variant": document.get("variant", "-"),
        "role": document.get("variant_role", ""),
        "dataset": dataset_label(document),
        "dataset_size": document.get("dataset_size"),
        "imported": is_imported(document),
        "complete": document.get("complete"),
        "error": document.get("error"),
        "cold": [cold_time(document, q) for q in range(QUERY_COUNT)],
        "hot": [hot_time(document, q) for q in range(QUERY_COUNT)],
        "memory": [memory_hot(document, q) for q in range(QUERY_COUNT)],
        "status": [status(document, q) for q in range(QUERY_COUNT)],
        "detail": [(answers[q] or {}).get("detail") if q < len(answers) and
                   isinstance(answers[q], dict) else None for q in range(QUERY_COUNT)],
        "query_error": [first_query_error(document, q) for q in range(QUERY_COUNT)],
        "timeout": document.get("timeout_seconds") or 600.0,
        "total_size": document.get("total_size"),
        "data_size": document.get("data_size"),
        "index_size": document.get("index_size"),
        "on_disk": storage.get("on_disk"),
        "loaded": document.get("num_loaded_documents"),
        "offered": document.get("dataset_size"),
        "refused": errors.get("count"),
        "first_refusal": (f"{first.get('file')}:{first.get('line')} {first.get('reason', '')}"
                          if isinstance(first, dict) else None),
        "load_time": document.get("load_time"),
        "load": document.get("load") or {},
        "baselines": dataset.get("baselines") or {},
        "path": document.get("_path"),
        "doc": _trimmed(document),
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
    return sorted(documents, key=lambda d: (is_imported(d), str(d.get("system_name") or
                                                               d.get("system")),
                                            str(d.get("variant", "")), d.get("_path") or ""))


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
    return [{"label": label, "size": size} for label, size in
            sorted(sizes.items(), key=lambda item: (item[1] is None, item[1] or 0, item[0]))]


# ----- other workloads --------------------------------------------------------------------


def extra_documents(results_dirs: list[Path]) -> list[dict[str, Any]]:
    """Result documents of the updates / throughput / storage workloads (any shape)."""
    documents = []
    for directory in results_dirs:
        candidates = [directory] if directory.is_file() else sorted(directory.rglob("*.json"))
        for path in candidates:
            if path.name.startswith("."):
                continue
            document = read_result(path)
            if isinstance(document, dict) and document.get("workload") in EXTRA_WORKLOADS:
                document.setdefault("_path", str(path))
                documents.append(document)
    return documents


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def throughput_table(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The throughput runs, one row each, as the terminal report prints them."""
    from docbench.workloads.throughput.report import COLUMNS, run_row

    rows = [run_row(d, run) for d in docs for run in d.get("runs", [])]
    return {"workload": "throughput", "columns": list(COLUMNS), "rows": rows,
            "docs": [_trimmed(d) | {"_path": d.get("_path")} for d in docs]}


# Workloads whose result documents hold a list of runs: their own table builder.
RUN_TABLES = {"throughput": throughput_table}


def workload_tables(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One table per workload present: its own (RUN_TABLES) or, generically, its documents'
    top-level scalar fields."""
    tables = []
    first_columns = ["system", "system_name", "variant", "dataset", "date", "version"]
    for workload in EXTRA_WORKLOADS:
        docs = [d for d in documents if d.get("workload") == workload]
        if not docs:
            continue
        if workload in RUN_TABLES:
            tables.append(RUN_TABLES[workload](docs))
            continue
        found: list[str] = []
        for d in docs:
            for key, value in d.items():
                if key.startswith("_") or key in ("workload", "format") or not _scalar(value):
                    continue
                if key not in found:
                    found.append(key)
        columns = [c for c in first_columns if c in found or c == "dataset"]
        columns += [c for c in found if c not in columns]
        rows = []
        for d in docs:
            row = []
            for column in columns:
                value = d.get(column)
                if column == "dataset" and isinstance(value, dict):
                    value = value.get("label")
                row.append(value if _scalar(value) else None)
            rows.append(row)
        tables.append({"workload": workload, "columns": columns, "rows": rows,
                       "docs": [_trimmed(d) | {"_path": d.get("_path")} for d in docs]})
    return tables


# ----- the page ---------------------------------------------------------------------------


def build_payload(documents: list[dict[str, Any]],
                  extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    documents = sort_documents([d for d in documents if is_analytics(d)])
    keys = unique_keys(documents)
    return {
        "generated_at": now_iso(),
        "docbench_version": __version__,
        "shift": SHIFT,
        "trusted": sorted(TRUSTED),
        "queries": QUERY_TITLES,
        "datasets": datasets(documents),
        "runs": [run_view(d, key) for d, key in zip(documents, keys, strict=True)],
        "workloads": workload_tables(extra or []),
    }


def _template(name: str) -> str:
    return (TEMPLATE_DIR / name).read_text(encoding="utf-8")


def _finite(value: Any) -> Any:
    """NaN and infinities (which JSON cannot carry) become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _json_for_script(payload: dict[str, Any]) -> str:
    """JSON that is safe inside <script>: no '</script>', no '<!--', no U+2028/2029 surprises."""
    text = json.dumps(_finite(payload), ensure_ascii=False, allow_nan=False, default=str,
                      separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def render_dashboard(payload: dict[str, Any]) -> str:
    page = _template("dashboard.html")
    parts = {"/*DOCBENCH_STYLE*/": _template("dashboard.css"),
             "/*DOCBENCH_SCRIPT*/": _template("dashboard.js"),
             "/*DOCBENCH_DATA*/": _json_for_script(payload)}
    for placeholder, text in parts.items():
        before, found, after = page.partition(placeholder)
        if not found:
            raise ValueError(f"dashboard template lacks {placeholder}")
        page = before + text.replace("</script", "<\\/script") + after
    return page


def write_dashboard(results_dirs: list[Path], out: Path) -> tuple[Path, int]:
    """Write the dashboard of every result under ``results_dirs``; returns (path, runs shown)."""
    documents = analytics_documents(results_dirs)
    payload = build_payload(documents, extra_documents(results_dirs))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(render_dashboard(payload), encoding="utf-8")
    tmp.replace(out)
    return out, len(payload["runs"])
