"""The answer oracle: exact answers of Q1-Q5 for a directory of ndjson files, without a database.

Every line of every data file (see :mod:`docbench.dataset.reader`) is parsed with ``orjson``;
lines orjson refuses are tried again with the standard ``json`` module (strict UTF-8,
``NaN``/``Infinity`` refused), which accepts valid JSON that orjson does not (lone surrogate
escapes such as ``"\\ud83d"``, numbers beyond a double such as ``1e400``, integers beyond 64
bits where orjson refuses them, nesting deeper than orjson's 1024 levels — beyond Python's
recursion limit an iterative parser takes over). Most lines do not need parsing at all: a
line with exactly the byte layout of a line parsed before (a *template*: same keys, same
value widths, printable ASCII, no escapes) is checked against it in bulk with numpy and
gives the same document the parse would; see "The byte-level fast path" below for why.
When the native scanner is built (``docbench-scan``, Rust; see
:mod:`docbench.dataset.native_scan`), it reads the files instead and aggregates the lines it
can judge exactly (valid UTF-8 that serde_json reads as an object with the five fields of the
right types, each once); it hands every other line back to the Python scan below, so the
semantics stay here. Without it:
Long lines of the usual event layout (posts, mostly) are read through simdjson's validating
DOM parser, which builds no object for the parts the queries do not read; any other layout,
and any line simdjson refuses, takes the orjson parse (see ``_plain_fields``).

- An **empty line** (nothing but JSON whitespace) is counted in ``empty_lines``; it is not a
  document.
- An **invalid line** (refused by both parsers: not JSON, invalid UTF-8, a UTF-8 BOM,
  trailing garbage) or a JSON value that is not an object (array, string, number, ...) is
  counted in ``invalid_lines``; it is not a document.
- Every other line is a **document**, counted in ``documents``.

Query semantics (methodology §2), for fields that are missing or odd:

- The collection is ``commit.collection`` when ``commit`` is an object and the value is a
  string; missing / ``null`` / ``commit`` not an object → ``null`` (its own group in Q1 and
  Q2). Any other JSON value (number, bool, object) is grouped under its compact JSON text, as
  PostgreSQL's ``->>`` would. ``did`` is read the same way.
- "creates" = ``kind == "commit"`` and ``commit.operation == "create"`` (exact strings).
- ``time_us`` counts only when it is a JSON integer within the signed 64-bit range; otherwise
  the document has no time: Q3 counts it under hour ``null`` (sorted after 23), Q4/Q5 ignore
  it.
- Q2's distinct count is exact and, like SQL's ``COUNT(DISTINCT did)``, does not count a
  missing did. Q4/Q5 group by did like SQL ``GROUP BY``: a missing did forms its own group
  (``null``).

Canonical answer document (``answers.json``; what every database's answers are compared
against by :func:`docbench.answers.check_answer`)::

    {"format": 1,
     "files": [{"name": str, "sha256": hex, "size": bytes, "mtime_ns": int}, ...],  # by name
     "documents": N, "invalid_lines": N, "empty_lines": N,
     "q1": [[collection_or_null, count], ...],
           # count desc, ties by collection asc (null first)
     "q2": [[collection_or_null, count, distinct_dids], ...],
           # creates only; same order as q1
     "q3": [[collection, hour_utc_0_23, count], ...],
           # creates of post/repost/like; hour asc, then collection asc
     "q4": [[did, first_time_us], ...],
           # creates of post; the 3 earliest min(time_us), ascending
     "q5": [[did, span_us], ...],
           # creates of post; the 3 largest max(time_us) - min(time_us), descending
     "q4_ties": TIES_or_null, "q5_ties": TIES_or_null,
     "compute_seconds": float}

Ties in Q4/Q5 are broken by did ascending (``null`` first) to make the document
deterministic; any other choice among dids sharing the 3rd value is just as valid. ``TIES``
lets a checker judge such choices::

    {"value": v,           # the value of the last (3rd) row
     "count": n,           # how many dids have exactly that value
     "dids": [...],        # those dids, sorted, at most MAX_TIED_DIDS of them
     "next": [[did, v], ...]}  # the rows that would come after the top 3 (ranks 4..13)

All timestamps and spans are integers in microseconds (UTC).

Caches, both next to the data only when docbench generated the dataset -- see
:func:`docbench.paths.cache_dir_for` -- else under docbench's home, so that a user's data
directory is never written:

- ``answers.json``, valid while the data files' names and sha256 match ``files``;
- ``.oracle-partials/<file>.npz``: one partial aggregate per data file (counts, hour
  counts, the packed did sets; numpy arrays, no pickles), valid while that file has the
  recorded name and sha256 and the oracle is the same version (a digest of this module).
  Adding files to a dataset reads only the new files; removing one reads nothing (its
  partial is dropped); a changed file is read again. ``--refresh`` ignores both.

A file whose size and mtime are those recorded is not hashed again. Files are hashed as they
are read (a whole-file task) or by a task of their own (a file split into byte ranges).

Speed and memory (docbench-gen data, a 2-core AMD EPYC; numbers in "Measurements" below).
``jobs`` processes (this one and ``jobs - 1`` spawned workers) take whole files, or byte
ranges of big uncompressed files when that balances better; this process merges the per-file
partials as they come. Memory grows with the distinct (collection, did) pairs of creates,
never with the document count: ``did:plc:`` ids are packed losslessly into 16 bytes and kept
in sorted numpy runs (see ``DistinctDids``), 32 bytes per posting did for Q4/Q5.

Measurements (``docbench answers DIR --jobs 2 --refresh``, docbench-gen data, seed 1, this
2-core machine otherwise idle; the sha256 of each file already known, so no hashing):

=======  ==========================  ===========  ==========  =========  ===================
scale    files                       seconds      docs/s      CPU s      peak RSS (parent +
                                                              (both)     worker)
=======  ==========================  ===========  ==========  =========  ===================
10m      10 plain (4.8 GB)           10.1         989,627     19.2       117 + 85 MiB
100m     100 zstd (12 GB; 48 GB      113.8        878,736     210.0      306 + 93 MiB
         raw)
=======  ==========================  ===========  ==========  =========  ===================

Those were the Python scan's figures. With the native scanner (same command, page cache
warm; answers identical to the Python scan's at 100m): 10m plain 4.63-4.80 s, **2.08-2.16M
docs/s**, 8.5-8.9 s of scanner CPU, parent 150 MiB; 100m zstd 69.2 s, **1.45M docs/s**,
126 s of scanner CPU, parent 306 MiB, each scanner at most 21 MiB. A scanner alone reads a
1M-document plain file in 0.85 s (serde_json's parse is ~60% of it). With the 10m files
not in the page cache, the first run read them from the disk: 9.44 s (1.06M docs/s).
The Python scan alone:
One process alone scans a 1M-document plain file in 1.45-1.6 s once it has learned the
layouts (1.8 s for its first file); two at once run ~20% slower each (the two vCPUs share
the host). The zstd decompression adds ~0.3 us per document. Hashing, when a file's sha256
is not known yet, adds ~0.3 s per 480 MB file (sha256 at ~1.5 GB/s with SHA-NI).

The memory model, from those figures. A worker holds one file's partial at a time: its
peak does not grow with the scale (83-93 MiB at 10m and 100m). The parent holds the merged
partial: 16 bytes per distinct (collection, did) pair of creates (Q2) and 32 bytes per
posting did (Q4/Q5), kept in sorted runs that a merge copies once more, on top of ~80 MiB
of interpreter, numpy and orjson:

    parent RSS ~ 80 MiB + 1.3 x (16 B x pairs + 32 B x posting dids)

100m here: 7,516,651 pairs and 1,712,389 posting dids, so 80 MiB + 1.3 x 175 MB = 297 MiB
(measured 306 MiB; at 10m, 1,574,025 pairs and 342,894 posting dids: 80 + 1.3 x 36 MB =
125 MiB predicted, 117 MiB measured). At 1000m the real stream has 26.5M pairs over its
eight big collections and 3.94M posting dids (the published figures: see issue #15, the
generator's own growth is close to these at 100m): 16 B x 26.5M + 32 B x 3.94M = 550 MB,
so ~0.8 GiB for the parent, plus ~0.1 GiB per worker; with a 2x margin for skewed merges,
under 2 GiB in all. It never grows with the document count itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import orjson

from docbench.dataset import native_scan
from docbench.dataset.reader import (
    compression_of,
    dataset_files,
    file_sha256,
    iter_blocks,
    known_sha256,
    read_error_message,
    remember_sha256,
    sha_cache_key,
    split_ranges,
)
from docbench.paths import cache_dir_for
from docbench.procstats import peak_rss

FORMAT = 1
ANSWERS_NAME = "answers.json"
POST = "app.bsky.feed.post"
REPOST = "app.bsky.feed.repost"
LIKE = "app.bsky.feed.like"
Q3_COLLECTIONS = frozenset({POST, REPOST, LIKE})
TOP_N = 3
NEXT_ROWS = 10
MAX_TIED_DIDS = 1000
HOUR_US = 3_600_000_000
NO_HOUR = 24  # index of the "no time" bucket in the per-collection hour lists
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

_INVALID = object()  # has no .get(): _scan_lines relies on it


# --------------------------------------------------------------------------------------------
# Parsing fallbacks


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _parse_int(text: str):
    try:
        return int(text)
    except ValueError:  # beyond Python's int-from-str digit limit: still a valid number
        return float(text)


_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def _parse_deep(s: str):
    """An iterative JSON parser (no recursion), for documents nested beyond Python's limit.

    Returns the value, or raises ``ValueError``.
    """
    from json.decoder import scanstring

    ws = _WS.match
    num = _NUMBER.match
    n = len(s)
    stack: list[list] = []  # [container, pending key (dict) or None (list)]

    def read_key(i: int) -> tuple[str, int]:
        if s[i : i + 1] != '"':
            raise ValueError(f"expected a key at {i}")
        key, i = scanstring(s, i + 1, True)
        i = ws(s, i).end()
        if s[i : i + 1] != ":":
            raise ValueError(f"expected ':' at {i}")
        return key, ws(s, i + 1).end()

    i = ws(s, 0).end()
    while True:
        # a value starts at i
        c = s[i : i + 1]
        if c == "{":
            i = ws(s, i + 1).end()
            if s[i : i + 1] == "}":
                value, i = {}, i + 1
            else:
                key, i = read_key(i)
                stack.append([{}, key])
                continue
        elif c == "[":
            i = ws(s, i + 1).end()
            if s[i : i + 1] == "]":
                value, i = [], i + 1
            else:
                stack.append([[], None])
                continue
        elif c == '"':
            value, i = scanstring(s, i + 1, True)
        elif s.startswith("true", i):
            value, i = True, i + 4
        elif s.startswith("false", i):
            value, i = False, i + 5
        elif s.startswith("null", i):
            value, i = None, i + 4
        else:
            m = num(s, i)
            if not m or m.end() == i:
                raise ValueError(f"unexpected character at {i}")
            text = m.group()
            value = float(text) if (m.group(1) or m.group(2)) else _parse_int(text)
            i = m.end()
        # attach the value to its parents, closing containers as they end
        while True:
            if not stack:
                if ws(s, i).end() != n:
                    raise ValueError("extra data")
                return value
            top = stack[-1]
            cont = top[0]
            is_dict = type(cont) is dict
            if is_dict:
                cont[top[1]] = value
            else:
                cont.append(value)
            i = ws(s, i).end()
            ch = s[i : i + 1]
            if ch == ",":
                i = ws(s, i + 1).end()
                if is_dict:
                    top[1], i = read_key(i)
                break
            if ch == ("}" if is_dict else "]"):
                stack.pop()
                value, i = cont, i + 1
                continue
            raise ValueError(f"expected ',' or a closing bracket at {i}")


def parse_fallback(line: bytes):
    """Parse a line orjson refused: a value, or ``_INVALID``."""
    try:
        text = line.decode("utf-8")  # strict: encoded surrogates and bad bytes are invalid
    except UnicodeDecodeError:
        return _INVALID
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int)
    except RecursionError:
        pass
    except ValueError:
        return _INVALID
    try:
        return _parse_deep(text)
    except (ValueError, IndexError):
        return _INVALID


def parse_document(line: bytes):
    """A line's document (a dict), ``None`` for an empty line, ``_INVALID`` otherwise.
    (The oracle's hot loop inlines this.)"""
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError:
        if not line.strip(b" \t\r\n"):
            return None
        doc = parse_fallback(line)
    return doc if type(doc) is dict else _INVALID


def _json_text(value) -> str | None:
    """The grouping key of a non-string JSON value: its compact JSON text (``None`` stays)."""
    if value is None:
        return None
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=True)


