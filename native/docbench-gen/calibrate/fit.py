"""Fit the generator's per-collection user models to the published distinct users.

Usage: python native/docbench-gen/calibrate/fit.py
Prints (n, s, q) per collection for model.rs `activity()` and the expected creates and distinct
users at 1m, 10m, 100m and 1000m under the segment mixes of model.rs (copied below: keep them in
step). Figures: ../shared/docs/methodology.md §3 and issue #15.
"""

from __future__ import annotations

from users import distinct, fit

SEGMENTS = (0, 1_000_000, 100_000_000)  # first event index of each mix segment
POPULATION = 80_000_000
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
# Sum of all events per million of each segment (the alias normalises by it).
SEGMENT_TOTAL = (1_000_000, 1_000_000, 989_768)
PUBLISHED = {
    "like": {1e6: 117_617, 1e8: 2_576_215, 1e9: 6_706_985},
    "follow": {1e6: 63_957, 1e8: 2_389_002, 1e9: 8_451_054},
    "post": {1e6: 50_464, 1e8: 1_346_617, 1e9: 3_941_525},
    "repost": {1e6: 26_581, 1e8: 829_331, 1e9: 2_537_616},
    "block": {1e6: 5_785, 1e8: 273_510, 1e9: 1_335_278},
    "listitem": {1e6: 1_078, 1e8: 37_824, 1e9: 163_053},
    "listblock": {1e6: 700, 1e8: 34_441, 1e9: 238_996},  # 1m not published: a weak prior
}
START = {
    "like": (6e6, 1.2076, 100.0),
    "follow": (5e6, 1.2931, 100.0),
    "post": (4e6, 0.9662, 10.0),
    "repost": (3e6, 1.0568, 10.0),
    "block": (2e6, 1.1663, 10.0),
    "listitem": (5e5, 1.519, 10.0),
    "listblock": (2e6, 0.9, 10.0),
}


def creates(coll: str, n_events: float) -> tuple[float, float]:
    """(create events, selections) among the first n_events."""
    rates, mean_len = CREATES[coll]
    events = 0.0
    bounds = (*SEGMENTS, float("inf"))
    for i, rate in enumerate(rates):
        inside = max(0.0, min(n_events, bounds[i + 1]) - bounds[i])
        events += inside * rate / SEGMENT_TOTAL[i]
    return events, events / mean_len


def main() -> None:
    for coll, pub in PUBLISHED.items():
        weights = {1e6: 10.0 if coll != "listblock" else 0.05, 1e8: 1.0, 1e9: 1.0}
        targets = [(creates(coll, n)[1], d, weights[n]) for n, d in pub.items()]
        n, s, q, err = fit(targets, START[coll], POPULATION)
        row = [f"{coll:9} n={n:12,.0f} s={s:.4f} q={q:9.3f}"]
        for scale in (1e6, 1e7, 1e8, 1e9):
            c, sel = creates(coll, scale)
            d = distinct(sel, n, s, q)
            p = pub.get(scale)
            row.append(f"{scale:.0e}: {c:12,.0f} {d:10,.0f}" + (f" ({100 * (d / p - 1):+.1f}%)" if p else ""))
        print("  ".join(row), flush=True)


if __name__ == "__main__":
    main()
