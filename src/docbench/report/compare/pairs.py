"""Matching two result sets and comparing each matched pair, figure by figure.

Results match when they have the same identity: workload, system, variant, scale and cluster
shape (``results.files.run_identity`` with the scale of the workload's ``compared_data``: a
Bluesky dataset of N documents is the scale of N, whatever its seed or directory, which are a
warning). Of several results of one identity
in a set, the one compared is the latest complete run, preferring the contender's machine and
data on the baseline's side; the others are named in a warning. Wherever the two results of a
pair differ in what they measured (dataset, variant settings, engine version, machine, tries,
an incomplete run) the pair carries a warning: the ratios are still computed, the reader judges.
A contender result without a pair is explained against the closest baseline result.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from docbench.core.iolimit import difference as io_limit_difference
from docbench.core.jsontypes import JsonObject, JsonValue, as_object, object_or_empty
from docbench.core.units import parse_count
from docbench.report.compare.noise import NoiseModel
from docbench.report.compare.ratios import MetricComparison, compare_measure
from docbench.report.compare.sets import NotCompared, ResultSet
from docbench.results.files import latest_documents, run_identity
from docbench.workloads import REGISTERED as WORKLOADS
from docbench.workloads import workload as workload_named
from docbench.workloads.measures import ComparedData, Measure

Key = tuple[str, str, str, str, str]  # workload, system, variant, scale, cluster shape


@dataclass(frozen=True)
class Difference:
    kind: str  # dataset | settings | version | machine | tries | incomplete | others | counterpart
    message: str


@dataclass
class Pair:
    key: Key
    baseline: JsonObject
    contender: JsonObject
    metrics: list[MetricComparison]
    warnings: list[Difference]
    baseline_others: list[str] = field(default_factory=list)
    contender_others: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return identity_text(self.key)


@dataclass(frozen=True)
class Unmatched:
    """Why a contender result has no pair: its identity against the closest baseline's."""

    document: JsonObject
    closest: JsonObject | None
    why: str


@dataclass
class Comparison:
    baseline: ResultSet
    contender: ResultSet
    threshold: float
    pairs: list[Pair]
    only_baseline: list[JsonObject]
    only_contender: list[JsonObject]
    not_compared: list[tuple[str, NotCompared]]  # (set label, why)
    # Each of only_contender (same order): its identity against the closest baseline result's
    unmatched: list[Unmatched] = field(default_factory=list)
    # The noise test's significance level and run-to-run floor (noise.py)
    noise: NoiseModel = field(default_factory=NoiseModel)

    @property
    def regressions(self) -> list[tuple[Pair, MetricComparison]]:
        return [(p, m) for p in self.pairs for m in p.metrics if m.regression]


def data_of(document: JsonObject) -> ComparedData:
    """The data a result is matched on (its workload's ``compared_data``)."""
    name = str(document.get("workload", "analytics"))
    if name not in WORKLOADS:
        return ComparedData(scale=str(document.get("dataset_label")))
    return workload_named(name).compared_data(document)


def key_of(document: JsonObject) -> Key:
    """The result's identity for matching: its scale is its data's (``data_of``: a Bluesky
    dataset of 1,000,000 documents is JSONBench's 1m, whatever its seed or directory)."""
    workload, system, variant, _label, cluster = run_identity(document)
    return workload, system, variant, data_of(document).scale, cluster


def identity_text(key: Key) -> str:
    """A pair's name, an identity in messages: "analytics clickhouse/jsonbench [3n/3s/1r] 1m"."""
    workload, system, variant, scale, cluster = key
    return f"{workload} {system}/{variant}" + (f" [{cluster}]" if cluster else "") + f" {scale}"


def _scale_order(label: str) -> tuple[int, str]:
    try:
        return parse_count(label), label
    except ValueError:
        return 0, label


