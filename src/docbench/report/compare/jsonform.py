"""``docbench compare --json``: the comparison as one JSON document of a stable schema.

The schema is ``compare.schema.json`` beside this module (``"schema": "docbench-compare/1"``);
docs/compare.md describes every key. A key may be added in a later version of the same schema
name; none is renamed or given another meaning without a new name.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from docbench import __version__
from docbench.report.compare.pairs import Comparison, Pair, key_of
from docbench.report.compare.ratios import MetricComparison
from docbench.report.compare.sets import ResultSet
from docbench.results import now_iso

SCHEMA = "docbench-compare/1"
KEY_NAMES = ("workload", "system", "variant", "scale", "cluster")


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def _set(result_set: ResultSet, results: int) -> dict[str, Any]:
    return {
        "label": result_set.label,
        "sources": result_set.sources,
        "results": results,
        "published": result_set.published,
    }


def _side(document: dict[str, Any], others: list[str]) -> dict[str, Any]:
    imported = document.get("imported") or {}
    return {
        "path": str(document.get("_path")),
        "display_name": document.get("display_name"),
        "version": document.get("version"),
        "machine": document.get("machine"),
        "dataset_fingerprint": document.get("dataset_fingerprint"),
        "variant_settings": document.get("variant_settings"),
        "started_at": document.get("started_at"),
        "complete": bool(document.get("complete")),
        "imported_from": imported.get("from"),
        "others": others,
    }


def _metric(metric: MetricComparison) -> dict[str, Any]:
    record = asdict(metric)
    record["baseline_tries"] = list(metric.baseline_tries)
    record["contender_tries"] = list(metric.contender_tries)
    record["ratio"] = _finite(metric.ratio)
    for key in ("p_value", "baseline_spread", "contender_spread"):
        record[key] = _finite(record[key])
    return record


def _key(key: tuple[str, ...]) -> dict[str, str]:
    return dict(zip(KEY_NAMES, key, strict=True))


def _pair(pair: Pair) -> dict[str, Any]:
    return {
        "key": _key(pair.key),
        "name": pair.name,
        "baseline": _side(pair.baseline, pair.baseline_others),
        "contender": _side(pair.contender, pair.contender_others),
        "warnings": [{"kind": w.kind, "message": w.message} for w in pair.warnings],
        "metrics": [_metric(m) for m in pair.metrics],
        "flagged": sum(m.flagged for m in pair.metrics),
        "regressions": sum(m.regression for m in pair.metrics),
    }


def _only(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"key": _key(key_of(d)), "path": str(d.get("_path")), "display_name": d.get("display_name")}
        for d in documents
    ]


def _unmatched(comparison: Comparison) -> list[dict[str, Any]]:
    """only_contender, each with the closest baseline result and why they do not pair."""
    explained = {id(u.document): u for u in comparison.unmatched}
    found = []
    for document, entry in zip(comparison.only_contender, _only(comparison.only_contender), strict=True):
        why = explained.get(id(document))
        closest = why.closest if why else None
        entry["closest"] = (
            None if closest is None else {"key": _key(key_of(closest)), "path": str(closest.get("_path"))}
        )
        entry["why"] = why.why if why else ""
        found.append(entry)
    return found


def summary(comparison: Comparison) -> dict[str, int]:
    metrics = [m for p in comparison.pairs for m in p.metrics]
    return {
        "pairs": len(comparison.pairs),
        "metrics": len(metrics),
        "ratios": sum(m.ratio is not None for m in metrics),
        "flagged": sum(m.flagged for m in metrics),
        "regressions": sum(m.regression for m in metrics),
        "improvements": sum(m.flagged and m.direction == "better" for m in metrics),
        "no_noise_estimate": sum(m.unjudged for m in metrics),
        "warnings": sum(len(p.warnings) for p in comparison.pairs),
        "only_baseline": len(comparison.only_baseline),
        "only_contender": len(comparison.only_contender),
        "not_compared": len(comparison.not_compared),
    }


def to_json(comparison: Comparison) -> dict[str, Any]:
    pairs = comparison.pairs
    return {
        "schema": SCHEMA,
        "generated_at": now_iso(),
        "docbench_version": __version__,
        "threshold": comparison.threshold,
        "alpha": comparison.noise.alpha,
        "noise_floor": comparison.noise.floor,
        "baseline": _set(comparison.baseline, len(comparison.baseline.documents)),
        "contender": _set(comparison.contender, len(comparison.contender.documents)),
        "pairs": [_pair(p) for p in pairs],
        "only_baseline": _only(comparison.only_baseline),
        "only_contender": _unmatched(comparison),
        "not_compared": [
            {"set": label, "path": n.path, "name": n.name, "reason": n.reason}
            for label, n in comparison.not_compared
        ],
        "summary": summary(comparison),
        "regression": bool(comparison.regressions),
    }
