"""Exact sets of dids in little memory.

Nearly every did is ``did:plc:`` + 24 characters of base32 (``a-z2-7``): 120 bits, stored
losslessly as two uint64 (``hi``, ``lo``: 12 characters each). The keys live in sorted,
de-duplicated numpy runs, merged LSM-style, in 16 buckets by their top bits so that a merge
never copies more than a sixteenth of a set. Any other did (``did:web:…``, odd values) is
kept as a string in a Python set. 16 bytes per (collection, did) instead of ~200 for a
Python set of strings; exact, not a sketch.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

SortKind = Literal["stable", "quicksort"]
Run = tuple[np.ndarray, ...]  # sorted, de-duplicated hi, lo (+ aligned values)

_B32 = b"abcdefghijklmnopqrstuvwxyz234567"
_LUT = np.full(256, 255, dtype=np.uint8)
_LUT[np.frombuffer(_B32, dtype=np.uint8)] = np.arange(32, dtype=np.uint8)
_PREFIX64 = np.frombuffer(b"did:plc:", dtype=np.uint64)[0]
_BUCKET_SHIFT = np.uint64(56)  # hi holds 60 bits: its top 4 bits pick one of 16 buckets
_N_BUCKETS = 16
EMPTY_U64 = np.empty(0, dtype=np.uint64)
EMPTY_IDX = np.empty(0, dtype=np.intp)

_M5 = np.uint64(0x001F001F001F001F)
_M10 = np.uint64(0x000003FF000003FF)
_M20 = np.uint64(0xFFFFF)
_NOT_B32 = np.uint64(0xE0E0E0E0E0E0E0E0)  # a base32 digit (0-31) has none of these bits


def _pack8(x: np.ndarray) -> np.ndarray:
    """Eight base32 digits, one per byte (first digit in the lowest byte), as a 40-bit
    number: pairs of 5-bit digits, then pairs of pairs, then the two halves."""
    x = ((x & _M5) << np.uint64(5)) | ((x >> np.uint64(8)) & _M5)
    x = ((x & _M10) << np.uint64(10)) | ((x >> np.uint64(16)) & _M10)
    return ((x & _M20) << np.uint64(20)) | ((x >> np.uint64(32)) & _M20)


def pack_did_rows(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pack the rows of an (n, 32) uint8 matrix that spell ``did:plc:`` + 24 base32
    characters: ``(hi, lo, ok)``, ``ok`` marking those rows (hi/lo hold only theirs). hi is
    the first 12 characters as a base-32 number, lo the last 12."""
    m = np.ascontiguousarray(m[:, :32])  # (one copy: every step below reads contiguous rows)
    w = np.take(_LUT, m).view(np.uint64)  # (n, 4): 8 base32 digits each, 255 where invalid
    ok = (m.view(np.uint64)[:, 0] == _PREFIX64) & (((w[:, 1] | w[:, 2] | w[:, 3]) & _NOT_B32) == 0)
    if not ok.all():
        w = w[ok]
    a, b, c = _pack8(w[:, 1]), _pack8(w[:, 2]), _pack8(w[:, 3])
    return (a << np.uint64(20)) | (b >> np.uint64(20)), ((b & _M20) << np.uint64(40)) | c, ok