def _order(key: Key) -> tuple[int, str, str, str, tuple[int, str], str]:
    workload, system, variant, scale, cluster = key
    place = WORKLOADS.index(workload) if workload in WORKLOADS else len(WORKLOADS)
    return place, workload, system, variant, _scale_order(scale), cluster


def dataset_identity(document: JsonObject) -> str | None:
    """The data's fingerprint; for generated key-value data (no files) its parameters."""
    if document.get("dataset_fingerprint"):
        return str(document["dataset_fingerprint"])
    dataset = document.get("dataset")
    if isinstance(dataset, dict) and dataset.get("kind"):
        return json.dumps(dataset, sort_keys=True)
    return None


def _rank(document: JsonObject, like: JsonObject | None) -> tuple[bool, bool, bool, str, str]:
    same_machine = like is not None and document.get("machine") == like.get("machine")
    same_data = like is not None and dataset_identity(document) == dataset_identity(like)
    return (
        same_machine,
        same_data,
        bool(document.get("complete")),
        str(document.get("started_at") or ""),
        str(document.get("_path")),
    )


def _grouped(documents: list[JsonObject]) -> dict[Key, list[JsonObject]]:
    groups: dict[Key, list[JsonObject]] = {}
    for document in latest_documents(documents):
        groups.setdefault(key_of(document), []).append(document)
    return groups


def _pick(candidates: list[JsonObject], like: JsonObject | None) -> tuple[JsonObject, list[str]]:
    ordered = sorted(candidates, key=lambda d: _rank(d, like), reverse=True)
    return ordered[0], [str(d.get("_path")) for d in ordered[1:]]


# ----- what the two measured ------------------------------------------------------------------


def _settings_difference(baseline_settings: JsonValue, contender_settings: JsonValue) -> str | None:
    if baseline_settings is None:
        return "variant settings: the baseline's are not known"
    if contender_settings is None:
        return "variant settings: the contender's are not known"
    if baseline_settings == contender_settings:
        return None
    baseline = as_object(baseline_settings, "the baseline's variant_settings")
    contender = as_object(contender_settings, "the contender's variant_settings")
    keys = sorted(set(baseline) | set(contender), key=str)
    changes = [
        f"{k}: {baseline.get(k, '(none)')!r} -> {contender.get(k, '(none)')!r}"
        for k in keys
        if baseline.get(k) != contender.get(k)
    ]
    return "variant settings differ: " + "; ".join(changes)


def _dataset_difference(baseline: JsonObject, contender: JsonObject) -> str | None:
    b, c = dataset_identity(baseline), dataset_identity(contender)
    if b is not None and b == c:
        return None
    b_data, c_data = data_of(baseline), data_of(contender)
    if (
        b_data.documents is not None
        and (b_data.kind, b_data.documents) == (c_data.kind, c_data.documents)
        and b_data.origin != c_data.origin
    ):
        # Matched on the kind and number of documents (a generated 1m of seed 11 is JSONBench's
        # 1m): where the two sets of documents come from (seed, directory) is this warning.
        return (
            f"dataset: the same kind and number of documents ({(b_data.kind or '').capitalize()}, "
            f"{b_data.documents:,} documents), not the same documents (baseline {b_data.origin}, "
            f"contender {c_data.origin}): sizes and times are compared across data"
        )
    if b is None or c is None:
        side, other = ("baseline", baseline) if b is None else ("contender", contender)
        source = object_or_empty(other.get("dataset")).get("source") or "no fingerprint recorded"
        known, data = (c, c_data) if b is None else (b, b_data)
        known_text = f"{known} ({data.describe()})" if data.provenance else str(known)
        return f"dataset: the {side}'s data is not fingerprinted ({source}); the other's is {known_text}"
    return f"dataset: not the same data (baseline {b}, contender {c})"


def _machine_difference(baseline: JsonObject, contender: JsonObject) -> str | None:
    b, c = baseline.get("machine"), contender.get("machine")
    if b == c:
        return None
    return (
        f"machine: the baseline ran on {b!r}, the contender on {c!r}: times are compared across "
        "machines (sizes and counts do not depend on the machine)"
    )


