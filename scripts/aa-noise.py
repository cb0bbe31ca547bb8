#!/usr/bin/env python3
"""The A/A false-positive rate of `docbench compare` on this machine (docs/compare.md, "The
noise model"): result directories of runs of the same code on the same data, each one run,
compared in pairs; every flag is a false positive.

    .venv/bin/python scripts/aa-noise.py 'results/aa/run-*' [--threshold 10%] [--all-pairs]
        [--max-rate 5%] [--noise-floor 5%] [--alpha 0.05] [--json]

Arguments are directories (or quoted globs of them, expanded here, sorted). Pairs are
consecutive and disjoint (1-2, 3-4, ...: N runs give N/2 independent pairs), or every two with
--all-pairs. Prints per system/variant/scale: pairs, figures compared, flagged, the rate, the
times beyond the threshold left without a noise estimate, and what the range rule (before the
noise test) flagged, and the run-to-run spread of a time the pairs show (what docbench
compare's --noise-floor should be on this machine). Exit 1 when a rate is above --max-rate
(5%), 2 on a usage error. --noise-floor and --alpha explore other settings of the test.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # run from a checkout without installing it

from docbench.report.compare.aa import MAX_RATE, aa_noise, report_lines  # noqa: E402
from docbench.report.compare.command import parse_threshold  # noqa: E402
from docbench.report.compare.noise import ALPHA, FLOOR, NoiseModel  # noqa: E402
from docbench.report.compare.sets import NoResults  # noqa: E402


def directories(arguments: list[str]) -> list[Path]:
    found: list[Path] = []
    for argument in arguments:
        matched = sorted(glob.glob(argument)) if glob.has_magic(argument) else [argument]
        found.extend(Path(m) for m in matched if Path(m).is_dir())
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="result directories (or quoted globs), one run each")
    parser.add_argument("--threshold", default="10%", help="as docbench compare's (default 10%%)")
    parser.add_argument("--all-pairs", action="store_true", help="every two runs, not 1-2, 3-4...")
    parser.add_argument("--max-rate", default=f"{MAX_RATE * 100:g}%", help="exit 1 above it (5%%)")
    parser.add_argument("--alpha", type=float, default=ALPHA, help="the noise test's level (0.05)")
    parser.add_argument("--noise-floor", default=f"{FLOOR * 100:g}%", help="as docbench compare's (5%%)")
    parser.add_argument("--json", action="store_true", help="the tallies as JSON")
    args = parser.parse_args()
    try:
        threshold, max_rate = parse_threshold(args.threshold), parse_threshold(args.max_rate)
        floor = parse_threshold(args.noise_floor)
    except ValueError as error:
        parser.error(str(error))
    if not 0 < args.alpha < 1:
        parser.error(f"--alpha {args.alpha}: a significance level between 0 and 1")
    noise = NoiseModel(alpha=args.alpha, floor=floor)
    runs = directories(args.runs)
    if len(runs) < 2:
        parser.error(f"give at least two result directories ({len(runs)} found in {args.runs})")
    try:
        tallies = aa_noise(runs, threshold, args.all_pairs, noise)
    except NoResults as error:
        parser.error(str(error))
    if not tallies:
        print("No pair of results matched: nothing measured.", file=sys.stderr)
        return 1
    if args.json:
        record = {
            "threshold": threshold,
            "alpha": noise.alpha,
            "noise_floor": noise.floor,
            "runs": [str(r) for r in runs],
            "systems": {
                name: asdict(t) | {"rate": t.rate, "run_to_run": t.run_to_run} for name, t in tallies.items()
            },
        }
        print(json.dumps(record, indent=1))
    else:
        print(f"{len(runs)} runs: {', '.join(map(str, runs))}")
        print("\n".join(report_lines(tallies, threshold, max_rate, noise)))
    return 1 if any(t.rate > max_rate for t in tallies.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