# --------------------------------------------------------------------------------------------
# Exact sets of dids in little memory
#
# Nearly every did is ``did:plc:`` + 24 characters of base32 (``a-z2-7``): 120 bits, stored
# losslessly as two uint64 (``hi``, ``lo``: 12 characters each). The keys live in sorted,
# de-duplicated numpy runs, merged LSM-style, in 16 buckets by their top bits so that a merge
# never copies more than a sixteenth of a set. Any other did (``did:web:…``, odd values) is
# kept as a string in a Python set. 16 bytes per (collection, did) instead of ~200 for a
# Python set of strings; exact, not a sketch.

_B32 = b"abcdefghijklmnopqrstuvwxyz234567"
_LUT = np.full(256, 255, dtype=np.uint8)
_LUT[np.frombuffer(_B32, dtype=np.uint8)] = np.arange(32, dtype=np.uint8)
_PREFIX64 = np.frombuffer(b"did:plc:", dtype=np.uint64)[0]
_WEIGHTS = np.uint64(32) ** np.arange(11, -1, -1, dtype=np.uint64)  # 12 base32 digits
_BUCKET_SHIFT = np.uint64(56)  # hi holds 60 bits: its top 4 bits pick one of 16 buckets
_N_BUCKETS = 16
FLUSH_AT = 200_000  # pending dids (strings or packed) before they are merged into runs
_EMPTY_U64 = np.empty(0, dtype=np.uint64)
_EMPTY_IDX = np.empty(0, dtype=np.intp)


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


def encode_dids(dids: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """Pack ``did:plc:`` dids: ``(hi, lo, index of each packed did, indexes of the rest)``."""
    n = len(dids)
    if not n:
        return _EMPTY_U64, _EMPTY_U64, _EMPTY_IDX, []
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
    m = None
    cand = None
    if len(buf) == 33 * n - 1:  # the usual case: every did 32 bytes long
        rows = np.frombuffer(buf + b"\n", dtype=np.uint8).reshape(n, 33)
        if (rows[:, 32] == 10).all():
            m = rows
    if m is None:
        a = np.frombuffer(buf, dtype=np.uint8)
        nl = np.flatnonzero(a == 10)
        starts = np.concatenate(([0], nl + 1))
        ends = np.concatenate((nl, [len(a)]))
        cand = np.flatnonzero(ends - starts == 32)
        m = a[starts[cand][:, None] + np.arange(32)]
    hi, lo, ok = pack_did_rows(m)
    if cand is None:
        if ok.all():
            return hi, lo, np.arange(n, dtype=np.intp), []
        cand = np.flatnonzero(ok)
    else:
        cand = cand[ok]
    return _with_rest(hi, lo, cand, n)


def _with_rest(hi, lo, cand: np.ndarray, n: int):
    rest = np.ones(n, dtype=bool)
    rest[cand] = False
    return hi, lo, cand, np.flatnonzero(rest).tolist()


def decode_did(hi: int, lo: int) -> str:
    chars = bytearray(b"did:plc:")
    for x in (int(hi), int(lo)):
        chars.extend(_B32[(x >> (5 * k)) & 31] for k in range(11, -1, -1))
    return chars.decode("ascii")


def _sort_keys(hi: np.ndarray, lo: np.ndarray,
               kind: str = "stable") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
        return _EMPTY_IDX
    new = np.empty(len(hi), dtype=bool)
    new[0] = True
    np.not_equal(hi[1:], hi[:-1], out=new[1:])
    new[1:] |= lo[1:] != lo[:-1]
    return np.flatnonzero(new)


def _sorted_unique(hi: np.ndarray, lo: np.ndarray,
                   kind: str = "stable") -> tuple[np.ndarray, np.ndarray]:
    _, hi, lo = _sort_keys(hi, lo, kind)
    starts = _group_starts(hi, lo)
    if len(starts) == len(hi):
        return hi, lo
    return hi[starts], lo[starts]


def _sorted_minmax(hi, lo, mn, mx, kind: str = "stable") -> tuple[np.ndarray, ...]:
    order, hi, lo = _sort_keys(hi, lo, kind)
    mn, mx = mn[order], mx[order]
    starts = _group_starts(hi, lo)
    if len(starts) == len(hi):
        return hi, lo, mn, mx
    return (hi[starts], lo[starts], np.minimum.reduceat(mn, starts),
            np.maximum.reduceat(mx, starts))


def _bucket_bounds(hi: np.ndarray) -> np.ndarray:
    """Where each bucket starts in a sorted ``hi`` (17 bounds)."""
    return np.searchsorted(hi >> _BUCKET_SHIFT, np.arange(_N_BUCKETS + 1, dtype=np.uint64))


class _Runs:
    """Sorted runs of packed keys (plus aligned value arrays) in buckets, merged LSM-style:
    a run is merged into the one before it as soon as it is 1/MERGE_RATIO of its size, so a
    bucket holds few runs and at most ~1/MERGE_RATIO of it is duplicates not yet merged away
    (with a fixed population, most new keys are repeats)."""

    width = 2  # arrays per run: hi, lo (+ mn, mx for _MinMaxRuns)
    MERGE_RATIO = 16

    def __init__(self) -> None:
        self.buckets: list[list[tuple[np.ndarray, ...]]] = [[] for _ in range(_N_BUCKETS)]

    def _combine(self, a: tuple, b: tuple) -> tuple:
        return _sorted_unique(np.concatenate((a[0], b[0])), np.concatenate((a[1], b[1])))

    def _push(self, k: int, run: tuple) -> None:
        runs = self.buckets[k]
        runs.append(run)
        ratio = self.MERGE_RATIO
        while len(runs) > 1 and len(runs[-2][0]) <= ratio * len(runs[-1][0]):
            b = runs.pop()
            a = runs.pop()
            runs.append(self._combine(a, b))

    def push_sorted(self, arrays: tuple[np.ndarray, ...]) -> None:
        """Add sorted, de-duplicated arrays (split among the buckets)."""
        if not len(arrays[0]):
            return
        bounds = _bucket_bounds(arrays[0]).tolist()
        for k in range(_N_BUCKETS):
            s, e = bounds[k], bounds[k + 1]
            if s < e:
                self._push(k, tuple(a[s:e].copy() for a in arrays))

    def update(self, other: _Runs) -> None:
        for k, runs in enumerate(other.buckets):
            for run in runs:
                self._push(k, run)

    def parts(self) -> list[tuple[np.ndarray, ...]]:
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

    def arrays(self) -> tuple[np.ndarray, ...]:
        """All keys (and values) in one sorted array each (a copy)."""
        parts = self.parts()
        if not parts:
            return tuple(_EMPTY_U64 for _ in range(self.width))
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(self.width))

    def __len__(self) -> int:
        return sum(len(p[0]) for p in self.parts())


class DistinctDids(_Runs):
    """An exact set of dids (see above)."""

    def __init__(self) -> None:
        super().__init__()
        self.other: set = set()

    def add(self, dids: list[str]) -> None:
        hi, lo, _, rest = encode_dids(dids)
        for i in rest:
            self.other.add(dids[i])
        if len(hi):
            self.push_sorted(_sorted_unique(hi, lo))

    def add_packed(self, hi: np.ndarray, lo: np.ndarray) -> None:
        if len(hi):
            self.push_sorted(_sorted_unique(hi, lo, "quicksort"))

    def update(self, other: DistinctDids) -> None:
        super().update(other)
        self.other |= other.other

    def __len__(self) -> int:
        return super().__len__() + len(self.other)


class _MinMaxRuns(_Runs):
    width = 4

    def _combine(self, a: tuple, b: tuple) -> tuple:
        return _sorted_minmax(*(np.concatenate((x, y)) for x, y in zip(a, b, strict=True)))


class FirstLast:
    """Per did, the first and last time of its (timed) post creates; exact, compact."""

    def __init__(self) -> None:
        self.runs = _MinMaxRuns()
        self.mins: dict = {}  # dids that are not did:plc (and None): plain dicts
        self.maxs: dict = {}

    def _add_other(self, did, t0: int, t1: int) -> None:
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
            self._add_other(dids[i], times[i], times[i])
        if len(hi):
            t = np.array(times, dtype=np.int64)[idx]
            self.runs.push_sorted(_sorted_minmax(hi, lo, t, t.copy()))

    def add_packed(self, hi: np.ndarray, lo: np.ndarray, t: np.ndarray) -> None:
        if len(hi):
            self.runs.push_sorted(_sorted_minmax(hi, lo, t, t.copy(), "quicksort"))

    def update(self, other: FirstLast) -> None:
        self.runs.update(other.runs)
        for did, t0 in other.mins.items():
            self._add_other(did, t0, other.maxs[did])


# --------------------------------------------------------------------------------------------
# Partial aggregates (one per file or file range; merged)

# per collection: [all events, creates, pending dids (strings), hour counts or None, is post,
#                  DistinctDids, pending packed dids (list of (hi, lo) arrays)]
ALL, CREATES, PENDING, HOURS, IS_POST, DISTINCT, PACKED = range(7)


def _new_state(coll: str | None) -> list:
    return [0, 0, [], [0] * 25 if coll in Q3_COLLECTIONS else None, coll == POST,
            DistinctDids(), []]


