"""What a result measured, figure by figure: the terms ``docbench compare`` compares results in.

Each workload that can be compared has a module (``Workload.compare``) whose ``measures(document)``
lists its result's figures as :class:`Measure` s, each with a stable id, so that two results of
the same identity give the same ids and are compared figure by figure; ``report/compare``
knows nothing else of a workload's document.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Measure:
    # Stable across runs and docbench versions (it is in `docbench compare --json`):
    # "storage.total_bytes_per_document", "q1.hot", "cpu-read-write-uniform-c8.tps"...
    metric: str
    label: str
    unit: str  # documents, bytes, bytes/document, s, ms, ops/s
    value: float | None
    # Every sample the value stands for, when there are several (hot tries, progress
    # intervals): their spread is the noise a difference has to stand out of.
    tries: tuple[float, ...] = ()
    higher_is_better: bool = False
    # Times depend on the machine; sizes and counts do not (compared across machines as is).
    machine_bound: bool = True
    # A missing value is a failure (a query that did not finish, a run in error), not a figure
    # that was not measured (JSONBench publishes no load time).
    required: bool = False
    note: str = ""
