"""Calibrate the generator's event rate: a daily cycle times a slow trend (model.rs `RateModel`).

rate(t) = trend(t) * cycle(hour of day of t). The cycle is piecewise linear through one value
per UTC hour (busiest in the UTC evening and night, quietest in the UTC morning, 2x between);
the trend is piecewise linear through knots at the published spans and constant after the last
one. The trend values are the solution of the linear system "the first N events span exactly
the published time" for N = 1m, 10m, 100m, 1000m, integrated on the generator's own grid
(STEP_S), so the generator's spans are these figures. Prints the knots for model.rs.
"""

from __future__ import annotations

import numpy as np

T0_SECOND_OF_DAY = 16 * 3600 + 25 * 60 + 49.000167
STEP_S = 60.0
CYCLE = [
    1.55,
    1.6,
    1.6,
    1.55,
    1.45,
    1.3,
    1.1,
    0.95,
    0.85,
    0.8,
    0.8,
    0.8,
    0.82,
    0.86,
    0.9,
    0.94,
    0.98,
    1.02,
    1.08,
    1.16,
    1.25,
    1.35,
    1.45,
    1.5,
]
SPANS_S = {1e6: 13.55 * 60, 1e7: 2.2 * 3600, 1e8: 18.5 * 3600, 1e9: 12.34 * 86400}


def cycle(t: np.ndarray) -> np.ndarray:
    mean = sum(CYCLE) / 24
    h = ((T0_SECOND_OF_DAY + t) / 3600.0) % 24.0
    i = np.floor(h).astype(int)
    frac = h - i
    lo = np.array(CYCLE)[i]
    hi = np.array(CYCLE)[(i + 1) % 24]
    return (lo + frac * (hi - lo)) / mean


def hat(t: np.ndarray, knots: list[float], k: int) -> np.ndarray:
    """Piecewise-linear basis function k over `knots`, constant beyond the last knot."""
    y = np.zeros(len(knots))
    y[k] = 1.0
    return np.interp(t, knots, y)


def main() -> None:
    knots = [0.0, SPANS_S[1e7], SPANS_S[1e8], SPANS_S[1e8] + 86400.0]
    grid = np.arange(0.0, SPANS_S[1e9] + STEP_S, STEP_S)
    c = cycle(grid)
    basis = np.stack([hat(grid, knots, k) * c for k in range(len(knots))])
    # Cumulative events on the grid by the trapezoid rule, per basis function.
    steps = (basis[:, 1:] + basis[:, :-1]) / 2 * STEP_S
    cum = np.concatenate([np.zeros((len(knots), 1)), np.cumsum(steps, axis=1)], axis=1)
    rows, rhs = [], []
    for n, span in SPANS_S.items():
        rows.append([np.interp(span, grid, cum[k]) for k in range(len(knots))])
        rhs.append(n)
    trend = np.linalg.solve(np.array(rows), np.array(rhs))
    pairs = [(k, round(float(v), 3)) for k, v in zip(knots, trend, strict=True)]
    print("trend knots (s, events/s before the cycle):", pairs)
    rate = trend @ basis
    for n, span in SPANS_S.items():
        total = np.interp(span, grid, trend @ cum)
        print(f"{n:.0e}: span {span:,.0f} s, events {total:,.0f}")
    hours = ((T0_SECOND_OF_DAY + grid) / 3600).astype(int) % 24
    share = np.bincount(hours, weights=rate, minlength=24)
    print("hour shares:", " ".join(f"{h:02d}:{s / share.sum():.3f}" for h, s in enumerate(share)))
    print("min/max rate:", rate.min(), rate.max())


if __name__ == "__main__":
    main()
