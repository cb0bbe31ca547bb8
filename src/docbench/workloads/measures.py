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


@dataclass(frozen=True)
class ComparedData:
    """The data a result measured, as ``docbench compare`` matches results on it.

    ``scale`` is the data part of a result's identity: the dataset label, except where the
    workload knows the data's kind and size (a Bluesky dataset of 1,000,000 documents is
    JSONBench's ``1m`` whatever its seed or directory). What else tells two such datasets apart
    (``provenance``: generator seed, directory) is a warning, not another identity."""

    scale: str
    # "bluesky", or None when the workload does not know the data's kind
    kind: str | None = None
    documents: int | None = None
    # where the data comes from, in words: "docbench-gen seed 11", "JSONBench's Bluesky dataset"
    source: str = ""
    # what distinguishes two datasets of one scale: {"seed": 11, "directory": "gen-1m-s11"}
    provenance: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        """For messages: "Bluesky (docbench-gen seed 11), 1,000,000 documents in 'gen-1m-s11'"."""
        if self.documents is None:
            return f"dataset {self.scale!r}"
        kind = (self.kind or "").capitalize()
        if not self.source or (kind and kind in self.source):
            what = self.source or kind
        else:
            what = f"{kind} ({self.source})"
        text = f"{what}, {self.documents:,} documents"
        directory = dict(self.provenance).get("directory")
        return f"{text} in {directory!r}" if directory else text
