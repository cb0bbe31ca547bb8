"""One figure of two results: the ratio contender / baseline, the noise, the flag.

- ``ratio``: contender / baseline (1 when both are 0; None when either is missing or only the
  baseline is 0).
- the noise (``noise.py``): a timed figure (``machine_bound``) stands for its samples (hot
  tries, progress intervals); with two or more samples a side (``noise_estimate``) Welch's
  t-test on their logarithms, each side's mean also carrying the run-to-run floor (5%), gives
  ``p_value``, ``significant`` (p < alpha, 0.05) and each side's spread; with fewer there is
  no noise estimate and the figure is never flagged (one try of a millisecond query differs by
  10-20% between two runs of the same code: that is noise, not a regression). Sizes and
  counts (not machine-bound) are exact: the same data loaded alike gives the same bytes.
- ``noise``: the ranges of the samples, as shown before the test: "separated" when both sides
  have at least two samples and the ranges [min, max] do not overlap, "overlap" when they do,
  "unknown" when a side has fewer than two.
- ``beyond_threshold``: the ratio is above 1 + threshold or below 1 / (1 + threshold) (the
  smallest effect worth a flag).
- ``flagged``: beyond the threshold and, for a timed figure, a significant difference in the
  ratio's direction; also a figure the baseline has and the contender failed to get
  (``Measure.required``: a query that did not finish, a throughput run in error). A figure one
  side did not measure at all (no load time in JSONBench's results) is shown, never flagged.
- ``regression``: a flagged figure in the worse direction (bigger, slower, fewer documents).
"""

from __future__ import annotations

from dataclasses import dataclass

from docbench.report.compare.noise import ALPHA, NoiseModel, NoiseTest, noise_test
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
    # The noise model (noise.py): None where there is no estimate (or the figure is exact).
    noise_estimate: bool = False
    p_value: float | None = None
    significant: bool | None = None
    baseline_spread: float | None = None
    contender_spread: float | None = None

    @property
    def unjudged(self) -> bool:
        """A timed figure beyond the threshold without a noise estimate (so not flagged)."""
        return self.machine_bound and self.beyond_threshold and not self.noise_estimate and not self.flagged


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


def stands_out(test: NoiseTest, ratio: float | None, alpha: float = ALPHA) -> bool:
    """A significant difference in the direction of the figures' ratio (the best of the tries
    and the geometric mean can disagree; then it is not one)."""
    if test.p_value is None or test.p_value >= alpha or ratio is None or test.shift is None:
        return False
    return (ratio > 1) == (test.shift > 1) and ratio != 1


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
    baseline: Measure | None,
    contender: Measure | None,
    threshold: float,
    noise_model: NoiseModel | None = None,
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
    settings = noise_model or NoiseModel()
    alpha = settings.alpha
    test = noise_test(base_tries, cont_tries, settings.floor) if model.machine_bound else None
    over = beyond(ratio, threshold)
    direction = direction_of(ratio, model.higher_is_better)
    # A failure, not a figure that was not measured: the contender has the figure, without value.
    lost = base_value is not None and contender is not None and cont_value is None and contender.required
    if lost:
        direction = "worse"
    # Sizes and counts (no test) are exact: the threshold decides; a time must stand out too.
    flagged = lost or (over and (test is None or stands_out(test, ratio, alpha)))
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
        noise_estimate=bool(test and test.estimate),
        p_value=test.p_value if test else None,
        significant=None if test is None or test.p_value is None else test.p_value < alpha,
        baseline_spread=test.baseline_spread if test else None,
        contender_spread=test.contender_spread if test else None,
    )
