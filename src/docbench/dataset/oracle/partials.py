"""Partial aggregates: what a file (or a byte range of one) adds up to; merged into one.

A partial holds, per collection, a :class:`CollectionState`, and for the timed post creates
the first and last time of each did (:class:`.dids.FirstLast`). Dids are first collected
in plain lists (pending), then packed into the compact sets by :meth:`Partial.flush`, which
the scan calls every ``FLUSH_AT`` pending dids: memory grows with the distinct dids, not
with the documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from docbench.dataset.oracle.dids import DistinctDids, FirstLast
from docbench.dataset.oracle.semantics import HOURS, POST, Q3_COLLECTIONS, Collection


@dataclass(slots=True, eq=False)
class CollectionState:
    """One collection's aggregates. (Slots: the scan's hot loop updates these fields once
    or twice per line, and a slot is as quick to reach as a list item.)"""

    documents: int  # every document of the collection (Q1)
    creates: int  # its creates (Q2's count)
    pending: list[str]  # dids of creates, not packed into `distinct` yet
    hours: list[int] | None  # creates per UTC hour, then those without a time; Q3's only
    is_post: bool  # timed creates go to Partial.posts instead of `pending` (Q4, Q5)
    distinct: DistinctDids  # the dids of the creates (Q2; see document.post_distinct)
    packed: list[tuple[np.ndarray, np.ndarray]]  # pending packed dids (from templates)

    @classmethod
    def of(cls, collection: Collection) -> CollectionState:
        """The empty state of ``collection``."""
        hours = [0] * (HOURS + 1) if collection in Q3_COLLECTIONS else None
        return cls(0, 0, [], hours, collection == POST, DistinctDids(), [])

    def pending_dids(self) -> int:
        return len(self.pending) + sum(len(p[0]) for p in self.packed)

    def flush(self) -> None:
        """Pack the pending dids into the compact set."""
        if self.pending:
            self.distinct.add(self.pending)
            self.pending.clear()
        if self.packed:
            packed = self.packed
            self.distinct.add_packed(
                np.concatenate([p[0] for p in packed]), np.concatenate([p[1] for p in packed])
            )
            packed.clear()

    def merge(self, other: CollectionState) -> None:
        """Add a flushed state of the same collection."""
        self.documents += other.documents
        self.creates += other.creates
        self.distinct.update(other.distinct)
        if other.hours is not None and self.hours is not None:
            hours = self.hours
            for h, v in enumerate(other.hours):
                hours[h] += v


@dataclass
class Partial:
    lines: int = 0
    documents: int = 0
    invalid: int = 0
    empty: int = 0
    collections: dict[Collection, CollectionState] = field(default_factory=dict)
    posts: FirstLast = field(default_factory=FirstLast)  # timed post creates per did
    # pending timed post creates: (did, time) pairs, and packed (hi, lo, times) arrays
    post_dids: list[str] = field(default_factory=list)
    post_times: list[int] = field(default_factory=list)
    post_packed: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)

    def collection(self, name: Collection) -> CollectionState:
        """The state of a collection (created empty when new)."""
        st = self.collections.get(name)
        if st is None:
            st = self.collections[name] = CollectionState.of(name)
        return st

    def pending(self) -> int:
        n = len(self.post_dids) + sum(len(p[0]) for p in self.post_packed)
        return n + sum(st.pending_dids() for st in self.collections.values())

    def flush(self) -> None:
        """Pack the pending dids into the compact sets."""
        for st in self.collections.values():
            st.flush()
        if self.post_dids:
            self.posts.add(self.post_dids, self.post_times)
            self.post_dids.clear()
            self.post_times.clear()
        if self.post_packed:
            packed = self.post_packed
            self.posts.add_packed(*(np.concatenate([p[i] for p in packed]) for i in range(3)))
            packed.clear()

    def merge(self, other: Partial) -> None:
        self.flush()
        other.flush()
        self.lines += other.lines
        self.documents += other.documents
        self.invalid += other.invalid
        self.empty += other.empty
        for name, theirs in other.collections.items():
            self.collection(name).merge(theirs)
        self.posts.update(other.posts)

    def __getstate__(self) -> dict[str, object]:
        self.flush()  # (pickled between processes: never with pending dids)
        return self.__dict__
