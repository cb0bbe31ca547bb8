"""What ``docbench compare`` does once click has its options (cli.py is the thin shell)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from docbench.core.console import report_console
from docbench.report.compare.jsonform import to_json
from docbench.report.compare.noise import NoiseModel
from docbench.report.compare.pairs import Comparison, compare
from docbench.report.compare.sets import ResultSet, load_set, published_jsonbench
from docbench.report.compare.terminal import print_comparison, summary_line, threshold_text

AGAINST = ("jsonbench",)
# --fail-on-regression exits with this when a flagged ratio is worse beyond the threshold; any
# comparison exits with it when nothing was compared (a CI check comparing nothing must not
# pass, and a user must not read silence as agreement).
EXIT_REGRESSION = 1


def parse_threshold(text: str) -> float:
    """10% or 10 -> 0.1 (a plain number is a percentage too)."""
    number = text.strip().removesuffix("%").strip()
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"{text!r} is not a percentage (use e.g. 10% or 5)") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{text!r} is not a percentage of 0 or more (use e.g. 10% or 5)")
    return value / 100


def sides(paths: list[Path], against: str | None) -> tuple[ResultSet, ResultSet]:
    """(baseline, contender) from the command's arguments; ValueError says what is wrong."""
    if against:
        if len(paths) != 1:
            raise ValueError(
                f"--against {against} takes one path, the contender's results ({len(paths)} given)"
            )
        return published_jsonbench("baseline"), load_set(paths, "contender")
    if len(paths) != 2:
        raise ValueError(
            f"give two paths, BASELINE and CONTENDER, or --against jsonbench ({len(paths)} given)"
        )
    return load_set([paths[0]], "baseline"), load_set([paths[1]], "contender")


def run(comparison: Comparison, as_json: bool, html: Path | None, fail_on_regression: bool) -> int:
    """Print (or write) the comparison; the exit status."""
    if as_json:
        json.dump(to_json(comparison), sys.stdout, indent=1, ensure_ascii=False, allow_nan=False)
        sys.stdout.write("\n")
    else:
        print_comparison(comparison, report_console())
    if html is not None:
        from docbench.report.html import write_comparison

        write_comparison(to_json(comparison), html)
        report_console(stderr=True).print(f"comparison page: {html}")
    if not comparison.pairs:
        report_console(stderr=True).print(
            f"{summary_line(comparison).split(':')[0]}: exit {EXIT_REGRESSION}", markup=False
        )
        return EXIT_REGRESSION
    if fail_on_regression and comparison.regressions:
        reason = f"{len(comparison.regressions)} regression(s) beyond {threshold_text(comparison.threshold)}"
        report_console(stderr=True).print(f"--fail-on-regression: {reason}: exit {EXIT_REGRESSION}")
        return EXIT_REGRESSION
    return 0


__all__ = ["AGAINST", "EXIT_REGRESSION", "NoiseModel", "compare", "parse_threshold", "run", "sides"]
