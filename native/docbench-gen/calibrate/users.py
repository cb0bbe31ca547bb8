"""Expected distinct users of a collection's creates under the generator's user model.

The generator draws the user of each create selection (a batch counts once) in one of two
ways (model.rs `UserMix`): with probability w a rank from a truncated Zipf–Mandelbrot law over
[0, n) (rng.rs `PowerLaw`), a stationary population of regular users; otherwise uniformly from
a window of m users that moves through the population by v users per event (the window at
event t holds users floor(v t) - m + 1 .. floor(v t)), users who become active and later stop.
The two parts are mapped into the population by their own permutations, so they overlap at
random.

Stationary part: after S selections the expected number of distinct users is
sum_r 1 - (1 - p_r)^S, computed exactly for the head and over narrow log bins for the tail.
Window part: user x is hit at event t with probability lambda(t) [x in window(t)] / m, so it is
seen with probability 1 - exp(-H(x)), H(x) = sum_t lambda(t) [x in window(t)] / m; H is
piecewise linear in x (its kinks where a window edge is at the start or end of a segment of
constant lambda), and the sum over x is integrated exactly between the kinks.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

HEAD = 20_000
POPULATION = 80_000_000

# A schedule: ((first event, end event, selections per event), ...) covering [0, N).
Schedule = tuple[tuple[float, float, float], ...]


@lru_cache(maxsize=16)
def rank_probabilities(n: float, s: float, q: float) -> tuple[np.ndarray, np.ndarray]:
    """(probability per rank, ranks per entry): the head rank by rank, the tail in log bins."""
    a, b = q + 1.0, q + 1.0 + n
    e = 1.0 - s

    def cdf(x):
        return np.log(x / a) / np.log(b / a) if abs(e) < 1e-9 else (x**e - a**e) / (b**e - a**e)

    head = min(int(n), HEAD)
    edges = np.arange(head + 1, dtype=float)
    if n > head:
        tail = np.unique(np.geomspace(head, n, 3_000).round())
        edges = np.concatenate([edges, tail[1:]])
    widths = np.diff(edges)
    mass = cdf(a + edges[1:]) - cdf(a + edges[:-1])
    return mass / widths, widths


def distinct(selections: float, n: float, s: float, q: float) -> float:
    """Distinct users of `selections` draws from the stationary law (n, s, q)."""
    p, w = rank_probabilities(float(n), float(s), float(q))
    return float(np.sum(w * -np.expm1(selections * np.log1p(-np.minimum(p, 1 - 1e-12)))))


def distinct_window(schedule: Schedule, m: float, v: float) -> float:
    """Distinct users of the selections of `schedule` drawn uniformly from a window of m users
    moving v users per event (v = 0: a fixed set of m users)."""
    total = sum((t1 - t0) * lam for t0, t1, lam in schedule)
    if v <= 0:
        return m * -np.expm1(-total / m)
    end = schedule[-1][1]

    def hits(x: np.ndarray) -> np.ndarray:
        h = np.zeros_like(x)
        for t0, t1, lam in schedule:
            # events t in [t0, t1) whose window holds x: x <= v t < x + m
            lo = np.clip(x / v, t0, t1)
            hi = np.clip((x + m) / v, t0, t1)
            h += lam * (hi - lo) / m
        return h

    kinks = {-m, v * end}
    for t0, t1, _ in schedule:
        for t in (t0, t1):
            kinks.update({v * t, v * t - m})
    x = np.array(sorted(k for k in kinks if -m <= k <= v * end))
    h = hits(x)
    h0, h1, width = h[:-1], h[1:], np.diff(x)
    dh = h1 - h0
    flat = np.abs(dh) < 1e-12
    # integral of 1 - exp(-h) over a piece where h is linear from h0 to h1
    mean_seen = np.where(flat, -np.expm1(-h0), 1.0 - (np.exp(-h0) - np.exp(-h1)) / np.where(flat, 1.0, dh))
    return float(np.sum(width * mean_seen))


def distinct_model(schedule: Schedule, w: float, law: tuple, window: tuple) -> float:
    """Distinct users when a share w of the selections follows the stationary `law` (n, s, q)
    and the rest the moving `window` (m, v), each mapped by its own permutation."""
    total = sum((t1 - t0) * lam for t0, t1, lam in schedule)
    d1 = distinct(total * w, *law) if w > 0 else 0.0
    rest = tuple((t0, t1, lam * (1 - w)) for t0, t1, lam in schedule)
    d2 = distinct_window(rest, *window) if w < 1 else 0.0
    return d1 + d2 - d1 * d2 / POPULATION


def nelder_mead(f, x0, step, iters=400):
    pts = [np.array(x0, float)]
    for i in range(len(x0)):
        x = np.array(x0, float)
        x[i] += step[i]
        pts.append(x)
    vals = [f(x) for x in pts]
    for _ in range(iters):
        order = np.argsort(vals)
        pts = [pts[i] for i in order]
        vals = [vals[i] for i in order]
        centroid = np.mean(pts[:-1], axis=0)
        refl = centroid + (centroid - pts[-1])
        fr = f(refl)
        if fr < vals[0]:
            exp = centroid + 2 * (centroid - pts[-1])
            fe = f(exp)
            pts[-1], vals[-1] = (exp, fe) if fe < fr else (refl, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = refl, fr
        else:
            contr = centroid + 0.5 * (pts[-1] - centroid)
            fc = f(contr)
            if fc < vals[-1]:
                pts[-1], vals[-1] = contr, fc
            else:
                pts = [pts[0] + 0.5 * (p - pts[0]) for p in pts]
                vals = [f(p) for p in pts]
    best = int(np.argmin(vals))
    return pts[best], vals[best]


def fit_model(targets, x0s, population: float = POPULATION, max_s: float = 3.5):
    """targets: ((schedule, distinct users, weight), ...). x = (logit w, log n, s, log m, log v)
    with q = 10; the best of the starts x0s. Returns (w, (n, s, q), (m, v), loss)."""

    def unpack(x):
        w = 1 / (1 + np.exp(-x[0]))
        return w, (min(np.exp(x[1]), population), x[2], 10.0), (min(np.exp(x[3]), population), np.exp(x[4]))

    def loss(x):
        w, law, window = unpack(x)
        if not 0.0 <= law[1] < max_s or window[1] > 0.5:
            return 1e9
        return sum(wt * np.log(distinct_model(sch, w, law, window) / d) ** 2 for sch, d, wt in targets)

    best = None
    for x0 in x0s:
        x, err = nelder_mead(loss, x0, [0.5, 0.5, 0.1, 0.5, 0.7], iters=400)
        if best is None or err < best[1]:
            best = (x, err)
    x, err = nelder_mead(loss, best[0], [0.2, 0.2, 0.05, 0.2, 0.3], iters=400)
    return (*unpack(x), err)
