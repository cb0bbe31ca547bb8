"""Expected distinct users of a collection's creates under the generator's user model.

The generator draws the user of each create selection (a batch counts once) from a truncated
Zipf–Mandelbrot law over ranks [0, n) (rng.rs `PowerLaw`), so after S selections the expected
number of distinct users is  sum_r 1 - (1 - p_r)^S.  This module computes that sum (exactly for
the head, over narrow log bins for the tail) and fits (n, s, q) to the published figures.
Run as a script it prints the fit per collection; the constants go to model.rs.
"""

from __future__ import annotations

import numpy as np

HEAD = 20_000


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
    p, w = rank_probabilities(n, s, q)
    return float(np.sum(w * -np.expm1(selections * np.log1p(-np.minimum(p, 1 - 1e-12)))))


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


def fit(targets: list[tuple[float, float, float]], x0: tuple[float, float, float], max_n: float):
    """targets: (selections, distinct users, weight). Returns (n, s, q)."""

    def loss(x):
        n, s, q = min(np.exp(x[0]), max_n), x[1], np.exp(x[2])
        if not 0.3 < s < 3.0:
            return 1e9
        return sum(w * np.log(distinct(sel, n, s, q) / d) ** 2 for sel, d, w in targets)

    x, err = nelder_mead(loss, [np.log(x0[0]), x0[1], np.log(x0[2])], [0.5, 0.1, 0.7], iters=250)
    return min(np.exp(x[0]), max_n), x[1], np.exp(x[2]), err


def distinct_mixture(selections: float, w: float, head: tuple, tail: tuple, population: float) -> float:
    """Distinct users when a share w of the selections follows `head` and the rest `tail`, each
    mapped into the population by its own permutation (so their users overlap at random)."""
    d1 = distinct(selections * w, *head)
    d2 = distinct(selections * (1 - w), *tail)
    return d1 + d2 - d1 * d2 / population


def fit_mixture(targets, x0, population: float, iters: int = 300):
    """x = (logit w, log n1, s1, log n2, s2) with q = 10 for both laws."""

    def unpack(x):
        w = 1 / (1 + np.exp(-x[0]))
        return w, (min(np.exp(x[1]), population), x[2], 10.0), (min(np.exp(x[3]), population), x[4], 10.0)

    def loss(x):
        w, h, t = unpack(x)
        if not (0.0 <= h[1] < 3.0 and 0.0 <= t[1] < 3.0):
            return 1e9
        return sum(wt * np.log(distinct_mixture(sel, w, h, t, population) / d) ** 2 for sel, d, wt in targets)

    x, err = nelder_mead(loss, x0, [0.5, 0.5, 0.1, 0.5, 0.1], iters=iters)
    return (*unpack(x), err)