@dataclass
class Partial:
    lines: int = 0
    documents: int = 0
    invalid: int = 0
    empty: int = 0
    colls: dict = field(default_factory=dict)  # collection -> state list (see _new_state)
    posts: FirstLast = field(default_factory=FirstLast)  # timed post creates per did
    post_dids: list = field(default_factory=list)  # pending (did, time) of timed post creates
    post_times: list = field(default_factory=list)
    post_packed: list = field(default_factory=list)  # pending (hi, lo, times) arrays

    def state(self, coll) -> list:
        st = self.colls.get(coll)
        if st is None:
            st = self.colls[coll] = _new_state(coll)
        return st

    def pending(self) -> int:
        n = len(self.post_dids) + sum(len(p[0]) for p in self.post_packed)
        for st in self.colls.values():
            n += len(st[PENDING]) + sum(len(p[0]) for p in st[PACKED])
        return n

    def flush(self) -> None:
        """Pack the pending dids into the compact sets."""
        for st in self.colls.values():
            if st[PENDING]:
                st[DISTINCT].add(st[PENDING])
                st[PENDING].clear()
            if st[PACKED]:
                packed = st[PACKED]
                st[DISTINCT].add_packed(np.concatenate([p[0] for p in packed]),
                                        np.concatenate([p[1] for p in packed]))
                packed.clear()
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
        for coll, theirs in other.colls.items():
            mine = self.state(coll)
            mine[ALL] += theirs[ALL]
            mine[CREATES] += theirs[CREATES]
            mine[DISTINCT].update(theirs[DISTINCT])
            if theirs[HOURS] is not None:
                hours = mine[HOURS]
                for h, v in enumerate(theirs[HOURS]):
                    hours[h] += v
        self.posts.update(other.posts)

    def __getstate__(self) -> dict:  # pickled between processes: never with pending dids
        self.flush()
        return self.__dict__

    # -- the per-file cache (see PartialCache): arrays, plus JSON for the rest -------------

    def to_arrays(self, meta: dict) -> dict[str, np.ndarray]:
        """This partial as named arrays for ``np.savez`` (no pickles: loading runs no code).
        ``meta`` (the file's identity) is stored with the counts as JSON."""
        self.flush()
        arrays: dict[str, np.ndarray] = {}
        colls = []
        for i, (coll, st) in enumerate(self.colls.items()):
            arrays[f"c{i}_hi"], arrays[f"c{i}_lo"] = st[DISTINCT].arrays()
            colls.append([coll, st[ALL], st[CREATES], st[HOURS], sorted(st[DISTINCT].other)])
        for name, a in zip(("p_hi", "p_lo", "p_mn", "p_mx"), self.posts.runs.arrays(),
                           strict=True):
            arrays[name] = a
        posts = self.posts
        others = [[d, t, posts.maxs[d]] for d, t in posts.mins.items()]
        doc = dict(meta, lines=self.lines, documents=self.documents, invalid=self.invalid,
                   empty=self.empty, colls=colls, post_others=others)
        # ensure_ascii: lone surrogates (valid JSON escapes in the data) survive as escapes
        arrays["meta"] = np.frombuffer(json.dumps(doc, ensure_ascii=True).encode(), np.uint8)
        return arrays

    @classmethod
    def from_arrays(cls, doc: dict, arrays) -> Partial:
        """The partial :meth:`to_arrays` stored (``arrays``: name -> array); ValueError if
        the arrays are not what it stores."""

        def get(name: str, dtype) -> np.ndarray:
            a = arrays[name]
            if a.dtype != dtype or a.ndim != 1:
                raise ValueError(f"{name}: not a 1-d {dtype} array")
            return a

        part = cls(lines=doc["lines"], documents=doc["documents"], invalid=doc["invalid"],
                   empty=doc["empty"])
        for i, (coll, n_all, n_creates, hours, other) in enumerate(doc["colls"]):
            st = part.state(coll)
            st[ALL], st[CREATES] = n_all, n_creates
            if (hours is None) != (st[HOURS] is None) or (hours is not None and len(hours) != 25):
                raise ValueError("hour counts do not fit the collection")
            st[HOURS] = hours
            hi, lo = get(f"c{i}_hi", np.uint64), get(f"c{i}_lo", np.uint64)
            if len(hi) != len(lo):
                raise ValueError("packed dids of different lengths")
            st[DISTINCT].push_sorted((hi, lo))
            st[DISTINCT].other = set(other)
        runs = (get("p_hi", np.uint64), get("p_lo", np.uint64), get("p_mn", np.int64),
                get("p_mx", np.int64))
        if len({len(a) for a in runs}) != 1:
            raise ValueError("post arrays of different lengths")
        part.posts.runs.push_sorted(runs)
        for did, t0, t1 in doc["post_others"]:
            part.posts._add_other(did, t0, t1)
        return part


# --------------------------------------------------------------------------------------------
# The byte-level fast path: line templates
#
# Most lines of a dataset share a handful of exact byte layouts: the same keys in the same
# order, values of the same lengths (a like is a like: did, time, rev, rkey, cids, date and
# uri always have the same widths). A *template* is such a layout, learned from one line that
# the full parse accepted: every byte is either LITERAL (JSON structure, keys, whitespace,
# and the values of ``kind``, ``commit.operation``, ``commit.collection``, which fix the
# line's group) or a SLOT: a byte inside a string value (``did``, ``rev``, text, ...) or a
# digit of an integer (``time_us``, numbers in the record). Lines of the template's length
# are then checked in bulk with numpy, one comparison per byte, instead of being parsed.
#
# Why a line that passes the check parses exactly as the template says (the proof the fast
# path rests on). The line that taught the template (L) is printable ASCII without any
# backslash, and the full parse accepted it. A checked line (M) has L's length, L's bytes at
# every literal position, a byte in 0x23-0x7e (printable ASCII above the quote: no quote, no
# control character, nothing beyond ASCII) at every string-slot position, a digit at every
# digit slot (not 0 first in a multi-digit integer), and no backslash anywhere (a line with a
# backslash never reaches a template: see ``_Blocks.route``). Reading M from left to right,
# every string starts and ends where it does in L (no quote in a slot to end it early, no
# backslash to escape one), every number has L's extent and is a valid JSON integer, every
# other token is L's own bytes: M is the same sequence of tokens, valid JSON, with the same
# keys (so the same duplicate keys -- and templates refuse those at the top level and in
# ``commit`` anyway). Its ``kind``, ``commit.operation`` and ``commit.collection`` are L's
# (literal), its ``did`` is the ASCII text of its slot (no escapes), its ``time_us`` the
# integer of its digits (at most 18: always within int64). M is pure ASCII, hence valid
# UTF-8. Whether orjson or the fallbacks would have parsed M, the result is the same
# document. Anything else (escapes, non-ASCII, a space in a value, other lengths or layouts)
# takes the full parse, line by line; the tests check this on every byte of template lines
# replaced by tricky bytes (test_oracle_scale.py).

TEMPLATE_MAX_LEN = 4096  # longer lines always take the full parse
TEMPLATES_PER_LEN = 4
MAX_TEMPLATES = 256
LEARN_MIN = 3  # a length is worth a template once this many lines of it missed in one block
LEARN_TRIES = 2  # failed attempts per length before that length is given up
LEARN_PER_BLOCK = 4
LEARN_FIRST_BLOCKS = 16  # attempts per block in a process's first 4 blocks (fast start)
LEARN_EVERY_BLOCK = 32  # learn from each of a process's first blocks, then from every 8th
SIMD_MIN_BYTES = 512  # lines this long try simdjson first (see _plain_fields)
BATCH_ROWS = 2048  # rows of one length gathered (across blocks) before they are checked
PENDING_BYTES = 16 << 20  # at most this many bytes of rows wait to be checked
READ_BYTES = 4 << 20  # bytes read per block
SAMPLE_BYTES = 256 << 10  # with few templates yet, the start of a block is learned from first
CHUNK_BYTES = 256 << 10  # bytes of rows per numpy pass (temporaries stay in the cache)
_QUOTE, _BACKSLASH = 0x22, 0x5C
_STR_LO, _STR_SPAN = 0x23, 0x7E - 0x23  # a string-slot byte: printable ASCII after '"'
_TOKEN = re.compile(rb'"[^"]*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null'
                    rb"|[{}\[\]:,]|[ \t\r]+")
_INT_TOKEN = re.compile(rb"-?[0-9]+")
_NOT_TEMPLATE_BYTE = re.compile(rb"[^\x20-\x7e]|\\")
_MAX_DEPTH = 64
_SCRATCH = np.empty(CHUNK_BYTES + TEMPLATE_MAX_LEN, dtype=np.uint8)
_SCRATCH_BOOL = np.empty(CHUNK_BYTES + TEMPLATE_MAX_LEN, dtype=bool)


class _NoTemplate(Exception):
    pass


class Template:
    """One exact byte layout (see above): per byte an allowed range ``[lo, lo + span]``."""

    __slots__ = ("length", "lo", "span", "no_commit", "coll", "creates", "did", "time", "hits")

    def __init__(self, line: bytes, slots: list[tuple[int, int, str]], no_commit: bool,
                 coll, creates: bool, did: tuple, time_: tuple) -> None:
        self.length = len(line)
        lo = np.frombuffer(line, dtype=np.uint8).copy()
        span = np.zeros(len(line), dtype=np.uint8)
        for s, e, kind in slots:
            if kind == "str":
                lo[s:e] = _STR_LO
                span[s:e] = _STR_SPAN
            else:  # the digits of an integer
                lo[s:e] = 0x30
                span[s:e] = 9
                if e - s > 1:
                    lo[s] = 0x31  # no leading zero
                    span[s] = 8
        self.lo, self.span = lo, span
        self.no_commit = no_commit
        self.coll = coll
        self.creates = creates
        self.did = did  # ("slot", start, end) or ("value", did or None)
        self.time = time_  # ("slot", negative, start, end) or ("value", time_us or None)
        self.hits = 0

    def match(self, m: np.ndarray) -> np.ndarray | None:
        """Which rows of ``m`` (n x length, uint8; rows without a backslash, see
        ``_Blocks``) follow the template: a bool mask, or None when all of them do."""
        size = m.size
        if size <= len(_SCRATCH):  # (reused buffers: fresh ones cost page faults)
            diff = np.subtract(m, self.lo, out=_SCRATCH[:size].reshape(m.shape))
            outside = np.greater(diff, self.span, out=_SCRATCH_BOOL[:size].reshape(m.shape))
        else:
            outside = np.subtract(m, self.lo) > self.span
        # (uint8 arithmetic wraps: one test per byte for [lo, lo + span])
        if not outside.any():
            return None
        return ~outside.any(axis=1)


def _tree(line: bytes, toks: list[tuple[int, int]], i: int, depth: int):
    """The JSON value starting at token ``i``: ``(node, next token)``. Nodes: ``("obj",
    [(key bytes, node)], ...)``, ``("arr", [node])``, ``("tok", start, end)``."""
    if depth > _MAX_DEPTH:
        raise _NoTemplate
    s, e = toks[i]
    c = line[s]
    if c == 0x7B or c == 0x5B:  # { [
        close = 0x7D if c == 0x7B else 0x5D
        items: list = []
        i += 1
        if line[toks[i][0]] == close:
            return ("obj" if c == 0x7B else "arr", items), i + 1
        while True:
            if c == 0x7B:
                ks, ke = toks[i]
                if line[ks] != _QUOTE or line[toks[i + 1][0]] != 0x3A:  # "key" :
                    raise _NoTemplate
                child, i = _tree(line, toks, i + 2, depth + 1)
                items.append((line[ks + 1:ke - 1], child))
            else:
                child, i = _tree(line, toks, i, depth + 1)
                items.append(child)
            sep = line[toks[i][0]]
            i += 1
            if sep == close:
                return ("obj" if c == 0x7B else "arr", items), i
            if sep != 0x2C:
                raise _NoTemplate
    if c in b"{}[]:,":
        raise _NoTemplate
    return ("tok", s, e), i + 1


