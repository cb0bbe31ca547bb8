"""One figure of two results: the ratio contender / baseline, the noise, the flag.

- ``ratio``: contender / baseline (1 when both are 0; None when either is missing or only the
  baseline is 0).
- ``noise``: "separated" when both sides have at least two tries and the ranges [min, max] of
  their tries do not overlap; "overlap" when they do (the difference is within the noise of the
  tries); "unknown" when a side has fewer than two tries (sizes, counts, cold times).
- ``beyond_threshold``: the ratio is above 1 + threshold or below 1 / (1 + threshold).
- ``flagged``: beyond the threshold and not within the noise (noise is not "overlap"); a
  machine-bound figure (a time, a rate) with fewer than two tries on a side has no noise
  estimate and is never flagged (one try of a millisecond query differs by 10-20% between two
  runs of the same code: that is noise, not a regression); also a figure the baseline has and
  the contender failed to get (``Measure.required``: a query that
  did not finish, a throughput run in error). A figure one side did not measure at all (no
  load time in JSONBench's results) is shown, never flagged.
- ``regression``: a flagged figure in the worse direction (bigger, slower, fewer documents).
"""

from __future__ import annotations

from dataclasses import dataclass

from docbench.workloads.measures import Measure


@dataclass(frozen=True)
class MetricComparison:
    metric: str
    label: str
    unit: str
    baseline: float | None
    contender: float | None
    ratio: float | None
    baseline_tries: tuple[float, ...]
    contender_tries: tuple[float, ...]
    higher_is_better: bool
    machine_bound: bool
    noise: str  # separated | overlap | unknown
    beyond_threshold: bool
    direction: str | None  # better | worse | same; None without a ratio (unless lost)
    flagged: bool
    regression: bool
    note: str


def ratio_of(baseline: float | None, contender: float | None) -> float | None:
    if baseline is None or contender is None:
        return None
    if baseline == 0:
        return 1.0 if contender == 0 else None
    return contender / baseline


def noise_of(baseline: tuple[float, ...], contender: tuple[float, ...]) -> str:
    if len(baseline) < 2 or len(contender) < 2:
        return "unknown"
    if min(contender) > max(baseline) or max(contender) < min(baseline):
        return "separated"
    return "overlap"


def direction_of(ratio: float | None, higher_is_better: bool) -> str | None:
    if ratio is None:
        return None
    if ratio == 1:
        return "same"
    return "better" if (ratio > 1) == higher_is_better else "worse"


def beyond(ratio: float | None, threshold: float) -> bool:
    return ratio is not None and (ratio > 1 + threshold or ratio < 1 / (1 + threshold))


def _note(baseline: Measure | None, contender: Measure | None) -> str:
    notes = []
    if baseline is not None and baseline.note:
        notes.append(f"baseline: {baseline.note}")
    if contender is not None and contender.note:
        notes.append(f"contender: {contender.note}")
    for side, measure in (("baseline", baseline), ("contender", contender)):
        if measure is None:
            notes.append(f"not measured in the {side}")
        elif measure.value is None:
            notes.append(f"no figure in the {side}" + (" (failed)" if measure.required else ""))
    return "; ".join(notes)


def compare_measure(
    baseline: Measure | None, contender: Measure | None, threshold: float
) -> MetricComparison:
    """``baseline`` and ``contender`` are the same metric of two results (either may be absent)."""
    model = contender or baseline
    assert model is not None
    base_value = baseline.value if baseline else None
    cont_value = contender.value if contender else None
    base_tries = baseline.tries if baseline else ()
    cont_tries = contender.tries if contender else ()
    ratio = ratio_of(base_value, cont_value)
    noise = noise_of(base_tries, cont_tries)
    over = beyond(ratio, threshold)
    direction = direction_of(ratio, model.higher_is_better)
    # A failure, not a figure that was not measured: the contender has the figure, without value.
    lost = base_value is not None and contender is not None and cont_value is None and contender.required
    if lost:
        direction = "worse"
    # a time from one try a side: no noise estimate, shown but never flagged
    no_estimate = model.machine_bound and noise == "unknown"
    flagged = lost or (over and noise != "overlap" and not no_estimate)
    return MetricComparison(
        metric=model.metric,
        label=model.label,
        unit=model.unit,
        baseline=base_value,
        contender=cont_value,
        ratio=ratio,
        baseline_tries=base_tries,
        contender_tries=cont_tries,
        higher_is_better=model.higher_is_better,
        machine_bound=model.machine_bound,
        noise=noise,
        beyond_threshold=over,
        direction=direction,
        flagged=flagged,
        regression=flagged and direction == "worse",
        note=_note(baseline, contender),
    )
