"""Fit the generator's per-collection user models to the published distinct users.

Usage: python native/docbench-gen/calibrate/fit.py [COLLECTION ...]
Prints, per collection, the model for model.rs `activity()` (a stationary Zipf–Mandelbrot law
taking a share w of the selections, a uniform window of m users moving v users per event taking
the rest: calibrate/users.py) and the expected creates and distinct users at 1m, 10m, 100m and
1000m under the segment mixes of model.rs (copied below: keep them in step). Figures:
../shared/docs/methodology.md §3, issue #15, and at 10m (and listblock at 1m) JSONBench's
published VictoriaLogs query results (Q2: creates and distinct users per collection).
"""

from __future__ import annotations

import sys

import numpy as np
from users import Schedule, distinct_model, fit_model

SEGMENTS = (0, 1_000_000, 100_000_000)  # first event index of each mix segment
# collection: (create events per million in segments A, B, C; mean batch length)
CREATES = {
    "like": ((444_523, 445_273, 469_380), 1 + 0.008 * 1.5),
    "follow": ((337_978, 342_776, 301_152), 1 + 0.012 * (0.4 * 20 + 0.6 * 11 - 1)),
    "post": ((86_812, 83_749, 90_549), 1.0),
    "repost": ((56_993, 54_646, 57_544), 1.0),
    "block": ((13_838, 14_075, 16_088), 1.0),
    "listitem": ((7_568, 7_391, 7_021), 1 + 0.06 * 6),
    "listblock": ((850, 816.6, 743), 1.0),
}
# Placed on a lattice of the event index (model.rs RARE): exactly their rate, not normalised.
LATTICE = {"listblock"}
# Sum of all events per million of each segment (the alias normalises by it).
SEGMENT_TOTAL = (1_000_000, 1_000_000, 989_768)
PUBLISHED = {
    "like": {1e6: 117_617, 1e7: 694_849, 1e8: 2_576_215, 1e9: 6_706_985},
    "follow": {1e6: 63_957, 1e7: 463_192, 1e8: 2_389_002, 1e9: 8_451_054},
    "post": {1e6: 50_464, 1e7: 327_190, 1e8: 1_346_617, 1e9: 3_941_525},
    "repost": {1e6: 26_581, 1e7: 188_549, 1e8: 829_331, 1e9: 2_537_616},
    "block": {1e6: 5_785, 1e7: 45_808, 1e8: 273_510, 1e9: 1_335_278},
    "listitem": {1e6: 1_078, 1e7: 7_097, 1e8: 37_824, 1e9: 163_053},
    # The real first 10m hold 9,994 list block creates, the mix 8,199 (segment B is the average
    # of 1m..100m): the target there is the published users per create times the mix's creates.
    "listblock": {1e6: 449, 1e7: 5_104 * 8_199 / 9_994, 1e8: 34_441, 1e9: 238_996},
}
WEIGHTS = {1e6: 4.0, 1e7: 1.0, 1e8: 1.0, 1e9: 1.0}
STARTS = [
    [np.log(w / (1 - w)), np.log(n), 1.2, np.log(m), np.log(v)]
    for w in (0.5, 0.9)
    for n in (1e5, 3e6)
    for m in (1e5, 2e6)
    for v in (1e-4, 3e-3)
]


def schedule(coll: str, n_events: float) -> Schedule:
    """(first event, end event, create selections per event) of each mix segment up to n_events."""
    rates, mean_len = CREATES[coll]
    bounds = (*SEGMENTS, float("inf"))
    out = []
    for i, rate in enumerate(rates):
        lo, hi = bounds[i], min(n_events, bounds[i + 1])
        if hi > lo:
            total = 1e6 if coll in LATTICE else SEGMENT_TOTAL[i]
            out.append((float(lo), float(hi), rate / total / mean_len))
    return tuple(out)


def creates(coll: str, n_events: float) -> float:
    """Create events among the first n_events."""
    return sum((t1 - t0) * lam for t0, t1, lam in schedule(coll, n_events)) * CREATES[coll][1]


def main() -> None:
    for coll in sys.argv[1:] or PUBLISHED:
        targets = [(schedule(coll, n), d, WEIGHTS[n]) for n, d in PUBLISHED[coll].items()]
        w, (n, s, q), (m, v), err = fit_model(targets, STARTS)
        # As written in model.rs (the expectations below are those of the rounded constants).
        w, n, s, m, v = round(w, 4), round(n), round(s, 4), round(m), float(f"{v:.4e}")
        row = [f"{coll:9} ({w:.4f}, ({n:_}, {s:.4f}, {q:.1f}), ({m:_}, {v:.4e})) loss={err:.1e}"]
        for scale in (1e6, 1e7, 1e8, 1e9):
            d = distinct_model(schedule(coll, scale), w, (n, s, q), (m, v))
            p = PUBLISHED[coll].get(scale)
            row.append(f"{scale:.0e}: {creates(coll, scale):12,.0f} {d:10,.0f} ({100 * (d / p - 1):+.1f}%)")
        print("  ".join(row), flush=True)


if __name__ == "__main__":
    main()