def _members(node) -> dict:
    keys = [k for k, _ in node[1]]
    if len(set(keys)) != len(keys):  # duplicate keys: leave those lines to the full parse
        raise _NoTemplate
    return dict(node[1])


def _slots(line: bytes, node, out: list, fixed: set) -> None:
    """Every slot under ``node``, except under the nodes in ``fixed`` (kept literal)."""
    if id(node) in fixed:
        return
    if node[0] == "obj":
        for _, child in node[1]:
            _slots(line, child, out, fixed)
    elif node[0] == "arr":
        for child in node[1]:
            _slots(line, child, out, fixed)
    else:
        s, e = node[1], node[2]
        if line[s] == _QUOTE:
            if e - s > 2:
                out.append((s + 1, e - 1, "str"))
        elif _INT_TOKEN.fullmatch(line, s, e):
            out.append((s + (line[s] == 0x2D), e, "int"))


def derive_template(line: bytes) -> Template | None:
    """The template of one line (see above), or None if the line does not make one: not
    pure printable ASCII, escapes, duplicate keys where they matter, not an object, ..."""
    if not 0 < len(line) <= TEMPLATE_MAX_LEN or _NOT_TEMPLATE_BYTE.search(line):
        return None
    line = bytes(line)
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(doc) is not dict:
        return None
    toks = []
    pos = 0
    for m in _TOKEN.finditer(line):
        if m.start() != pos:
            return None
        pos = m.end()
        if line[m.start()] not in b" \t\r":
            toks.append(m.span())
    if pos != len(line):
        return None
    try:
        root, end = _tree(line, toks, 0, 0)
        if end != len(toks) or root[0] != "obj":
            return None
        top = _members(root)
        fixed = {id(top[k]) for k in (b"kind", b"did", b"time_us") if k in top}
        commit = doc.get("commit")
        no_commit = type(commit) is not dict
        coll = None
        creates = False
        cnode = top.get(b"commit")
        if no_commit:
            if cnode is not None:
                fixed.add(id(cnode))
        else:
            if cnode is None or cnode[0] != "obj":
                return None
            cmap = _members(cnode)
            fixed.update(id(cmap[k]) for k in (b"collection", b"operation") if k in cmap)
            coll = commit.get("collection")
            if type(coll) is not str and coll is not None:
                coll = _json_text(coll)
            creates = commit.get("operation") == "create" and doc.get("kind") == "commit"
        slots: list[tuple[int, int, str]] = []
        _slots(line, root, slots, fixed)
    except (_NoTemplate, IndexError):
        return None
    did, t = doc.get("did"), doc.get("time_us")
    node = top.get(b"did")
    if type(did) is str and node[0] == "tok" and node[2] - node[1] > 2:
        s, e = node[1] + 1, node[2] - 1
        if line[s:e].decode("ascii") != did:
            return None
        slots.append((s, e, "str"))
        did_rule = ("slot", s, e)
    else:
        did_rule = ("value", None if did is None else _json_text(did) if type(did) is not str
                    else did)
    node = top.get(b"time_us")
    if (type(t) is int and node[0] == "tok" and _INT_TOKEN.fullmatch(line, node[1], node[2])
            and node[2] - node[1] - (line[node[1]] == 0x2D) <= 18):
        negative = line[node[1]] == 0x2D
        s, e = node[1] + negative, node[2]
        if int(line[node[1]:e]) != t:
            return None
        slots.append((s, e, "int"))
        time_rule = ("slot", negative, s, e)
    else:
        ok = type(t) is int and INT64_MIN <= t <= INT64_MAX
        time_rule = ("value", t if ok else None)
    tpl = Template(line, slots, no_commit, coll, creates, did_rule, time_rule)
    if tpl.match(np.frombuffer(line, dtype=np.uint8).reshape(1, -1)) is not None:
        return None  # (cannot happen: a template matches its own line)
    return tpl


class TemplateStore:
    """The templates one process has learned (kept across files: the layouts recur)."""

    def __init__(self) -> None:
        self.by_len: dict[int, list[Template]] = {}
        self.has = np.zeros(TEMPLATE_MAX_LEN + 2, dtype=bool)
        self.count = 0
        self.failures: dict[int, int] = {}
        self.blocks = 0

    def add(self, tpl: Template) -> None:
        tpls = self.by_len.setdefault(tpl.length, [])
        if len(tpls) >= TEMPLATES_PER_LEN:
            tpls.sort(key=lambda t: -t.hits)
            tpls.pop()
            self.count -= 1
        tpls.append(tpl)
        self.count += 1
        self.has[tpl.length] = True

    def learn(self, missed: list[bytes]) -> None:
        """Learn templates from lines that took the full parse, where a layout recurs: two
        lines of the same length with their quotes at the same places. (From every block
        at first, then from every 8th: the layouts that matter are learned early.)"""
        self.blocks += 1
        if self.blocks > LEARN_EVERY_BLOCK and self.blocks % 8:
            return
        if self.count >= MAX_TEMPLATES or len(missed) < LEARN_MIN:
            return
        by_len: dict[int, list[bytes]] = {}
        for line in missed:
            by_len.setdefault(len(line), []).append(line)
        tries = 0
        failures = self.failures
        for n, same in by_len.items():
            if (len(same) < LEARN_MIN or n > TEMPLATE_MAX_LEN or failures.get(n, 0) >= LEARN_TRIES
                    or len(self.by_len.get(n, ())) >= TEMPLATES_PER_LEN):
                continue
            layouts: dict[tuple, list[bytes]] = {}
            for line in same[:8]:  # (enough to find two alike where one layout dominates)
                layouts.setdefault(tuple(map(len, line.split(b'"'))), []).append(line)
            pair = max(layouts.values(), key=len)
            tpl = derive_template(pair[0]) if len(pair) >= 2 else None
            if tpl is not None and tpl.match(np.frombuffer(pair[1], np.uint8)[None]) is None:
                self.add(tpl)
            else:
                failures[n] = failures.get(n, 0) + 1
            tries += 1
            if (tries >= (LEARN_FIRST_BLOCKS if self.blocks <= 4 else LEARN_PER_BLOCK)
                    or self.count >= MAX_TEMPLATES):
                return


_TEMPLATES = TemplateStore()


_D4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_D8 = np.uint64(0x00FF00FF00FF00FF)
_D16 = np.uint64(0x0000FFFF0000FFFF)


def _times(rows: np.ndarray, rule: tuple) -> np.ndarray:
    """The integers of a digit slot (at most 18 digits): right-aligned in 24 ASCII zeros,
    read 8 digits per uint64 (first digit in the lowest byte) by pairs, fours, eights."""
    _, negative, s, e = rule
    digits = np.full((len(rows), 24), 0x30, dtype=np.uint8)
    digits[:, 24 - (e - s):] = rows[:, s:e]
    x = digits.view(np.uint64)
    x = ((x & _D4) * np.uint64(2561)) >> np.uint64(8)
    x = ((x & _D8) * np.uint64(6553601)) >> np.uint64(16)
    x = ((x & _D16) * np.uint64(42949672960001)) >> np.uint64(32)
    t = ((x[:, 0] * np.uint64(10**16)) + (x[:, 1] * np.uint64(10**8)) + x[:, 2]).view(np.int64)
    return -t if negative else t