def _did_rows(buf: bytes, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The 32-byte candidates among ``n`` newline-separated dids: ``(rows, which)``, ``which``
    None when the rows are all n dids (the usual case: every did 32 bytes long)."""
    if len(buf) == 33 * n - 1:
        rows = np.frombuffer(buf + b"\n", dtype=np.uint8).reshape(n, 33)
        if (rows[:, 32] == 10).all():
            return rows, None
    a = np.frombuffer(buf, dtype=np.uint8)
    nl = np.flatnonzero(a == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [len(a)]))
    which = np.flatnonzero(ends - starts == 32)
    return a[starts[which][:, None] + np.arange(32)], which


def encode_dids(dids: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """Pack ``did:plc:`` dids: ``(hi, lo, index of each packed did, indexes of the rest)``."""
    n = len(dids)
    if not n:
        return EMPTY_U64, EMPTY_U64, EMPTY_IDX, []
    text = "\n".join(dids)
    try:
        buf = text.encode("ascii")
    except UnicodeEncodeError:  # non-ASCII bytes never validate below
        buf = text.encode("utf-8", "surrogatepass")
    newlines = buf.count(b"\n")
    if newlines != n - 1:  # a did with a newline in it: leave those aside
        clean = [i for i, d in enumerate(dids) if "\n" not in d]
        hi, lo, sub, _ = encode_dids([dids[i] for i in clean])
        return _with_rest(hi, lo, np.asarray(clean, dtype=np.intp)[sub], n)
    rows, which = _did_rows(buf, n)
    hi, lo, ok = pack_did_rows(rows)
    if which is None:
        if ok.all():
            return hi, lo, np.arange(n, dtype=np.intp), []
        which = np.flatnonzero(ok)
    else:
        which = which[ok]
    return _with_rest(hi, lo, which, n)


def _with_rest(
    hi: np.ndarray, lo: np.ndarray, packed: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    rest = np.ones(n, dtype=bool)
    rest[packed] = False
    return hi, lo, packed, np.flatnonzero(rest).tolist()


def decode_did(hi: int, lo: int) -> str:
    chars = bytearray(b"did:plc:")
    for x in (int(hi), int(lo)):
        chars.extend(_B32[(x >> (5 * k)) & 31] for k in range(11, -1, -1))
    return chars.decode("ascii")


def _sort_keys(
    hi: np.ndarray, lo: np.ndarray, kind: SortKind = "stable"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, hi, lo)`` sorted by (hi, lo). ``stable`` (timsort) is fast on sorted runs
    (merging two runs); ``quicksort`` on keys in no order."""
    order = np.argsort(hi, kind=kind)
    hi = hi[order]
    lo = lo[order]
    if ((hi[1:] == hi[:-1]) & (lo[1:] != lo[:-1])).any():
        # two different dids share their first 12 characters: order by lo as well
        sub = np.lexsort((lo, hi))
        order, hi, lo = order[sub], hi[sub], lo[sub]
    return order, hi, lo


def _group_starts(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Start index of each run of equal (hi, lo) in sorted arrays."""
    if not len(hi):
        return EMPTY_IDX
    new = np.empty(len(hi), dtype=bool)
    new[0] = True
    np.not_equal(hi[1:], hi[:-1], out=new[1:])
    new[1:] |= lo[1:] != lo[:-1]
    return np.flatnonzero(new)


def sorted_unique(hi: np.ndarray, lo: np.ndarray, kind: SortKind = "stable") -> tuple[np.ndarray, np.ndarray]:
    _, hi, lo = _sort_keys(hi, lo, kind)
    starts = _group_starts(hi, lo)
    if len(starts) == len(hi):
        return hi, lo
    return hi[starts], lo[starts]


def sorted_minmax(
    hi: np.ndarray, lo: np.ndarray, mn: np.ndarray, mx: np.ndarray, kind: SortKind = "stable"
) -> Run:
    order, hi, lo = _sort_keys(hi, lo, kind)
    mn, mx = mn[order], mx[order]
    starts = _group_starts(hi, lo)
    if len(starts) == len(hi):
        return hi, lo, mn, mx
    return (hi[starts], lo[starts], np.minimum.reduceat(mn, starts), np.maximum.reduceat(mx, starts))


def _bucket_bounds(hi: np.ndarray) -> np.ndarray:
    """Where each bucket starts in a sorted ``hi`` (17 bounds)."""
    return np.searchsorted(hi >> _BUCKET_SHIFT, np.arange(_N_BUCKETS + 1, dtype=np.uint64))


def _joined(a: Run, b: Run) -> list[np.ndarray]:
    """Two runs' arrays, each pair concatenated."""
    return [np.concatenate((x, y)) for x, y in zip(a, b, strict=True)]


class Runs:
    """Sorted runs of packed keys (plus aligned value arrays) in buckets, merged LSM-style:
    a run is merged into the one before it as soon as it is 1/MERGE_RATIO of its size, so a
    bucket holds few runs and at most ~1/MERGE_RATIO of it is duplicates not yet merged away
    (with a fixed population, most new keys are repeats)."""

    width = 2  # arrays per run: hi, lo (+ mn, mx for MinMaxRuns)
    MERGE_RATIO = 16

    def __init__(self) -> None:
        self.buckets: list[list[Run]] = [[] for _ in range(_N_BUCKETS)]

    def _combine(self, a: Run, b: Run) -> Run:
        hi, lo = _joined(a, b)
        return sorted_unique(hi, lo)

    def _push(self, k: int, run: Run) -> None:
        runs = self.buckets[k]
        runs.append(run)
        ratio = self.MERGE_RATIO
        while len(runs) > 1 and len(runs[-2][0]) <= ratio * len(runs[-1][0]):
            b = runs.pop()
            a = runs.pop()
            runs.append(self._combine(a, b))

    def push_sorted(self, arrays: Run) -> None:
        """Add sorted, de-duplicated arrays (split among the buckets)."""
        if not len(arrays[0]):
            return
        bounds = _bucket_bounds(arrays[0]).tolist()
        for k in range(_N_BUCKETS):
            s, e = bounds[k], bounds[k + 1]
            if s < e:
                self._push(k, tuple(a[s:e].copy() for a in arrays))

    def merge_runs(self, other: Runs) -> None:
        """Add every run of ``other`` (of the same width)."""
        for k, runs in enumerate(other.buckets):
            for run in runs:
                self._push(k, run)

    def parts(self) -> list[Run]:
        """One compacted run per non-empty bucket (sorted, de-duplicated)."""
        out = []
        for runs in self.buckets:
            while len(runs) > 1:
                b = runs.pop()
                a = runs.pop()
                runs.append(self._combine(a, b))
            if runs:
                out.append(runs[0])
        return out

    def arrays(self) -> Run:
        """All keys (and values) in one sorted array each (a copy)."""
        parts = self.parts()
        if not parts:
            return tuple(EMPTY_U64 for _ in range(self.width))
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(self.width))

    def __len__(self) -> int:
        return sum(len(p[0]) for p in self.parts())


class DistinctDids(Runs):
    """An exact set of dids (see above)."""

    def __init__(self) -> None:
        super().__init__()
        self.other: set[str] = set()  # dids that are not did:plc, as strings

    def add(self, dids: list[str]) -> None:
        hi, lo, _, rest = encode_dids(dids)
        for i in rest:
            self.other.add(dids[i])
        if len(hi):
            self.push_sorted(sorted_unique(hi, lo))

    def add_packed(self, hi: np.ndarray, lo: np.ndarray) -> None:
        if len(hi):
            self.push_sorted(sorted_unique(hi, lo, "quicksort"))

    def update(self, other: DistinctDids) -> None:
        self.merge_runs(other)
        self.other |= other.other

    def __len__(self) -> int:
        return super().__len__() + len(self.other)


class MinMaxRuns(Runs):
    """Runs of (hi, lo, first time, last time): a merge keeps each did's min and max."""

    width = 4

    def _combine(self, a: Run, b: Run) -> Run:
        hi, lo, mn, mx = _joined(a, b)
        return sorted_minmax(hi, lo, mn, mx)


class FirstLast:
    """Per did, the first and last time of its (timed) post creates; exact, compact."""

    def __init__(self) -> None:
        self.runs = MinMaxRuns()
        # dids that are not did:plc (and None): plain dicts
        self.mins: dict[str | None, int] = {}
        self.maxs: dict[str | None, int] = {}

    def add_other(self, did: str | None, t0: int, t1: int) -> None:
        """Times of a did kept as a string (or of the missing did)."""
        m = self.mins.get(did)
        if m is None:
            self.mins[did] = t0
            self.maxs[did] = t1
        else:
            if t0 < m:
                self.mins[did] = t0
            if t1 > self.maxs[did]:
                self.maxs[did] = t1

    def add(self, dids: list[str], times: list[int]) -> None:
        hi, lo, idx, rest = encode_dids(dids)
        for i in rest:
            self.add_other(dids[i], times[i], times[i])
        if len(hi):
            t = np.array(times, dtype=np.int64)[idx]
            self.runs.push_sorted(sorted_minmax(hi, lo, t, t.copy()))

    def add_packed(self, hi: np.ndarray, lo: np.ndarray, t: np.ndarray) -> None:
        if len(hi):
            self.runs.push_sorted(sorted_minmax(hi, lo, t, t.copy(), "quicksort"))

    def update(self, other: FirstLast) -> None:
        self.runs.merge_runs(other.runs)
        for did, t0 in other.mins.items():
            self.add_other(did, t0, other.maxs[did])
