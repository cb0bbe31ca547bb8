"""The A/A false-positive rate of ``docbench compare``: runs of the same code on the same data
compared with each other, where every flag is a false positive (``scripts/aa-noise.py``).

Given result directories, each one run (``docbench run ... --results DIR``), the pairs are
consecutive and disjoint (1-2, 3-4, ...: independent A/A pairs), or every two with
``all_pairs``. Per system/variant/scale: the figures compared (both sides have the figure), how
many were flagged (all false positives), how many times were beyond the threshold without a
noise estimate (what the test refused to judge) and how many the earlier rule would have
flagged (beyond the threshold unless the ranges of the tries overlap, a time with one try a
side never), for comparison.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from docbench.report.compare.noise import NoiseModel, run_to_run_variance
from docbench.report.compare.pairs import Comparison, compare
from docbench.report.compare.ratios import MetricComparison
from docbench.report.compare.sets import load_set

# The bar: the default flags no more than this share of the figures of A/A pairs.
MAX_RATE = 0.05


@dataclass
class Tally:
    pairs: int = 0
    figures: int = 0
    flagged: int = 0
    unjudged: int = 0
    range_rule: int = 0
    # metric id -> how many times it was flagged
    flagged_metrics: dict[str, int] = field(default_factory=dict)
    # estimates of the run-to-run variance (noise.run_to_run_variance), one per timed figure
    # with 2 samples a side or more
    run_variances: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.flagged / self.figures if self.figures else 0.0

    @property
    def run_to_run(self) -> float | None:
        """The run-to-run spread of a time these pairs show (what --noise-floor should be)."""
        if not self.run_variances:
            return None
        return math.sqrt(max(0.0, sum(self.run_variances) / len(self.run_variances)))

    def add(self, metrics: Iterable[MetricComparison]) -> None:
        self.pairs += 1
        for m in metrics:
            if m.ratio is None and not m.flagged:
                continue  # a figure one side does not have: nothing compared
            self.figures += 1
            self.unjudged += m.unjudged
            # the rule before the noise test: a time beyond the threshold whose ranges of tries
            # do not overlap (two tries a side or more), a size or count beyond it
            self.range_rule += m.beyond_threshold and (m.noise == "separated" or not m.machine_bound)
            variance = run_to_run_variance(m.baseline_tries, m.contender_tries) if m.machine_bound else None
            if variance is not None:
                self.run_variances.append(variance)
            if m.flagged:
                self.flagged += 1
                self.flagged_metrics[m.metric] = self.flagged_metrics.get(m.metric, 0) + 1


def pairs_of(directories: list[Path], all_pairs: bool = False) -> list[tuple[Path, Path]]:
    if all_pairs:
        return list(itertools.combinations(directories, 2))
    return [(directories[i], directories[i + 1]) for i in range(0, len(directories) - 1, 2)]


def tally(comparisons: Iterable[Comparison]) -> dict[str, Tally]:
    """Per "system/variant scale" (and "all"), over the pairs of results each comparison made."""
    found: dict[str, Tally] = {}
    for comparison in comparisons:
        for pair in comparison.pairs:
            _workload, system, variant, scale, cluster = pair.key
            name = f"{system}/{variant}" + (f" [{cluster}]" if cluster else "") + f" {scale}"
            found.setdefault(name, Tally()).add(pair.metrics)
            found.setdefault("all", Tally()).add(pair.metrics)
    return dict(sorted(found.items(), key=lambda item: (item[0] == "all", item[0])))


def aa_noise(
    directories: list[Path], threshold: float, all_pairs: bool = False, noise: NoiseModel | None = None
) -> dict[str, Tally]:
    """Every A/A pair of ``directories`` compared at ``threshold`` (and the noise test at
    ``noise``, docbench compare's unless exploring others): the tallies per system."""
    return tally(
        compare(load_set([a], "baseline"), load_set([b], "contender"), threshold, noise)
        for a, b in pairs_of(directories, all_pairs)
    )


def report_lines(
    tallies: dict[str, Tally],
    threshold: float,
    max_rate: float = MAX_RATE,
    noise: NoiseModel | None = None,
) -> list[str]:
    noise = noise or NoiseModel()
    header = (
        f"{'system/variant scale':<36} {'pairs':>5} {'figures':>7} {'flagged':>7} {'rate':>6} "
        f"{'no est.':>7} {'range rule':>10} {'run-to-run':>10}  flagged figures"
    )
    lines = [
        f"A/A pairs compared at --threshold {threshold * 100:g}% (noise test at p < {noise.alpha:g}, "
        f"floor {noise.floor * 100:g}%): "
        "every flag is a false positive "
        f"(bar: {max_rate * 100:g}% of the figures).",
        header,
    ]
    for name, t in tallies.items():
        which = ", ".join(f"{m} x{n}" if n > 1 else m for m, n in sorted(t.flagged_metrics.items()))
        mark = " (over the bar)" if t.rate > max_rate else ""
        spread = "-" if t.run_to_run is None else f"{t.run_to_run * 100:.1f}%"
        lines.append(
            f"{name:<36} {t.pairs:>5} {t.figures:>7} {t.flagged:>7} {t.rate * 100:>5.1f}% "
            f"{t.unjudged:>7} {t.range_rule:>10} {spread:>10}  {which}{mark}"
        )
    lines.append(
        "no est.: times beyond the threshold without a noise estimate (fewer than 2 samples a "
        "side: not flagged); range rule: what the rule before the noise test flagged (beyond the "
        "threshold unless the ranges of the tries overlap, a time with one try a side never); "
        "run-to-run: the spread of a time from run to run beyond its tries' (estimated from the "
        f"times with 2 samples a side or more; docbench compare assumes --noise-floor "
        f"{noise.floor * 100:g}%)."
    )
    return lines


__all__ = ["MAX_RATE", "Tally", "aa_noise", "pairs_of", "report_lines", "tally"]