def _slot_dids(rows: np.ndarray, s: int, e: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Packed did:plc keys of the did slot ``[s, e)``: ``(hi, lo, ok)``; the other rows'
    dids are read as text by the caller."""
    if e - s == 32:
        return pack_did_rows(rows[:, s:e])
    return _EMPTY_U64, _EMPTY_U64, np.zeros(len(rows), dtype=bool)


def _texts(rows: np.ndarray, s: int, e: int, ok: np.ndarray) -> list[str]:
    rest = rows[~ok, s:e]
    data = rest.tobytes()
    w = e - s
    return [data[i:i + w].decode("ascii") for i in range(0, len(data), w)]


def _apply(tpl: Template, rows: np.ndarray, part: Partial) -> None:
    """Aggregate rows that follow ``tpl`` exactly as the line-by-line path would."""
    n = len(rows)
    tpl.hits += n
    part.documents += n
    if tpl.no_commit:
        part.state(None)[ALL] += n
        return
    st = part.state(tpl.coll)
    st[ALL] += n
    if not tpl.creates:
        return
    st[CREATES] += n
    hours = st[HOURS]
    did = tpl.did
    if hours is not None:
        rule = tpl.time
        t = None
        if rule[0] == "slot":
            t = _times(rows, rule)
            counts = np.bincount(t // HOUR_US % 24, minlength=24).tolist()
            for h in range(24):
                hours[h] += counts[h]
        elif rule[1] is not None:
            hours[rule[1] // HOUR_US % 24] += n
            t = np.full(n, rule[1], dtype=np.int64)
        else:
            hours[NO_HOUR] += n
        if t is not None and st[IS_POST]:  # timed post creates: Q4, Q5 (and Q2 through them)
            if did[0] == "slot":
                hi, lo, ok = _slot_dids(rows, did[1], did[2])
                part.post_packed.append((hi, lo, t[ok]))
                if not ok.all():
                    part.post_dids.extend(_texts(rows, did[1], did[2], ok))
                    part.post_times.extend(t[~ok].tolist())
            elif did[1] is None:
                part.posts._add_other(None, int(t.min()), int(t.max()))
            else:
                part.post_dids.extend((did[1], did[1]))
                part.post_times.extend((int(t.min()), int(t.max())))
            return
    if did[0] == "slot":
        hi, lo, ok = _slot_dids(rows, did[1], did[2])
        st[PACKED].append((hi, lo))
        if not ok.all():
            st[PENDING].extend(_texts(rows, did[1], did[2], ok))
    elif did[1] is not None:
        st[PENDING].append(did[1])


class _Blocks:
    """Routes the lines of raw blocks: lines whose length has a template wait, as rows of a
    uint8 matrix per length (gathered across blocks, so that each numpy pass covers many
    rows), for the template check; the others, and lines with a backslash anywhere, go to
    the full parse. No per-line Python object is made for a line a template takes."""

    def __init__(self, store: TemplateStore) -> None:
        self.store = store
        self.rows: dict[int, list[np.ndarray]] = {}  # waiting rows of each length
        self.count: dict[int, int] = {}
        self.bytes = 0
        self.newlines = np.empty(0, dtype=bool)

    def route(self, block, part: Partial, lo: int = 0, hi: int | None = None) -> list[bytes]:
        """Count the lines of ``block[lo:hi]`` (whole lines) into ``part.lines``, queue those
        a template may take, and return the others (for the full parse; a ``\\r`` before
        the newline removed). ``block``: bytes, or a memoryview from
        :func:`docbench.dataset.reader.iter_blocks` (its ``obj`` starts where it does)."""
        a = np.frombuffer(block, dtype=np.uint8)
        if hi is None:
            hi = len(a)
        a = a[lo:hi]
        size = len(a)
        if len(self.newlines) < size:
            self.newlines = np.empty(size, dtype=bool)
        newlines = self.newlines[:size]  # (reused: a fresh 4 MB array costs page faults)
        np.equal(a, 10, out=newlines)
        ends = np.flatnonzero(newlines)
        if size and a[-1] != 10:  # the file's last line, without a newline
            ends = np.append(ends, size)
        n = len(ends)
        part.lines += n
        starts = np.empty(n, dtype=np.intp)
        if n:
            starts[0] = 0
            starts[1:] = ends[:-1] + 1
        lens = ends - starts
        has = self.store.has[np.minimum(lens, TEMPLATE_MAX_LEN + 1)]
        src = block.obj if isinstance(block, memoryview) else block  # (for find, slices)
        i = src.find(b"\\", lo, hi)
        if i >= 0:  # a line with a backslash (an escape) always takes the full parse
            marks = [i]
            while (i := src.find(b"\\", i + 1, hi)) >= 0 and len(marks) < 4096:
                marks.append(i)
            marks = np.asarray(marks) - lo if i < 0 else np.flatnonzero(a == _BACKSLASH)
            has[np.searchsorted(ends, marks)] = False
        fast = np.flatnonzero(has)
        slow = np.flatnonzero(~has)
        # (slices of the buffer itself: one copy; a bytearray where blocks are memoryviews)
        lines = [src[s:e] for s, e in zip((starts[slow] + lo).tolist(),
                                           (ends[slow] + lo).tolist(), strict=True)]
        if src.find(b"\r", lo, hi) >= 0:  # (CRLF line ends: the reader drops the \r)
            lines = [line[:-1] if line[-1:] == b"\r" else line for line in lines]
        if not len(fast):
            return lines
        lengths = lens[fast]
        order = np.argsort(lengths, kind="stable")
        lengths = lengths[order]
        first = starts[fast[order]]
        cuts = np.flatnonzero(lengths[1:] != lengths[:-1]) + 1
        bounds = np.concatenate(([0], cuts, [len(order)])).tolist()
        for s, e in zip(bounds[:-1], bounds[1:], strict=True):
            length = int(lengths[s])
            # every window of `length` bytes (a view), of which the rows starting lines
            windows = np.ndarray((size - length + 1, length), np.uint8, a, 0, (1, 1))
            self.rows.setdefault(length, []).append(windows[first[s:e]])
            self._queued(length, e - s, part, lines)
        if self.bytes > PENDING_BYTES:
            lines.extend(self.drain(part))
        return lines

    def _queued(self, length: int, rows: int, part: Partial, lines: list[bytes]) -> None:
        count = self.count[length] = self.count.get(length, 0) + rows
        self.bytes += rows * length
        if count >= BATCH_ROWS:
            lines.extend(self.check(length, part))

    def check(self, n: int, part: Partial) -> list[bytes]:
        """Check the waiting rows of length ``n`` against its templates; return the rows no
        template takes, as lines."""
        count = self.count.pop(n)
        self.bytes -= count * n
        parts = self.rows.pop(n)
        allrows = parts[0] if len(parts) == 1 else np.concatenate(parts)
        tpls = self.store.by_len[n]
        if len(tpls) > 1:
            tpls.sort(key=lambda t: -t.hits)
        which = np.full(count, -1, dtype=np.int16)  # the template that takes each row
        step = max(1, CHUNK_BYTES // n)
        for i in range(0, count, step):
            rows = allrows[i:i + step]
            left = np.arange(i, i + len(rows))
            for k, tpl in enumerate(tpls):
                ok = tpl.match(rows)
                if ok is None:
                    which[left] = k
                    break
                if ok.any():
                    which[left[ok]] = k
                    rows, left = rows[~ok], left[~ok]
                    if not len(left):
                        break
        if (which == 0).all():
            _apply(tpls[0], allrows, part)
            return []
        for k, tpl in enumerate(tpls):
            taken = which == k
            if taken.any():
                _apply(tpl, allrows[taken], part)
        return [allrows[j].tobytes() for j in np.flatnonzero(which < 0).tolist()]

    def drain(self, part: Partial) -> list[bytes]:
        left: list[bytes] = []
        for n in list(self.count):
            left.extend(self.check(n, part))
        return left


# --------------------------------------------------------------------------------------------
# Scanning lines


def _plain_fields(parse, line) -> tuple | None:
    """``(collection, operation, kind, did, time_us)`` of a document of the usual layout --
    top-level keys exactly ``did``, ``time_us``, ``kind``, ``commit``; ``commit``'s exactly
    ``rev``, ``operation``, ``collection``, ``rkey``, ``record``, ``cid``; four strings and
    an integer -- read through simdjson's DOM parser, which validates the whole line
    (structure, UTF-8, escapes, numbers) as strictly as orjson but builds no object for the
    rest of it. ``None`` when the line needs the full parse (any other layout, any
    refusal): orjson and the fallbacks then decide, so the result is always theirs. As many
    entries as distinct keys found means no key is there twice (simdjson would keep the
    first of duplicate keys, orjson and json keep the last). The parser's values must not
    outlive the call (it is reused)."""
    try:
        doc = parse(line)
        commit = doc["commit"]
        fields = (commit["collection"], commit["operation"], doc["kind"], doc["did"],
                  doc["time_us"])
        if not (len(doc) == 4 and len(commit) == 6 and "rev" in commit and "rkey" in commit
                and "record" in commit and "cid" in commit):
            return None
    except Exception:  # noqa: BLE001 - whatever simdjson refuses, the full parse judges
        return None
    coll, op, kind, did, t = fields
    if (type(coll) is str and type(op) is str and type(kind) is str and type(did) is str
            and type(t) is int):
        return fields
    return None


def _simd_parse() -> Callable | None:
    """simdjson's ``Parser().parse`` for this process, None without simdjson."""
    global _SIMD
    if _SIMD is None:
        try:
            import simdjson
        except ImportError:
            _SIMD = False
        else:
            _SIMD = simdjson.Parser().parse
    return _SIMD or None


_SIMD: Callable | bool | None = None


def _scan_lines(lines: list, part: Partial) -> None:
    """The full parse, line by line, into ``part`` (all but ``part.lines``). The hot loop of
    the lines templates do not take: keep it lean. Long lines (posts, mostly) try
    :func:`_plain_fields` first. Otherwise subscripts first (the usual document has every
    field); the ``.get`` path handles the rest, where ``_INVALID`` and every non-object
    value lack ``.get``: the ``AttributeError`` branches are the type checks."""
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    fallback = parse_fallback
    text_of = _json_text
    new_state = _new_state
    hour_us = HOUR_US
    lo, hi = INT64_MIN, INT64_MAX
    colls = part.colls
    post_did = part.post_dids.append
    post_time = part.post_times.append
    posts_other = part.posts._add_other
    simd = _simd_parse()
    plain = _plain_fields
    simd_min = SIMD_MIN_BYTES if simd is not None else 1 << 62
    n_invalid = n_empty = no_commit = 0
    h_lo = h_hi = h_cur = 0  # the UTC hour [h_lo, h_hi) of the last time seen is h_cur
    for line in lines:
        fields = plain(simd, line) if len(line) >= simd_min and line[0] == 0x7B else None
        if fields is not None:
            coll, op, kind, did, t = fields
        else:
            try:
                doc = loads(line)
            except decode_error:
                if not line.strip(b" \t\r\n"):
                    n_empty += 1
                    continue
                doc = fallback(line)
            try:  # the common case: every field present, all objects where expected
                commit = doc["commit"]
                coll = commit["collection"]
                op = commit["operation"]
                kind = doc["kind"]
            except (KeyError, TypeError):
                try:
                    commit = doc.get("commit")
                except AttributeError:  # not an object (array, string, number, ...)/invalid
                    n_invalid += 1
                    continue
                try:
                    coll = commit.get("collection")
                    op = commit.get("operation")
                except AttributeError:  # no commit, or commit not an object
                    no_commit += 1
                    continue
                kind = doc.get("kind")
            did = doc.get("did")
            t = doc.get("time_us")
            if type(coll) is not str and coll is not None:
                coll = text_of(coll)
            if type(did) is not str and did is not None:
                did = text_of(did)
        st = colls.get(coll)
        if st is None:
            st = colls[coll] = new_state(coll)
        st[0] += 1
        if op != "create" or kind != "commit":
            continue
        st[1] += 1
        hours = st[3]
        if hours is not None:
            if type(t) is int and (h_lo <= t < h_hi or lo <= t <= hi):
                if not h_lo <= t < h_hi:  # a new hour (times mostly increase: rarely)
                    h_lo = t - t % hour_us
                    h_hi = min(h_lo + hour_us, hi + 1)
                    h_cur = t // hour_us % 24
                hours[h_cur] += 1
                if st[4]:  # a timed post create: Q4, Q5 (and Q2 through them)
                    if did is not None:
                        post_did(did)
                        post_time(t)
                    else:
                        posts_other(None, t, t)
                    continue
            else:
                hours[NO_HOUR] += 1
        if did is not None:
            st[2].append(did)
    if no_commit:
        part.state(None)[ALL] += no_commit
    part.invalid += n_invalid
    part.empty += n_empty
    part.documents += len(lines) - n_invalid - n_empty


def scan_blocks(blocks: Iterable[bytes], part: Partial,
                progress: Callable[[int], None] | None = None, fast: bool = True) -> Partial:
    """Aggregate the lines of raw blocks (see :func:`docbench.dataset.reader.iter_blocks`)
    into ``part``: each line through a template (see above) when one takes it, else through
    the full parse. Exact either way; ``fast=False`` parses every line (for tests).
    ``progress``, if given, is called with the number of lines of each block."""
    router = _Blocks(_TEMPLATES) if fast else None
    for block in blocks:
        before = part.lines
        if router is None:
            block = bytes(block)
            lines = block.split(b"\n")
            if block.endswith(b"\n"):
                lines.pop()
            lines = [line[:-1] if line[-1:] == b"\r" else line for line in lines]
            part.lines += len(lines)
            _scan_lines(lines, part)
        else:
            cuts = [0, len(block)]
            if _TEMPLATES.count < 8 and len(block) > 2 * SAMPLE_BYTES:
                # few templates yet: learn from the start of the block before routing the rest
                src = block.obj if isinstance(block, memoryview) else block
                cuts.insert(1, src.find(b"\n", SAMPLE_BYTES, len(block)) + 1)
            for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
                if lo < hi:
                    missed = router.route(block, part, lo, hi)
                    _scan_lines(missed, part)
                    _TEMPLATES.learn(missed)
        if progress is not None:
            progress(part.lines - before)
        if part.pending() >= FLUSH_AT:
            part.flush()
    if router is not None:
        _scan_lines(router.drain(part), part)
    part.flush()
    return part


def scan_batches(batches: Iterable[list[bytes]], part: Partial,
                 progress: Callable[[int], None] | None = None, fast: bool = True) -> Partial:
    """:func:`scan_blocks` for lists of lines (as :func:`docbench.dataset.reader.
    iter_line_batches` yields them)."""
    blocks = (b"\n".join(lines) + b"\n" for lines in batches if lines)
    return scan_blocks(blocks, part, progress, fast)


# --------------------------------------------------------------------------------------------
# One partial per file: computed in parallel, cached, merged

PARTIALS_DIR = ".oracle-partials"  # in the directory answers.json goes to (cache_dir_for)
PARTIAL_FORMAT = 1
SPLIT_MIN_BYTES = 16 << 20  # uncompressed files larger than this may be split among jobs
_VERSION: str | None = None


def oracle_version() -> str:
    """A digest of this module's source: partials that another version computed are not
    reused (any change to the oracle might change them)."""
    global _VERSION
    if _VERSION is None:
        _VERSION = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    return _VERSION


@dataclass
class ComputeLog:
    """What a computation did, file by file (for the CLI's summary and for tests)."""

    scanned: list[str] = field(default_factory=list)  # files whose lines were read
    reused: list[str] = field(default_factory=list)  # files whose cached partial was used
    hashed: list[str] = field(default_factory=list)  # files hashed apart from a scan
    scanned_documents: int = 0
    worker_peaks: list[int] = field(default_factory=list)  # peak RSS of each worker (bytes)
    worker_cpu: list[float] = field(default_factory=list)  # CPU seconds of each worker
    helpers: str = "worker"  # what the workers are, for the summary


class PartialCache:
    """The per-file partials of one dataset: ``<dir>/<data file name>.npz``. A partial is
    valid while its file has the recorded name and sha256 and this module's version; a file
    with the recorded size and mtime is not hashed again. Written atomically; never where
    docbench may not write (see :func:`directory_writable`)."""

    def __init__(self, directory: Path, writable: bool) -> None:
        self.dir = Path(directory)
        self.writable = writable

    @classmethod
    def for_dataset(cls, data_dir: Path) -> PartialCache:
        data_dir = Path(data_dir).resolve()
        base = cache_dir_for(data_dir)
        if base != data_dir:  # docbench's own cache: ours to create
            with contextlib.suppress(OSError):
                base.mkdir(parents=True, exist_ok=True)
        directory = base / PARTIALS_DIR
        writable = directory_writable(directory) if directory.is_dir() else (
            directory_writable(base))
        return cls(directory, writable)

    def path(self, name: str) -> Path:
        return self.dir / f"{name}.npz"

    def _open(self, name: str):
        """``(meta, arrays)`` of a stored partial, or None."""
        try:
            arrays = np.load(self.path(name), allow_pickle=False)
        except (OSError, ValueError):
            return None
        try:
            meta = json.loads(bytes(arrays["meta"]))
        except (KeyError, OSError, ValueError):
            arrays.close()
            return None
        if (not isinstance(meta, dict) or meta.get("format") != PARTIAL_FORMAT
                or meta.get("oracle") != oracle_version() or meta.get("name") != name):
            arrays.close()
            return None
        return meta, arrays

    def recorded_sha(self, path: Path, key: tuple) -> str | None:
        """The sha256 recorded for this file if its size and mtime are still those."""
        opened = self._open(path.name)
        if opened is None:
            return None
        meta, arrays = opened
        arrays.close()
        if (meta.get("size"), meta.get("mtime_ns")) == key[1:]:
            return meta.get("sha256")
        return None

    def load(self, path: Path, key: tuple, log: ComputeLog) -> tuple[Partial, str] | None:
        opened = self._open(path.name)
        if opened is None:
            return None
        meta, arrays = opened
        with arrays:
            if meta.get("size") != key[1] or not isinstance(meta.get("sha256"), str):
                return None
            sha = meta["sha256"]
            if meta.get("mtime_ns") != key[2]:  # touched or copied: is it the same content?
                log.hashed.append(path.name)
                if file_sha256(path) != sha:
                    return None
            try:
                part = Partial.from_arrays(meta, arrays)
            except (KeyError, TypeError, ValueError, OSError):
                return None
        remember_sha256(path, sha, key)
        if meta.get("mtime_ns") != key[2]:
            self.save(path, key, sha, part)  # record the new mtime: no hashing next time
        return part, sha

    def save(self, path: Path, key: tuple, sha: str, part: Partial) -> None:
        if not self.writable:
            return
        meta = {"format": PARTIAL_FORMAT, "oracle": oracle_version(), "name": path.name,
                "sha256": sha, "size": key[1], "mtime_ns": key[2]}
        target = self.path(path.name)
        tmp = self.dir / f".{path.name}.{os.getpid()}.tmp.npz"
        try:
            self.dir.mkdir(exist_ok=True)
            with open(tmp, "wb") as fh:
                np.savez(fh, **part.to_arrays(meta))
            os.replace(tmp, target)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def prune(self, names: set[str]) -> None:
        """Remove the partials of files that are no longer in the dataset."""
        if not self.writable or not self.dir.is_dir():
            return
        for p in self.dir.glob("*.npz"):
            if not p.name.startswith(".") and p.name[:-4] not in names:
                with contextlib.suppress(OSError):
                    p.unlink()


Task = tuple  # ("scan", path, start, end, hash it) or ("hash", path)


def _plan_tasks(files: list[Path], jobs: int, need_sha: set[str] | None = None) -> list[Task]:
    """Whole files (hashed as they are read when their sha256 is not known yet), except big
    uncompressed files that are cut into byte ranges to keep ``jobs`` processes busy; such a
    file is hashed by a task of its own if need be."""
    if need_sha is None:
        need_sha = {p.name for p in files}
    sizes = {p: os.path.getsize(p) for p in files}
    total = sum(sizes.values())
    piece = max(SPLIT_MIN_BYTES, total // max(1, jobs * 4))
    tasks: list[tuple[int, Task]] = []
    for p in files:
        size = sizes[p]
        if jobs > 1 and size > piece and compression_of(p) == "none":
            ranges = split_ranges(p, -(-size // piece))
            tasks.extend((b - a, ("scan", str(p), a, b, False)) for a, b in ranges)
            if p.name in need_sha:
                tasks.append((size // 8, ("hash", str(p))))  # (hashing is ~8x faster)
        else:
            tasks.append((size, ("scan", str(p), 0, None, p.name in need_sha)))
    tasks.sort(key=lambda t: -t[0])  # biggest first, for better balance
    return [t for _, t in tasks]


def _run_task(task: Task, progress: Callable[[int], None] | None = None) -> tuple:
    """``("sha", path, sha)`` or ``("part", path, partial, sha or None)``."""
    if task[0] == "hash":
        return ("sha", task[1], file_sha256(Path(task[1])))
    _, path_s, start, end, want_sha = task
    path = Path(path_s)
    part = Partial()
    if start == 0 and end is None:
        digest = hashlib.sha256() if want_sha else None
        key = sha_cache_key(path)
        scan_blocks(iter_blocks(path, digest=digest, size=READ_BYTES), part, progress)
        sha = None
        if digest is not None:
            sha = digest.hexdigest()
            remember_sha256(path, sha, key)
        return ("part", path_s, part, sha)
    scan_blocks(iter_blocks(path, start=start, end=end, size=READ_BYTES), part, progress)
    return ("part", path_s, part, None)


def native_partial(result: native_scan.NativeResult) -> Partial:
    """The partial of a native scan: its aggregates, then the lines it handed back, through
    the Python scan (see :mod:`docbench.dataset.native_scan`)."""
    header = result.header
    part = Partial(lines=header["lines"], documents=header["documents"])
    for (coll, n_all, n_creates, hours, _, others), hi, lo in result.colls:
        st = part.state(coll)
        st[ALL], st[CREATES] = n_all, n_creates
        if st[HOURS] is not None:
            st[HOURS][:24] = hours  # (every time it took is an i64: none without an hour)
        if len(hi):
            st[DISTINCT].push_sorted((hi, lo))
        st[DISTINCT].other.update(others)
    if header["no_commit"]:
        part.state(None)[ALL] += header["no_commit"]
    if len(result.posts[0]):
        part.posts.runs.push_sorted(result.posts)
    for did, t0, t1 in header["post_others"]:
        part.posts._add_other(did, t0, t1)
    _scan_lines(result.handed_back, part)
    part.flush()
    return part


def _run_native_task(binary: Path, task: Task) -> tuple:
    """:func:`_run_task` through the native scanner, plus the scanner's peak RSS (bytes, or
    None); the Python scan when the file's compression is not one it reads or the scanner
    fails (which then names the problem)."""
    if task[0] == "hash":
        return _run_task(task), None
    _, path_s, start, end, want_sha = task
    path = Path(path_s)
    compression = compression_of(path)
    if compression not in native_scan.COMPRESSIONS:
        return _run_task(task), None
    key = sha_cache_key(path) if want_sha else None
    try:
        result = native_scan.scan_file(binary, path, compression, POST, start=start, end=end,
                                       want_sha=want_sha)
    except native_scan.NativeScanError:
        return _run_task(task), None
    sha = result.header["sha256"]
    if sha is not None:
        remember_sha256(path, sha, key)
    return ("part", path_s, native_partial(result), sha), result.header.get("peak_rss")


def _execute_native(binary: Path, tasks: list[Task], jobs: int,
                    on_result: Callable[[tuple], None],
                    progress: Callable[[int], None] | None, log: ComputeLog) -> None:
    """:func:`_execute` with native scanners: ``jobs`` of them at once, each started and
    awaited by a thread of this process (the waits release the GIL); results are merged
    here as they come. At most ``jobs`` tasks are in flight, so that no more than that
    many unmerged partials are ever held."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    cpu0 = native_scan.children_cpu()
    queue = deque(tasks)
    peaks: list[int] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="oracle-scan") as pool:
        running = set()
        try:
            while queue or running:
                while queue and len(running) < max(1, jobs):
                    running.add(pool.submit(_run_native_task, binary, queue.popleft()))
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    result, peak = future.result()
                    if peak:
                        peaks.append(peak)
                    if progress is not None and result[0] == "part":
                        progress(result[2].lines)
                    on_result(result)
        finally:
            queue.clear()
    log.helpers = "native scanners (largest; CPU of all)"
    log.worker_peaks.append(max(peaks, default=0))
    log.worker_cpu.append(native_scan.children_cpu() - cpu0)


def _worker(conn) -> None:
    """A worker process: runs the tasks it is sent until it is sent None."""
    try:
        while True:
            msg = conn.recv()
            if msg is None:
                break
            try:
                result = _run_task(msg)
            except BaseException as error:  # raised again in the parent
                try:
                    conn.send(("error", error))
                except Exception:
                    conn.send(("error", RuntimeError(repr(error))))
                return
            conn.send(("done", result))
        conn.send(("peak", (peak_rss(os.getpid()) or 0, time.process_time())))
    except (EOFError, OSError, KeyboardInterrupt):
        pass
    finally:
        conn.close()


def worker_main() -> None:
    """Entry point of a worker process: ``python -c ... FD`` (see ``_start_worker``)."""
    import sys
    from multiprocessing.connection import Connection

    _worker(Connection(int(sys.argv[1])))


def _start_worker():
    """A fresh interpreter that imports only this module (not the caller's ``__main__``, as
    multiprocessing's spawn would: the CLI's imports), on one end of a socket pair. Fork is
    never used: the caller may have threads (database engines, progress bars), and a forked
    child can inherit a lock one of them holds and hang forever."""
    import subprocess
    import sys
    from multiprocessing import Pipe

    mine, theirs = Pipe()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    code = "from docbench.dataset.oracle import worker_main; worker_main()"
    proc = subprocess.Popen([sys.executable, "-c", code, str(theirs.fileno())],
                            pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL)
    theirs.close()
    return proc, mine


def _execute(tasks: list[Task], jobs: int, on_result: Callable[[tuple], None],
             progress: Callable[[int], None] | None, log: ComputeLog) -> None:
    """Run the tasks in this process and in ``jobs - 1`` worker processes; ``on_result``
    gets each task's result (in this process, in completion order). This process takes
    tasks too (no worker to wait for at the start; the workers take over as they come up).
    With the native scanner, its processes do the scanning instead (:func:`_execute_native`)."""
    binary = native_scan.find_scanner()
    if binary is not None:
        _execute_native(binary, tasks, jobs, on_result, progress, log)
        return
    n_workers = min(jobs, len(tasks)) - 1
    if n_workers <= 0:
        for task in tasks:
            on_result(_run_task(task, progress))
        return
    from multiprocessing.connection import wait

    queue = deque(tasks)
    workers: list[list] = []  # [process, connection, busy]

    def feed(w: list) -> None:
        if queue:
            w[1].send(queue.popleft())
            w[2] = True
        else:
            w[1].send(None)
            w[2] = False

    def receive(w: list) -> None:
        try:
            kind, payload = w[1].recv()
        except (EOFError, OSError):
            raise RuntimeError("an oracle worker process died") from None
        if kind == "error":
            raise payload
        if kind == "peak":
            log.worker_peaks.append(payload[0])
            log.worker_cpu.append(payload[1])
            return
        result = payload
        if progress is not None:
            progress(result[2].lines if result[0] == "part" else 0)
        on_result(result)
        feed(w)

    def service(lines: int = 0) -> None:
        if progress is not None and lines:
            progress(lines)
        for w in workers:
            while w[2] and w[1].poll():
                receive(w)

    try:
        for _ in range(n_workers):
            proc, conn = _start_worker()
            w = [proc, conn, False]
            workers.append(w)
            feed(w)
        while queue:
            on_result(_run_task(queue.popleft(), service))
            service()
        while any(w[2] for w in workers):
            busy = [w for w in workers if w[2]]
            ready = wait([w[1] for w in busy])  # (a worker that dies closes its end: EOF)
            for w in busy:
                if w[1] in ready:
                    receive(w)
        for w in workers:  # each sends its peak memory before it exits
            with contextlib.suppress(EOFError, OSError):
                if w[1].poll(5):
                    receive(w)
    finally:
        for w in workers:
            with contextlib.suppress(OSError):
                w[1].close()
            try:
                w[0].wait(timeout=5)
            except Exception:
                w[0].kill()
                w[0].wait()


def compute_answers(files: list[Path], jobs: int = 1,
                    progress: Callable[[int], None] | None = None, *,
                    cache: PartialCache | None = None, refresh: bool = False,
                    log: ComputeLog | None = None) -> dict:
    """The canonical answer document for these data files (see the module docstring).

    One partial aggregate per file, merged. With a ``cache``, a file whose partial is cached
    (same name and sha256) is not read again, and the partials computed are stored there;
    ``refresh`` ignores the cached partials (a sha256 recorded for a file of the same size
    and mtime is still believed). ``jobs`` > 1 computes in that many processes (this one and
    spawned workers), whole files, or byte ranges of big uncompressed files when there are
    few files. ``progress``, if given, is called with numbers of lines processed. ``log``
    records which files were scanned, reused, hashed.
    """
    started = time.perf_counter()
    files = [Path(f) for f in files]
    names = [f.name for f in files]
    if len(set(names)) != len(names):
        raise ValueError("data files must have distinct names")
    log = log if log is not None else ComputeLog()
    keys = {f.name: sha_cache_key(f) for f in files}  # (path, size, mtime_ns) before reading
    total = Partial()
    shas: dict[str, str] = {}
    todo: list[Path] = []
    for f in files:
        hit = None if cache is None or refresh else cache.load(f, keys[f.name], log)
        if hit is None:
            todo.append(f)
        else:
            part, shas[f.name] = hit
            log.reused.append(f.name)
            total.merge(part)
    if todo:
        for f in todo:
            # An unreadable file is named here, by this process, before any worker starts
            # (a worker's failure would name its own executable, not the file).
            with open(f, "rb"):
                pass
        for f in todo:
            sha = known_sha256(f, keys[f.name])
            if sha is None and cache is not None:
                sha = cache.recorded_sha(f, keys[f.name])
            if sha is not None:
                shas[f.name] = sha
        by_path = {str(f): f for f in todo}
        tasks = _plan_tasks(todo, jobs, {f.name for f in todo if f.name not in shas})
        pieces_left = Counter(t[1] for t in tasks if t[0] == "scan")
        pieces: dict[str, Partial] = {}

        def file_done(f: Path) -> None:
            part = pieces.pop(f.name)
            if cache is not None:
                cache.save(f, keys[f.name], shas[f.name], part)
            log.scanned.append(f.name)
            log.scanned_documents += part.documents
            total.merge(part)

        def on_result(result: tuple) -> None:
            f = by_path[result[1]]
            if result[0] == "sha":
                log.hashed.append(f.name)
                shas[f.name] = result[2]
                remember_sha256(f, result[2], keys[f.name])
            else:
                part = result[2]
                if result[3] is not None:
                    shas[f.name] = result[3]
                    remember_sha256(f, result[3], keys[f.name])
                if f.name in pieces:
                    pieces[f.name].merge(part)
                else:
                    pieces[f.name] = part
                pieces_left[result[1]] -= 1
            if not pieces_left[result[1]] and f.name in shas and f.name in pieces:
                file_done(f)

        _execute(tasks, jobs, on_result, progress, log)
    if cache is not None:
        cache.prune(set(names))
    file_entries = [
        {"name": f.name, "sha256": shas[f.name], "size": keys[f.name][1],
         "mtime_ns": keys[f.name][2]}
        for f in files
    ]
    doc = finalize(total, file_entries)
    doc["compute_seconds"] = round(time.perf_counter() - started, 3)
    return doc


# --------------------------------------------------------------------------------------------
# From aggregates to the canonical answer document


def _key_sort(value) -> tuple:
    """Sort key putting ``None`` before every string."""
    return (value is not None, value if value is not None else "")


def _top(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], others: dict,
         descending: bool) -> tuple[list[list], dict | None]:
    """The top rows of (did, value) by value, ties by did; plus the tie information.

    ``parts`` are (hi, lo, values) arrays of packed dids (one per bucket); ``others`` the dids
    kept as strings (or None) with their values."""
    if not others and not any(len(p[2]) for p in parts):
        return [], None
    want = TOP_N + NEXT_ROWS
    cand: list[tuple[int, object]] = [(v, d) for d, v in others.items()]
    for hi, lo, values in parts:
        n = len(values)
        if not n:
            continue
        k = min(want, n)
        if descending:
            best = np.argpartition(values, n - k)[n - k:]
            threshold = values[best].min()
        else:
            best = np.argpartition(values, k - 1)[:k]
            threshold = values[best].max()
        # everything in this part that ranks up to its k-th value, with all ties of that value
        for i in np.union1d(best, np.flatnonzero(values == threshold)).tolist():
            cand.append((int(values[i]), decode_did(hi[i], lo[i])))
    sign = -1 if descending else 1
    cand.sort(key=lambda c: (sign * c[0], _key_sort(c[1])))
    ranked = cand[:want]
    rows = [[d, v] for v, d in ranked[:TOP_N]]
    boundary = rows[-1][1]
    tied = [d for d, v in others.items() if v == boundary]
    count = len(tied)
    for hi, lo, values in parts:
        idx = np.flatnonzero(values == boundary)
        count += len(idx)
        tied.extend(decode_did(hi[i], lo[i]) for i in idx[: MAX_TIED_DIDS * 4].tolist())
    tied.sort(key=_key_sort)
    ties = {
        "value": boundary,
        "count": count,
        "dids": tied[:MAX_TIED_DIDS],
        "next": [[d, v] for v, d in ranked[TOP_N:]],
    }
    return rows, ties


def _post_distinct(part: Partial, untimed: DistinctDids) -> int:
    """Distinct dids of post creates: those with a time (in ``part.posts``) and without."""
    timed = part.posts.runs
    count = sum(len(p[0]) for p in timed.parts())  # (compacts every bucket)
    untimed.parts()
    for k, runs in enumerate(untimed.buckets):
        if not runs:
            continue
        mine, theirs = runs[0], timed.buckets[k]
        if not theirs:
            count += len(mine[0])
        else:  # packed dids without a time that are not among those with one
            hi, _ = _sorted_unique(np.concatenate((theirs[0][0], mine[0])),
                                   np.concatenate((theirs[0][1], mine[1])))
            count += len(hi) - len(theirs[0][0])
    others = {d for d in part.posts.mins if d is not None} | untimed.other
    return count + len(others)


def finalize(part: Partial, files: list[dict]) -> dict:
    """The canonical answer document from merged aggregates."""
    part.flush()
    colls = part.colls
    q1 = sorted(([k, st[ALL]] for k, st in colls.items() if st[ALL]),
                key=lambda r: (-r[1], _key_sort(r[0])))
    q2 = []
    for k, st in colls.items():
        if st[CREATES]:
            distinct = _post_distinct(part, st[DISTINCT]) if st[IS_POST] else len(st[DISTINCT])
            q2.append([k, st[CREATES], distinct])
    q2.sort(key=lambda r: (-r[1], _key_sort(r[0])))
    q3 = []
    for coll, st in colls.items():
        for h, v in enumerate(st[HOURS] or ()):
            if v:
                q3.append([coll, None if h == NO_HOUR else h, v])
    q3.sort(key=lambda r: (NO_HOUR if r[1] is None else r[1], r[0]))
    posts = part.posts
    parts = posts.runs.parts()
    q4, q4_ties = _top([(hi, lo, mn) for hi, lo, mn, _ in parts], posts.mins, descending=False)
    # spans as uint64: exact even for times at both ends of the int64 range
    q5, q5_ties = _top([(hi, lo, mx.view(np.uint64) - mn.view(np.uint64))
                        for hi, lo, mn, mx in parts],
                       {d: posts.maxs[d] - t for d, t in posts.mins.items()}, descending=True)
    return {
        "format": FORMAT,
        "files": files,
        "documents": part.documents,
        "invalid_lines": part.invalid,
        "empty_lines": part.empty,
        "q1": q1,
        "q2": q2,
        "q3": q3,
        "q4": q4,
        "q5": q5,
        "q4_ties": q4_ties,
        "q5_ties": q5_ties,
    }



# --------------------------------------------------------------------------------------------
# Caching (next to the data when docbench generated it, else under docbench's home)


_MEMO: dict[tuple, dict] = {}


def _files_key(files: list[Path]) -> tuple:
    return tuple((f.name, file_sha256(f)) for f in files)


def _known_files_key(files: list[Path]) -> tuple | None:
    """``_files_key`` when every file's sha256 is known without reading it, else None."""
    key = []
    for f in files:
        sha = known_sha256(f)
        if sha is None:
            return None
        key.append((f.name, sha))
    return tuple(key)


def _doc_key(doc: dict) -> tuple:
    return tuple((f["name"], f["sha256"]) for f in doc.get("files", []))


def dumps_answers(doc: dict) -> str:
    """answers.json text: one top-level key per line, one row per line; ASCII-only (lone
    surrogates from the data survive as escapes)."""

    def enc(value) -> str:
        return json.dumps(value, ensure_ascii=True, separators=(", ", ": "))

    parts = []
    for key, value in doc.items():
        if isinstance(value, list) and value and isinstance(value[0], (list, dict)):
            inner = ",\n    ".join(enc(v) for v in value)
            parts.append(f"  {enc(key)}: [\n    {inner}\n  ]")
        else:
            parts.append(f"  {enc(key)}: {enc(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def answers_cache_path(data_dir: Path) -> Path:
    """Where the answers of a dataset directory are cached: ``answers.json`` in the directory
    when docbench generated it (its ``dataset.json`` is there), else in docbench's own cache,
    so that ``docbench run --data DIR`` never writes into a directory it does not own. The
    per-file partials go to the same place (``.oracle-partials/``)."""
    return cache_dir_for(Path(data_dir)) / ANSWERS_NAME


def read_cached_answers(data_dir: Path) -> dict | None:
    path = answers_cache_path(data_dir)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return None
    return doc


def _remember_recorded(doc: dict, files: list[Path]) -> None:
    """Believe the sha256 recorded for a file whose size and mtime are still those."""
    entries = doc.get("files")
    if not isinstance(entries, list):
        return
    by_name = {f.name: f for f in files}
    for entry in entries:
        f = by_name.get(entry.get("name")) if isinstance(entry, dict) else None
        if f is None or not isinstance(entry.get("sha256"), str):
            continue
        key = sha_cache_key(f)
        if (entry.get("size"), entry.get("mtime_ns")) == key[1:]:
            remember_sha256(f, entry["sha256"], key)


def _cache_valid(doc: dict, files: list[Path]) -> bool:
    entries = doc.get("files")
    if not isinstance(entries, list) or len(entries) != len(files):
        return False
    for entry, f in zip(entries, files, strict=True):
        if not isinstance(entry, dict) or entry.get("name") != f.name:
            return False
        if "size" in entry and entry["size"] != sha_cache_key(f)[1]:
            return False
    # unchanged files (same size and mtime as recorded) are not read again
    _remember_recorded(doc, files)
    return _doc_key(doc) == _files_key(files)


def directory_writable(path: Path) -> bool:
    """Writable for us AND not marked read-only: root could write into a ``r-x`` directory
    (such as a shared, read-only dataset), but docbench leaves it alone."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return bool(mode & 0o222) and os.access(path, os.W_OK)


def _write_atomic(path: Path, text: str) -> None:
    if not directory_writable(path.parent):
        raise PermissionError(13, "dataset directory is read-only", str(path.parent))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _store(data_dir: Path, doc: dict) -> None:
    """Cache the answers if we may; a read-only place keeps them in memory only."""
    path = answers_cache_path(data_dir)
    with contextlib.suppress(OSError):  # (includes PermissionError from _write_atomic)
        if path.parent != Path(data_dir).resolve():  # docbench's cache: ours to create
            path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, dumps_answers(doc))


def _load_or_compute(data_dir: Path, jobs: int = 1, refresh: bool = False,
                     progress: Callable[[int], None] | None = None,
                     log: ComputeLog | None = None) -> tuple[dict, str]:
    """(answers, source) with source ``"answers.json"``, ``"memory"`` or ``"computed"``."""
    data_dir = Path(data_dir)
    files = dataset_files(data_dir)
    single = data_dir.is_file()
    cached = None if single else read_cached_answers(data_dir)
    if not refresh:
        if cached is not None and _cache_valid(cached, files):
            return cached, ANSWERS_NAME
        # (answers computed in this process: their files' sha256 are known, nothing is read)
        memo = _MEMO.get(_known_files_key(files)) if _MEMO else None
        if memo is not None:
            # the files were just hashed as they are now: record their current mtimes
            memo = dict(memo)
            memo["files"] = [dict(entry, size=key[1], mtime_ns=key[2]) for entry, key in
                             zip(memo["files"], map(sha_cache_key, files), strict=True)]
            _MEMO[_doc_key(memo)] = memo
            if not single:  # answers.json is missing or stale: put it back if we may
                _store(data_dir, memo)
            return memo, "memory"
    elif cached is not None:
        _remember_recorded(cached, files)
    cache = None if single else PartialCache.for_dataset(data_dir)
    doc = compute_answers(files, jobs=jobs, progress=progress, cache=cache, refresh=refresh,
                          log=log)
    _MEMO[_doc_key(doc)] = doc
    if not single:
        _store(data_dir, doc)
    return doc, "computed"


def load_or_compute_answers(data_dir: Path, jobs: int = 1) -> dict:
    """The answers for a dataset directory (or single file), from ``answers.json`` (see
    :func:`answers_cache_path`) when its files' names and sha256 match the data, else computed
    from the per-file partials (only files without a valid cached partial are read) and
    cached there (atomically; in memory only when that place is not writable or a single
    file was given)."""
    return _load_or_compute(data_dir, jobs=jobs)[0]


def write_answers(data_dir: Path, jobs: int = 1) -> Path:
    """Compute the answers and write ``answers.json`` into the dataset directory (an explicit
    request, as ``docbench generate`` makes for the datasets it writes); files whose cached
    partial is still valid are not read again."""
    data_dir = Path(data_dir)
    if data_dir.is_file():
        raise ValueError("write_answers needs a dataset directory, not a file")
    doc = compute_answers(dataset_files(data_dir), jobs=jobs,
                          cache=PartialCache.for_dataset(data_dir))
    _MEMO[_doc_key(doc)] = doc
    path = data_dir / ANSWERS_NAME
    _write_atomic(path, dumps_answers(doc))
    return path


# --------------------------------------------------------------------------------------------
# CLI


def format_time_us(value: int | None) -> str:
    if value is None:
        return "-"
    from datetime import UTC, datetime, timedelta

    try:
        dt = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=value)
    except OverflowError:
        return str(value)
    return dt.strftime("%Y-%m-%d %H:%M:%S.%fZ")


def print_answers(doc: dict, console=None) -> None:
    """The five answers as rich tables."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from docbench.answers import QUERY_TITLES

    console = console or Console()

    def label(value) -> str:
        if value is None:
            return "(null)"
        # lone surrogates (valid JSON escapes) cannot be printed as they are
        return str(value).encode("utf-8", "backslashreplace").decode("utf-8")

    def table(q: int, columns: list[tuple[str, str]], rows: list[list[str]]) -> None:
        console.print(f"[bold]Q{q}[/bold]  {QUERY_TITLES[q]}")
        t = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
        for name, justify in columns:
            t.add_column(name, justify=justify, no_wrap=True)
        for row in rows:
            t.add_row(*(Text(cell) for cell in row))  # data, not markup
        if not rows:
            t.add_row(*(["(no rows)"] + [""] * (len(columns) - 1)))
        console.print(t)
        console.print()

    table(1, [("collection", "left"), ("count", "right")],
          [[label(c), f"{n:,}"] for c, n in doc["q1"]])
    table(2, [("collection", "left"), ("count", "right"), ("distinct dids", "right")],
          [[label(c), f"{n:,}", f"{d:,}"] for c, n, d in doc["q2"]])
    table(3, [("collection", "left"), ("hour (UTC)", "right"), ("count", "right")],
          [[label(c), label(h), f"{n:,}"] for c, h, n in doc["q3"]])
    table(4, [("did", "left"), ("first post (UTC)", "left"), ("time_us", "right")],
          [[label(d), format_time_us(t), str(t)] for d, t in doc["q4"]])
    table(5, [("did", "left"), ("span (ms)", "right"), ("span_us", "right")],
          [[label(d), f"{s / 1000:,.3f}", str(s)] for d, s in doc["q5"]])
    for q in (4, 5):
        ties = doc.get(f"q{q}_ties")
        if ties and ties["count"] > 1:
            console.print(Text(f"Q{q}: {ties['count']:,} dids share the value of the last row "
                               f"({ties['value']}); any of them is a valid answer there."))


def answers_command(data_dir: Path, jobs: int = 1, refresh: bool = False) -> None:
    """``docbench answers DIR``: compute (or read the cached) answers and print them, with
    how they were obtained (files scanned or reused, documents/s, peak memory)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console()
    data_dir = Path(data_dir)
    files = dataset_files(data_dir)
    if not files:
        console.print(f"[red]no data files (*.json, *.jsonl, *.ndjson[.gz|.zst|.lz4]) in "
                      f"{data_dir}[/red]")
        raise SystemExit(1)
    log = ComputeLog()
    started = time.perf_counter()
    cpu_started = time.process_time()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"),
                  TextColumn("{task.completed:,.0f} lines"), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task(f"answers for {len(files)} file(s)", total=None)
        try:
            doc, source = _load_or_compute(data_dir, jobs=jobs, refresh=refresh,
                                           progress=lambda n: bar.advance(task, n), log=log)
        except OSError as error:  # an unreadable file: say which, not a traceback
            bar.stop()
            console.print(read_error_message(error), style="red", markup=False)
            raise SystemExit(1) from None
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    print_answers(doc, console)
    console.print(
        f"files {len(doc['files'])}, documents {doc['documents']:,}, "
        f"invalid lines {doc['invalid_lines']:,}, empty lines {doc['empty_lines']:,}"
    )
    if source == "computed":
        scanned = log.scanned_documents
        rate = scanned / elapsed if elapsed > 0 else 0.0
        cache = answers_cache_path(data_dir)
        where = (f"written to {cache}" if not data_dir.is_file() and cache.exists()
                 else "kept in memory")
        reused = f", {len(log.reused)} from cached partials" if log.reused else ""
        console.print(f"computed in {elapsed:.2f} s: {len(log.scanned)} file(s) scanned"
                      f"{reused}; {scanned:,} documents scanned, {rate:,.0f} documents/s "
                      f"(jobs={jobs}); {where}")
        mib = 1 << 20
        helper = log.helpers
        peaks = "".join(f" + {helper} {p / mib:,.0f} MiB" for p in log.worker_peaks)
        cpus = "".join(f" + {helper} {c:.2f} s" for c in log.worker_cpu)
        console.print(f"peak RSS: this process {(peak_rss(os.getpid()) or 0) / mib:,.0f} MiB"
                      f"{peaks}; CPU: this process {cpu:.2f} s{cpus}")
    else:
        console.print(f"read from {source} in {elapsed:.2f} s (computed originally in "
                      f"{doc.get('compute_seconds', '?')} s); --refresh recomputes")
