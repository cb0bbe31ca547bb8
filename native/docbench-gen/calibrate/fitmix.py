"""Two-law user models for the collections one Zipf–Mandelbrot law cannot follow (fit.py).

Usage: python fitmix.py COLLECTION   (follow, block, listitem, listblock)
"""

import sys

import numpy as np
from fit import POPULATION, PUBLISHED, creates
from users import distinct_mixture, fit_mixture

coll = sys.argv[1]
pub = PUBLISHED[coll]
weights = {1e6: 10.0 if coll != "listblock" else 0.05, 1e8: 1.0, 1e9: 1.0}
targets = [(creates(coll, n)[1], d, weights[n]) for n, d in pub.items()]
best = None
for w0 in (0.5, 0.8):
    x0 = [np.log(w0 / (1 - w0)), np.log(2e5), 1.2, np.log(3e7), 0.5]
    r = fit_mixture(targets, x0, POPULATION)
    if best is None or r[-1] < best[-1]:
        best = r
w, h, t, err = best
row = [f"{coll:9} w={w:.4f} head={h[0]:,.0f},{h[1]:.4f} tail={t[0]:,.0f},{t[1]:.4f} err={err:.2e}"]
for scale in (1e6, 1e7, 1e8, 1e9):
    c, sel = creates(coll, scale)
    d = distinct_mixture(sel, w, h, t, POPULATION)
    p = pub.get(scale)
    row.append(f"{scale:.0e}: {d:10,.0f}" + (f" ({100 * (d / p - 1):+.1f}%)" if p else ""))
print("  ".join(row), flush=True)