def differences(baseline: JsonObject, contender: JsonObject) -> list[Difference]:
    """Every way the two results differ in what they measured."""
    found: list[Difference] = []
    for kind, text in (
        ("dataset", _dataset_difference(baseline, contender)),
        (
            "settings",
            _settings_difference(baseline.get("variant_settings"), contender.get("variant_settings")),
        ),
        ("machine", _machine_difference(baseline, contender)),
        (
            "io_limit",
            io_limit_difference(
                object_or_empty(baseline.get("io_limit")), object_or_empty(contender.get("io_limit"))
            ),
        ),
    ):
        if text:
            found.append(Difference(kind, text))
    if baseline.get("version") != contender.get("version"):
        found.append(
            Difference(
                "version",
                f"engine version: baseline {baseline.get('version')!r}, "
                f"contender {contender.get('version')!r}",
            )
        )
    if baseline.get("tries") != contender.get("tries"):
        found.append(
            Difference(
                "tries",
                f"tries per query: baseline {baseline.get('tries')}, contender {contender.get('tries')}",
            )
        )
    for side, document in (("baseline", baseline), ("contender", contender)):
        if not document.get("complete"):
            found.append(Difference("incomplete", f"the {side}'s run is incomplete: {document.get('_path')}"))
        if document.get("jsonbench_counterpart"):
            counterpart = as_object(document["jsonbench_counterpart"], "jsonbench_counterpart")
            note = f": {counterpart['note']}" if counterpart.get("note") else ""
            found.append(
                Difference(
                    "counterpart",
                    f"the {side} is JSONBench's {counterpart['jsonbench']!r} "
                    f"(docbench {document['system']}/{document['variant']}){note}",
                )
            )
    return found


# ----- pairs ------------------------------------------------------------------------------------


def compare_metrics(
    baseline: list[Measure],
    contender: list[Measure],
    threshold: float,
    noise: NoiseModel | None = None,
) -> list[MetricComparison]:
    """Every metric of either side, in the contender's order (then the baseline's own)."""
    base = {m.metric: m for m in baseline}
    cont = {m.metric: m for m in contender}
    order = list(cont) + [m for m in base if m not in cont]
    return [compare_measure(base.get(m), cont.get(m), threshold, noise) for m in order]


def _others_warning(side: str, others: list[str], chosen: JsonObject) -> Difference:
    return Difference(
        "others",
        f"{len(others)} other result(s) of this identity in the {side} left out (another machine, "
        f"data or an earlier run); compared: {chosen.get('_path')}",
    )


def _pair(
    key: Key,
    baseline_candidates: list[JsonObject],
    contender_candidates: list[JsonObject],
    threshold: float,
    noise: NoiseModel,
) -> Pair:
    contender, contender_others = _pick(contender_candidates, None)
    baseline, baseline_others = _pick(baseline_candidates, contender)
    measured = workload_named(key[0])
    metrics = compare_metrics(
        measured.measures(baseline) or [], measured.measures(contender) or [], threshold, noise
    )
    warnings = differences(baseline, contender)
    if not any(m.machine_bound and m.baseline is not None and m.contender is not None for m in metrics):
        warnings = [w for w in warnings if w.kind != "machine"]
    if baseline_others:
        warnings.append(_others_warning("baseline", baseline_others, baseline))
    if contender_others:
        warnings.append(_others_warning("contender", contender_others, contender))
    return Pair(key, baseline, contender, metrics, warnings, baseline_others, contender_others)


