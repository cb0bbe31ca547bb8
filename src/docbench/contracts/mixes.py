"""Operation mixes: which point operations a client runs, with what weights.

The YCSB core workloads (a, b, c, f) keep their published proportions; ``read-only`` and
``read-write`` are the pgbench pair (``-S`` vs the default script) for documents. A
read-write "transaction" in pgbench's tpcb-like script is several statements; here every
operation is one unit, and read-write mixes all four kinds so each is measured under load.
"""

from __future__ import annotations

import bisect
import random
from dataclasses import dataclass

READ = "read"
UPDATE = "update"
INSERT = "insert"
READ_MODIFY_WRITE = "read-modify-write"
OPERATIONS = (READ, UPDATE, INSERT, READ_MODIFY_WRITE)
WRITES = frozenset({UPDATE, INSERT, READ_MODIFY_WRITE})


@dataclass(frozen=True)
class Mix:
    name: str
    description: str
    weights: tuple[tuple[str, float], ...]

    @property
    def read_only(self) -> bool:
        return all(op not in WRITES for op, weight in self.weights if weight > 0)

    def chooser(self, rng: random.Random) -> OperationChooser:
        return OperationChooser(self.weights, rng)


class OperationChooser:
    """Draws operation names with the mix's weights (cumulative table + bisect)."""

    def __init__(self, weights: tuple[tuple[str, float], ...], rng: random.Random) -> None:
        self.names = [name for name, weight in weights if weight > 0]
        total = 0.0
        self.cumulative: list[float] = []
        for _name, weight in ((n, w) for n, w in weights if w > 0):
            total += weight
            self.cumulative.append(total)
        self.total = total
        self.rng = rng

    def next(self) -> str:
        if len(self.names) == 1:
            return self.names[0]
        return self.names[bisect.bisect_right(self.cumulative, self.rng.random() * self.total)]


MIXES: dict[str, Mix] = {
    mix.name: mix
    for mix in (
        Mix("read-only", "100% reads by key (pgbench -S)", ((READ, 1.0),)),
        Mix(
            "read-write",
            "50% reads, 30% one-field updates, 10% inserts, 10% read-modify-write",
            ((READ, 0.5), (UPDATE, 0.3), (INSERT, 0.1), (READ_MODIFY_WRITE, 0.1)),
        ),
        Mix("ycsb-a", "YCSB A (update heavy): 50% reads, 50% updates", ((READ, 0.5), (UPDATE, 0.5))),
        Mix("ycsb-b", "YCSB B (read mostly): 95% reads, 5% updates", ((READ, 0.95), (UPDATE, 0.05))),
        Mix("ycsb-c", "YCSB C (read only): 100% reads", ((READ, 1.0),)),
        Mix("ycsb-f", "YCSB F: 50% reads, 50% read-modify-write", ((READ, 0.5), (READ_MODIFY_WRITE, 0.5))),
    )
}


def mix_named(name: str) -> Mix:
    try:
        return MIXES[name]
    except KeyError:
        raise ValueError(f"unknown mix {name!r}; one of {', '.join(MIXES)}") from None
