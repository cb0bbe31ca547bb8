"""``docbench compare``'s terminal output: one table per matched pair (figure, baseline,
contender, ratio, noise, flag), the pair's warnings under it, then what did not match and why,
and one summary line."""

from __future__ import annotations

from collections import defaultdict

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from docbench.core.jsontypes import JsonObject
from docbench.report.compare.jsonform import summary
from docbench.report.compare.noise import NoiseModel
from docbench.report.compare.pairs import Comparison, Pair, key_of
from docbench.report.compare.ratios import MetricComparison
from docbench.report.compare.sets import ResultSet


def format_value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "bytes":
        for factor, suffix in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
            if abs(value) >= factor:
                return f"{value / factor:.2f} {suffix}"
        return f"{value:.0f} B"
    if unit == "bytes/document":  # 4 significant digits: 164.2 B, and an index's 0.1103 B
        return f"{value:.4g} B"
    if unit == "s":  # as the dashboard: seconds, below 10 ms in milliseconds
        return f"{value:.3f} s" if value >= 0.01 or value == 0 else f"{value * 1000:.3f} ms"
    if unit == "ms":
        return f"{value:.3f} ms"
    return f"{value:,.0f}"  # documents, ops/s


def format_ratio(ratio: float | None) -> str:
    if ratio is None:
        return "-"
    if ratio >= 100:
        return f"×{ratio:,.0f}"
    return f"×{ratio:.2f}" if ratio >= 0.01 else f"×{ratio:.2g}"


def threshold_text(threshold: float) -> str:
    return f"{threshold * 100:g}%"


def _flag(metric: MetricComparison) -> str:
    if metric.regression and metric.contender is None:
        return "[bold red]✗ failed[/bold red]"
    if metric.regression:
        return "[bold red]▲ worse[/bold red]"
    if metric.flagged:
        return "[green]▼ better[/green]"
    if metric.beyond_threshold and metric.noise_estimate:
        return "[dim]within noise[/dim]"
    return ""  # a time beyond it without a noise estimate: the noise column says so


def noise_text(metric: MetricComparison) -> str:
    """The noise column: each side's spread and the test's p-value; "no noise estimate" for a
    timed figure with fewer than two samples a side; empty for sizes and counts (exact)."""
    if not metric.machine_bound or metric.baseline is None or metric.contender is None:
        return ""
    if not metric.noise_estimate or metric.p_value is None:
        return "no noise estimate"
    spreads = (metric.baseline_spread, metric.contender_spread)
    shown = " ".join(f"±{s * 100:.0f}%" if s is not None else "±?" for s in spreads)
    p = metric.p_value
    return f"{shown} p={p:.2f}" if p >= 0.01 else f"{shown} p<0.01"


def pair_table(pair: Pair) -> Table:
    flagged = sum(m.flagged for m in pair.metrics)
    worse = sum(m.regression for m in pair.metrics)
    table = Table(
        title=f"{pair.name}: {flagged} flagged ({worse} worse)",
        caption=f"baseline {pair.baseline.get('_path')}\ncontender {pair.contender.get('_path')}",
        caption_justify="left",
    )
    notes = any(m.note for m in pair.metrics)
    for column in ("figure", "baseline", "contender", "ratio", "noise", "flag", "note")[: 7 if notes else 6]:
        table.add_column(column, justify="right" if column in {"baseline", "contender", "ratio"} else "left")
    for metric in pair.metrics:
        row = [
            metric.label,
            format_value(metric.baseline, metric.unit),
            format_value(metric.contender, metric.unit),
            format_ratio(metric.ratio),
            noise_text(metric),
            _flag(metric),
        ]
        table.add_row(*row, *([escape(metric.note)] if notes else []))
    return table


def _set_line(result_set: ResultSet) -> str:
    return f"{result_set.label}: {', '.join(result_set.sources)} ({len(result_set.documents)} results)"


def _unmatched_lines(title: str, documents: list[JsonObject]) -> list[str]:
    """One line per workload/system/variant with its scales (JSONBench has many), as matched
    (a generated 2m in gen-2m is 2m, as --json's key)."""
    if not documents:
        return []
    scales: dict[str, list[str]] = defaultdict(list)
    for document in documents:
        workload, system, variant, scale, cluster = key_of(document)
        scales[f"{workload} {system}/{variant}" + (f" [{cluster}]" if cluster else "")].append(scale)
    return [f"{title} ({len(documents)}):"] + [f"  {name}: {', '.join(s)}" for name, s in scales.items()]


def _not_compared_lines(comparison: Comparison) -> list[str]:
    if not comparison.not_compared:
        return []
    names: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for label, item in comparison.not_compared:
        names[(label, item.reason)][item.name] += 1
    lines = [f"Not compared ({len(comparison.not_compared)}):"]
    for (label, reason), counted in names.items():
        shown = ", ".join(f"{n} ({c})" if c > 1 else n for n, c in counted.items())
        lines.append(f"  {label}, {reason}: {shown}")
    return lines


def print_comparison(comparison: Comparison, console: Console) -> None:
    console.print(escape(_set_line(comparison.baseline)))
    console.print(escape(_set_line(comparison.contender)))
    console.print(rule_line(comparison.threshold, comparison.noise))
    for pair in comparison.pairs:
        console.print()
        console.print(pair_table(pair))
        for warning in pair.warnings:
            console.print(f"  [yellow]! {escape(warning.message)}[/yellow]")
    console.print()
    for line in (
        _unmatched_lines("Only in the baseline", comparison.only_baseline)
        + _unmatched_lines("Only in the contender", comparison.only_contender)
        + _not_compared_lines(comparison)
    ):
        console.print(escape(line))
    for line in why_nothing_lines(comparison):
        console.print(escape(line))
    console.print(summary_line(comparison))


def why_nothing_lines(comparison: Comparison) -> list[str]:
    """When nothing was compared: each contender result against the closest baseline result."""
    if comparison.pairs or not comparison.unmatched:
        return []
    return ["Why nothing matched, per contender result:"] + [f"  {u.why}" for u in comparison.unmatched]


def rule_line(t: float, noise: NoiseModel | None = None) -> str:
    noise = noise or NoiseModel()
    return (
        f"Ratios are contender / baseline; flagged beyond {threshold_text(t)} (above ×{1 + t:.2f} or "
        f"below ×{1 / (1 + t):.2f}): a size or count as is, a time when its samples differ beyond "
        f"the noise (Welch's t-test on log times, p < {noise.alpha:g}, with a run-to-run floor of "
        f"{noise.floor * 100:g}%; noise: each side's spread of tries and p). "
        "A time with fewer than 2 samples a side has no noise estimate and is never flagged "
        "(run --tries 3 or more)."
    )


def summary_line(comparison: Comparison) -> str:
    counts = summary(comparison)
    if not counts["pairs"]:
        return "Nothing compared: no result of the contender has the identity of one of the baseline."
    unjudged = counts["no_noise_estimate"]
    return (
        f"{counts['pairs']} pairs, {counts['ratios']} ratios: {counts['flagged']} flagged beyond "
        f"{threshold_text(comparison.threshold)} ({counts['regressions']} worse, "
        f"{counts['improvements']} better); "
        + (f"{unjudged} times beyond it without a noise estimate (not flagged); " if unjudged else "")
        + f"{counts['warnings']} warnings."
    )