def _comparable(result_set: ResultSet) -> tuple[list[JsonObject], list[tuple[str, NotCompared]]]:
    """The set's documents of workloads that can be compared; the others, with the reason."""
    kept, left = [], [(result_set.label, n) for n in result_set.not_compared]
    for document in result_set.documents:
        name = str(document.get("workload"))
        path, shown = str(document.get("_path")), f"{name} {document.get('system')}/{document.get('variant')}"
        if name not in WORKLOADS:
            left.append((result_set.label, NotCompared(path, shown, f"unknown workload {name!r}")))
        elif workload_named(name).compare is None:
            left.append(
                (result_set.label, NotCompared(path, shown, f"the {name} workload has no comparison"))
            )
        else:
            kept.append(document)
    return kept, left


# ----- results without a pair -----------------------------------------------------------------


def _scale_distance(a: ComparedData, b: ComparedData) -> float:
    if a.scale == b.scale:
        return 0.0
    if a.documents and b.documents:
        return abs(math.log(a.documents / b.documents))
    return math.inf


def _closeness(
    document: Key, data: ComparedData, other: Key, other_data: ComparedData
) -> tuple[bool, bool, bool, bool, bool, float]:
    workload, system, variant, _scale, cluster = document
    return (
        workload == other[0],
        system == other[1],
        system == other[1] and variant == other[2],  # a variant's name means nothing elsewhere
        cluster == other[4],
        data.kind == other_data.kind,
        -_scale_distance(data, other_data),
    )


def _data_text(data: ComparedData, other: ComparedData) -> str:
    """What the two scales stand for, when the kind of either side's data is known."""
    if data.documents is None and other.documents is None:
        return ""
    return f" ({data.describe()} against {other.describe()})"


def explain(document: JsonObject, baselines: list[JsonObject]) -> Unmatched:
    """Why ``document`` (a contender's) has no pair: its identity against the closest baseline
    result's (same workload, then system, variant, cluster shape, kind of data, nearest size),
    and what differs."""
    key, data = key_of(document), data_of(document)
    if not baselines:
        return Unmatched(
            document, None, f"{identity_text(key)}: the baseline has no result that can be compared"
        )
    scored = [(b, key_of(b), data_of(b)) for b in baselines]
    closest, other, other_data = max(scored, key=lambda s: _closeness(key, data, s[1], s[2]))
    names = ("workload", "system", "variant", "scale", "cluster shape")
    differs = [
        f"{name} {mine or 'one node'} against {theirs or 'one node'}"  # only a cluster shape is empty
        + (_data_text(data, other_data) if name == "scale" else "")
        for name, mine, theirs in zip(names, key, other, strict=True)
        if mine != theirs
    ]
    return Unmatched(
        document,
        closest,
        f"{identity_text(key)}: closest baseline: {identity_text(other)} ({closest.get('_path')}); "
        f"differs in {'; '.join(differs)}",
    )


def compare(
    baseline: ResultSet, contender: ResultSet, threshold: float, noise: NoiseModel | None = None
) -> Comparison:
    """``noise``: the noise test's settings (docbench compare's defaults when None)."""
    noise = noise or NoiseModel()
    base_documents, not_compared = _comparable(baseline)
    cont_documents, left = _comparable(contender)
    base_groups, cont_groups = _grouped(base_documents), _grouped(cont_documents)
    pairs = [
        _pair(key, base_groups[key], cont_groups[key], threshold, noise)
        for key in sorted(set(base_groups) & set(cont_groups), key=_order)
    ]
    only_contender = [
        _pick(cont_groups[k], None)[0] for k in sorted(set(cont_groups) - set(base_groups), key=_order)
    ]
    base_picked = [_pick(base_groups[k], None)[0] for k in sorted(base_groups, key=_order)]
    return Comparison(
        baseline=baseline,
        contender=contender,
        threshold=threshold,
        pairs=pairs,
        only_baseline=[
            _pick(base_groups[k], None)[0] for k in sorted(set(base_groups) - set(cont_groups), key=_order)
        ],
        only_contender=only_contender,
        not_compared=not_compared + left,
        unmatched=[explain(d, base_picked) for d in only_contender],
        noise=noise,
    )
