"""``docbench compare --json``: the comparison as one JSON document of a stable schema.

The schema is ``compare.schema.json`` beside this module (``"schema": "docbench-compare/1"``);
docs/compare.md describes every key. A key may be added in a later version of the same schema
name; none is renamed or given another meaning without a new name.
"""

from __future__ import annotations

import math
from typing import TypedDict

from docbench import __version__
from docbench.core.jsontypes import JsonObject, JsonValue, is_object
from docbench.report.compare.pairs import Comparison, Key, Pair, key_of
from docbench.report.compare.ratios import MetricComparison
from docbench.report.compare.sets import ResultSet
from docbench.results import now_iso

SCHEMA = "docbench-compare/1"
KEY_NAMES = ("workload", "system", "variant", "scale", "cluster")

# The document's parts, as compare.schema.json names them (each a dict when written).


class SetJson(TypedDict):
    label: str
    sources: list[str]
    results: int
    published: JsonObject | None


class KeyJson(TypedDict):
    workload: str
    system: str
    variant: str
    scale: str
    cluster: str


class SideJson(TypedDict):
    path: str
    display_name: JsonValue
    version: JsonValue
    machine: JsonValue
    dataset_fingerprint: JsonValue
    variant_settings: JsonValue
    started_at: JsonValue
    complete: bool
    imported_from: JsonValue
    others: list[str]


class MetricJson(TypedDict):
    metric: str
    label: str
    unit: str
    baseline: float | None
    contender: float | None
    ratio: float | None
    baseline_tries: list[float]
    contender_tries: list[float]
    higher_is_better: bool
    machine_bound: bool
    noise: str
    beyond_threshold: bool
    direction: str | None
    flagged: bool
    regression: bool
    note: str
    noise_estimate: bool
    p_value: float | None
    significant: bool | None
    baseline_spread: float | None
    contender_spread: float | None


class WarningJson(TypedDict):
    kind: str
    message: str


class PairJson(TypedDict):
    key: KeyJson
    name: str
    baseline: SideJson
    contender: SideJson
    warnings: list[WarningJson]
    metrics: list[MetricJson]
    flagged: int
    regressions: int


class OnlyJson(TypedDict):
    key: KeyJson
    path: str
    display_name: JsonValue


class ClosestJson(TypedDict):
    key: KeyJson
    path: str


class UnmatchedJson(OnlyJson):
    closest: ClosestJson | None
    why: str


class NotComparedJson(TypedDict):
    set: str
    path: str
    name: str
    reason: str


class SummaryJson(TypedDict):
    pairs: int
    metrics: int
    ratios: int
    flagged: int
    regressions: int
    improvements: int
    no_noise_estimate: int
    warnings: int
    only_baseline: int
    only_contender: int
    not_compared: int


class ComparisonJson(TypedDict):
    schema: str
    generated_at: str
    docbench_version: str
    threshold: float
    alpha: float
    noise_floor: float
    baseline: SetJson
    contender: SetJson
    pairs: list[PairJson]
    only_baseline: list[OnlyJson]
    only_contender: list[UnmatchedJson]
    not_compared: list[NotComparedJson]
    summary: SummaryJson
    regression: bool


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def _set(result_set: ResultSet, results: int) -> SetJson:
    return {
        "label": result_set.label,
        "sources": result_set.sources,
        "results": results,
        "published": result_set.published,
    }


def _side(document: JsonObject, others: list[str]) -> SideJson:
    imported = document.get("imported")
    return {
        "path": str(document.get("_path")),
        "display_name": document.get("display_name"),
        "version": document.get("version"),
        "machine": document.get("machine"),
        "dataset_fingerprint": document.get("dataset_fingerprint"),
        "variant_settings": document.get("variant_settings"),
        "started_at": document.get("started_at"),
        "complete": bool(document.get("complete")),
        "imported_from": imported.get("from") if is_object(imported) else None,
        "others": others,
    }


def _metric(metric: MetricComparison) -> MetricJson:
    """The metric's fields in their order, tries as lists, a non-finite figure null."""
    return {
        "metric": metric.metric,
        "label": metric.label,
        "unit": metric.unit,
        "baseline": metric.baseline,
        "contender": metric.contender,
        "ratio": _finite(metric.ratio),
        "baseline_tries": list(metric.baseline_tries),
        "contender_tries": list(metric.contender_tries),
        "higher_is_better": metric.higher_is_better,
        "machine_bound": metric.machine_bound,
        "noise": metric.noise,
        "beyond_threshold": metric.beyond_threshold,
        "direction": metric.direction,
        "flagged": metric.flagged,
        "regression": metric.regression,
        "note": metric.note,
        "noise_estimate": metric.noise_estimate,
        "p_value": _finite(metric.p_value),
        "significant": metric.significant,
        "baseline_spread": _finite(metric.baseline_spread),
        "contender_spread": _finite(metric.contender_spread),
    }


def _key(key: Key) -> KeyJson:
    workload, system, variant, scale, cluster = key
    return {"workload": workload, "system": system, "variant": variant, "scale": scale, "cluster": cluster}


def _pair(pair: Pair) -> PairJson:
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


def _only(documents: list[JsonObject]) -> list[OnlyJson]:
    return [
        {"key": _key(key_of(d)), "path": str(d.get("_path")), "display_name": d.get("display_name")}
        for d in documents
    ]


def _unmatched(comparison: Comparison) -> list[UnmatchedJson]:
    """only_contender, each with the closest baseline result and why they do not pair."""
    explained = {id(u.document): u for u in comparison.unmatched}
    found: list[UnmatchedJson] = []
    for document, entry in zip(comparison.only_contender, _only(comparison.only_contender), strict=True):
        why = explained.get(id(document))
        closest = why.closest if why else None
        found.append(
            {
                **entry,
                "closest": (
                    None
                    if closest is None
                    else {"key": _key(key_of(closest)), "path": str(closest.get("_path"))}
                ),
                "why": why.why if why else "",
            }
        )
    return found


def summary(comparison: Comparison) -> SummaryJson:
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


def to_json(comparison: Comparison) -> ComparisonJson:
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
