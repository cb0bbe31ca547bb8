"""The noise model of ``docbench compare``: is a difference between two sets of samples more
than the noise of the measurement? (docs/compare.md, "The noise model")

A timed figure stands for samples (an analytics query's hot tries, a throughput run's progress
intervals). Two figures differ beyond the noise when Welch's t-test on the logarithms of their
samples rejects "same mean" at ``alpha`` (two-sided), as pyperf's ``compare_to`` tests its
samples: the logarithm makes the noise of a time multiplicative (a 5% jitter is 5% on a fast
and on a slow query), and Welch's test does not assume the two sides equally noisy. With
fewer than two samples on a side there is no estimate of the noise: no test.

The samples of one result are tries of one run: they show the noise from try to try, not the
noise from run to run (another process, another load of the data, the machine's state minutes
later), which two results of the same code also differ by. ``floor`` is that run-to-run
spread, a relative standard deviation each side's mean carries whatever its number of tries
(the variance of the difference gets 2 floor² more): ``scripts/aa-noise.py`` measures it on a
machine from A/A pairs of runs.

Standard library only: Student's t distribution through the regularized incomplete beta
function (a continued fraction, as Numerical Recipes' ``betacf``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Two-sided significance level: a difference is significant when p < ALPHA.
ALPHA = 0.05
# The run-to-run spread of a time (relative standard deviation of one run's mean) that the
# tries of one run cannot show; `docbench compare --noise-floor`.
FLOOR = 0.05
# Fewest samples a side for an estimate of the noise (a standard deviation needs two).
MIN_SAMPLES = 2


@dataclass(frozen=True)
class NoiseModel:
    """The test's settings: significance level and run-to-run floor (both fractions)."""

    alpha: float = ALPHA
    floor: float = FLOOR


@dataclass(frozen=True)
class NoiseTest:
    """The test of one figure's two sample sets."""

    # Both sides have MIN_SAMPLES or more (else every other field is None).
    estimate: bool
    # Welch's t-test on the log samples, two-sided; None without an estimate.
    p_value: float | None
    # The sample standard deviation of each side's log samples: about the relative spread
    # (0.05 is about ±5%); None for a side with fewer than MIN_SAMPLES samples.
    baseline_spread: float | None
    contender_spread: float | None
    # exp(mean log contender - mean log baseline): the ratio of the geometric means.
    shift: float | None


def _logs(samples: Sequence[float]) -> list[float] | None:
    """The natural logarithms, or None when a sample is not positive (then raw values)."""
    return [math.log(s) for s in samples] if all(s > 0 for s in samples) else None


def _mean_variance(values: Sequence[float]) -> tuple[float, float]:
    mean = math.fsum(values) / len(values)
    return mean, math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)


def _spread(samples: Sequence[float]) -> float | None:
    if len(samples) < MIN_SAMPLES:
        return None
    values = _logs(samples)
    if values is None:  # a zero time: the spread relative to the mean instead
        mean, variance = _mean_variance(samples)
        return math.sqrt(variance) / abs(mean) if mean else None
    return math.sqrt(_mean_variance(values)[1])


def noise_test(baseline: Sequence[float], contender: Sequence[float], floor: float = FLOOR) -> NoiseTest:
    """Welch's t-test of the two sample sets (on their logarithms when all are positive), each
    side's mean with the run-to-run ``floor`` of variance besides its tries' own."""
    spreads = _spread(baseline), _spread(contender)
    if len(baseline) < MIN_SAMPLES or len(contender) < MIN_SAMPLES:
        return NoiseTest(False, None, *spreads, None)
    log_a, log_b = _logs(baseline), _logs(contender)
    if log_a is not None and log_b is not None:
        (mean_a, var_a), (mean_b, var_b) = _mean_variance(log_a), _mean_variance(log_b)
        shift: float | None = math.exp(mean_b - mean_a)
        floor_variance = floor**2
    else:  # a sample of 0 (or less): the raw values, the floor relative to their means
        (mean_a, var_a), (mean_b, var_b) = _mean_variance(baseline), _mean_variance(contender)
        shift = mean_b / mean_a if mean_a else None
        floor_variance = (floor * (abs(mean_a) + abs(mean_b)) / 2) ** 2
    p_value = welch_p(mean_a, var_a, len(baseline), mean_b, var_b, len(contender), floor_variance)
    return NoiseTest(True, p_value, *spreads, shift)


def run_to_run_variance(baseline: Sequence[float], contender: Sequence[float]) -> float | None:
    """One A/A pair's estimate of the floor's variance (the two runs' means differ by the tries'
    noise and twice the run-to-run variance): (d² - s_a²/n_a - s_b²/n_b) / 2 on log samples,
    may be negative (an estimate; average many); None with fewer than 2 samples a side."""
    if len(baseline) < MIN_SAMPLES or len(contender) < MIN_SAMPLES:
        return None
    log_a, log_b = _logs(baseline), _logs(contender)
    if log_a is None or log_b is None:
        return None
    (mean_a, var_a), (mean_b, var_b) = _mean_variance(log_a), _mean_variance(log_b)
    return ((mean_b - mean_a) ** 2 - var_a / len(log_a) - var_b / len(log_b)) / 2


def welch_p(
    mean_a: float,
    var_a: float,
    n_a: int,
    mean_b: float,
    var_b: float,
    n_b: int,
    floor_variance: float = 0.0,
) -> float:
    """Two-sided p-value of Welch's t-test (Welch-Satterthwaite degrees of freedom); each mean
    also carries ``floor_variance``, known, not estimated (it adds no degree of freedom)."""
    se_a, se_b = var_a / n_a, var_b / n_b
    total = se_a + se_b + 2 * floor_variance
    difference = mean_b - mean_a
    if total == 0:  # no spread on either side: any difference is certain
        return 1.0 if difference == 0 else 0.0
    t = difference / math.sqrt(total)
    estimated = (se_a**2 / (n_a - 1) if se_a else 0.0) + (se_b**2 / (n_b - 1) if se_b else 0.0)
    return t_two_sided_p(t, total**2 / estimated if estimated else math.inf)


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom (df > 0, not an integer
    necessarily): the regularized incomplete beta I_{df/(df+t²)}(df/2, 1/2)."""
    if not math.isfinite(t):
        return 0.0
    if not math.isfinite(df) or df > 1e7:  # the normal distribution
        return math.erfc(abs(t) / math.sqrt(2))
    return regularized_beta(df / (df + t * t), df / 2, 0.5)


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, for 0 <= x <= 1 and a, b > 0."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    # The continued fraction converges quickly for x < (a + 1) / (a + b + 2); else the symmetry.
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(x, a, b) / a
    return 1.0 - front * _beta_fraction(1.0 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz's method)."""
    tiny, epsilon = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < epsilon:
            break
    return h
