"""The answer oracle: exact answers of Q1-Q5 for a directory of ndjson files, without a database.

Every line of every data file (see :mod:`docbench.dataset.reader`) is parsed with ``orjson``;
lines orjson refuses are tried again with the standard ``json`` module (strict UTF-8,
``NaN``/``Infinity`` refused), which accepts valid JSON that orjson does not (lone surrogate
escapes such as ``"\\ud83d"``, numbers beyond a double such as ``1e400``, integers beyond 64
bits where orjson refuses them, nesting deeper than orjson's 1024 levels — beyond Python's
recursion limit an iterative parser takes over).

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

The cache (``answers.json``, next to the data only when docbench generated the dataset --
see :func:`docbench.paths.cache_dir_for` -- else under docbench's home, so that a user's data
directory is never written) is valid while the data files' names and sha256 match ``files``;
a file whose size and mtime are those recorded is not hashed again.

Memory and speed. Memory grows with the distinct (collection, did) pairs of creates, never
with the document count: ``did:plc:`` ids are packed losslessly into 16 bytes and kept in
sorted numpy runs (see ``DistinctDids``), 32 bytes per posting did for Q4/Q5. Measured on
docbench-gen data: 1M documents 100 MB peak RSS, 10M 141 MB; about 375 MB of arrays are
expected at 1000M with docbench-gen's 8M-user population. One process parses roughly
300-370k documents per CPU-second; ``jobs`` processes files (or byte ranges of uncompressed
files) in parallel.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import orjson

from docbench.dataset.reader import (
    compression_of,
    dataset_files,
    file_sha256,
    iter_line_batches,
    read_error_message,
    remember_sha256,
    sha_cache_key,
    split_ranges,
)
from docbench.paths import cache_dir_for

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
SPLIT_MIN_BYTES = 16 << 20  # uncompressed files larger than this are split among jobs

_INVALID = object()  # has no .get(): scan_batches relies on it


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
FLUSH_AT = 200_000  # pending dids (Python strings) before they are packed into runs
_EMPTY_U64 = np.empty(0, dtype=np.uint64)
_EMPTY_IDX = np.empty(0, dtype=np.intp)


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
    if len(buf) == 33 * n - 1:  # the usual case: every did 32 bytes long
        rows = np.frombuffer(buf + b"\n", dtype=np.uint8).reshape(n, 33)
        if (rows[:, 32] == 10).all():
            m = rows
            cand = None
    if m is None:
        a = np.frombuffer(buf, dtype=np.uint8)
        nl = np.flatnonzero(a == 10)
        starts = np.concatenate(([0], nl + 1))
        ends = np.concatenate((nl, [len(a)]))
        cand = np.flatnonzero(ends - starts == 32)
        m = a[starts[cand][:, None] + np.arange(32)]
    prefix = np.ascontiguousarray(m[:, :8]).view(np.uint64).ravel()
    v = _LUT[m[:, 8:32]]
    ok = (prefix == _PREFIX64) & (v != 255).all(axis=1)
    if not ok.all():
        v = v[ok]
        cand = np.flatnonzero(ok) if cand is None else cand[ok]
    v = v.astype(np.uint64)
    hi = v[:, :12] @ _WEIGHTS
    lo = v[:, 12:] @ _WEIGHTS
    if cand is None:
        return hi, lo, np.arange(n, dtype=np.intp), []
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


def _sort_keys(hi: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, hi, lo)`` sorted by (hi, lo); fast when runs are already sorted (timsort)."""
    order = np.argsort(hi, kind="stable")
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


def _sorted_unique(hi: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    _, hi, lo = _sort_keys(hi, lo)
    starts = _group_starts(hi, lo)
    if len(starts) == len(hi):
        return hi, lo
    return hi[starts], lo[starts]


def _sorted_minmax(hi, lo, mn, mx) -> tuple[np.ndarray, ...]:
    order, hi, lo = _sort_keys(hi, lo)
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
        """All keys (and values) in one sorted array each (a copy: for tests and small sets)."""
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

    def update(self, other: FirstLast) -> None:
        self.runs.update(other.runs)
        for did, t0 in other.mins.items():
            self._add_other(did, t0, other.maxs[did])


# --------------------------------------------------------------------------------------------
# Partial aggregates (one per file or file range; merged)

# per collection: [all events, creates, pending dids (strings), hour counts or None, is post,
#                  DistinctDids]
ALL, CREATES, PENDING, HOURS, IS_POST, DISTINCT = range(6)


def _new_state(coll: str | None) -> list:
    return [0, 0, [], [0] * 25 if coll in Q3_COLLECTIONS else None, coll == POST,
            DistinctDids()]


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
    sha256: dict = field(default_factory=dict)  # file name -> sha256 (whole-file tasks)

    def pending(self) -> int:
        return len(self.post_dids) + sum(len(st[PENDING]) for st in self.colls.values())

    def flush(self) -> None:
        """Pack the pending dids into the compact sets."""
        for st in self.colls.values():
            if st[PENDING]:
                st[DISTINCT].add(st[PENDING])
                st[PENDING].clear()
        if self.post_dids:
            self.posts.add(self.post_dids, self.post_times)
            self.post_dids.clear()
            self.post_times.clear()

    def merge(self, other: Partial) -> None:
        self.flush()
        other.flush()
        self.lines += other.lines
        self.documents += other.documents
        self.invalid += other.invalid
        self.empty += other.empty
        for coll, theirs in other.colls.items():
            mine = self.colls.get(coll)
            if mine is None:
                mine = self.colls[coll] = _new_state(coll)
            mine[ALL] += theirs[ALL]
            mine[CREATES] += theirs[CREATES]
            mine[DISTINCT].update(theirs[DISTINCT])
            if theirs[HOURS] is not None:
                hours = mine[HOURS]
                for h, v in enumerate(theirs[HOURS]):
                    hours[h] += v
        self.posts.update(other.posts)
        self.sha256.update(other.sha256)

    def __getstate__(self) -> dict:  # pickled between processes: never with pending strings
        self.flush()
        return self.__dict__


def scan_batches(batches: Iterable[list[bytes]], part: Partial,
                 progress: Callable[[int], None] | None = None) -> Partial:
    """Aggregate lines into ``part``. The hot loop: keep it lean. Subscripts first (the usual
    document has every field); the ``.get`` path handles the rest, where ``_INVALID`` and every
    non-object value lack ``.get``: the ``AttributeError`` branches are the type checks."""
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
    n_lines = n_invalid = n_empty = no_commit = 0
    h_lo = h_hi = h_cur = 0  # the UTC hour [h_lo, h_hi) of the last time seen is h_cur
    for lines in batches:
        n_lines += len(lines)
        for line in lines:
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
            if type(coll) is not str and coll is not None:
                coll = text_of(coll)
            st = colls.get(coll)
            if st is None:
                st = colls[coll] = new_state(coll)
            st[0] += 1
            if op != "create" or kind != "commit":
                continue
            st[1] += 1
            did = doc.get("did")
            if type(did) is not str and did is not None:
                did = text_of(did)
            hours = st[3]
            if hours is not None:
                t = doc.get("time_us")
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
        if progress is not None:
            progress(len(lines))
        if n_lines >= FLUSH_AT and part.pending() >= FLUSH_AT:
            part.flush()
    part.flush()
    if no_commit:
        st = colls.get(None)
        if st is None:
            st = colls[None] = new_state(None)
        st[ALL] += no_commit
    part.lines += n_lines
    part.invalid += n_invalid
    part.empty += n_empty
    part.documents += n_lines - n_invalid - n_empty
    return part


def _scan_task(task: tuple[str, int, int | None]) -> Partial:
    """Worker: aggregate one file (hashing it) or one byte range of an uncompressed file."""
    import hashlib

    path_s, start, end = task
    path = Path(path_s)
    part = Partial()
    if start == 0 and end is None:
        digest = hashlib.sha256()
        key = sha_cache_key(path)
        scan_batches(iter_line_batches(path, digest=digest), part)
        part.sha256[path.name] = digest.hexdigest()
        remember_sha256(path, part.sha256[path.name], key)
    else:
        scan_batches(iter_line_batches(path, start=start, end=end), part)
    return part


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


def _plan_tasks(files: list[Path], jobs: int) -> list[tuple[str, int, int | None]]:
    """Whole files, except big uncompressed files that are cut into ranges to keep
    ``jobs`` processes busy."""
    sizes = {p: os.path.getsize(p) for p in files}
    total = sum(sizes.values())
    piece = max(SPLIT_MIN_BYTES, total // max(1, jobs * 4))
    tasks: list[tuple[str, int, int | None]] = []
    for p in files:
        size = sizes[p]
        if jobs > 1 and size > piece and compression_of(p) == "none":
            pieces = -(-size // piece)
            tasks.extend((str(p), a, b) for a, b in split_ranges(p, pieces))
        else:
            tasks.append((str(p), 0, None))
    # biggest first, for better balance
    tasks.sort(key=lambda t: -((t[2] - t[1]) if t[2] is not None else sizes[Path(t[0])]))
    return tasks


def compute_answers(files: list[Path], jobs: int = 1,
                    progress: Callable[[int], None] | None = None) -> dict:
    """The canonical answer document for these data files (see the module docstring).

    ``jobs`` > 1 processes files (and byte ranges of big uncompressed files) in a process
    pool and merges the partial aggregates. ``progress``, if given, is called with the number
    of lines processed since its previous call (per block with ``jobs=1``, per task
    otherwise).
    """
    import hashlib

    started = time.perf_counter()
    files = [Path(f) for f in files]
    names = [f.name for f in files]
    if len(set(names)) != len(names):
        raise ValueError("data files must have distinct names")
    stats = {f.name: sha_cache_key(f) for f in files}  # (path, size, mtime_ns) before reading
    total = Partial()
    if jobs <= 1 or not files:
        for path in files:
            digest = hashlib.sha256()
            key = sha_cache_key(path)
            scan_batches(iter_line_batches(path, digest=digest), total, progress)
            total.sha256[path.name] = digest.hexdigest()
            remember_sha256(path, total.sha256[path.name], key)
    else:
        import multiprocessing

        tasks = _plan_tasks(files, jobs)
        split = sorted({Path(t[0]) for t in tasks if t[2] is not None})
        # spawn, never fork: the caller may have threads (database engines, progress bars),
        # and a forked child can inherit a lock one of them holds and hang forever.
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(min(jobs, len(tasks))) as pool:
            results = pool.imap_unordered(_scan_task, tasks)
            for path in split:  # hash the split files here while the workers scan
                total.sha256[path.name] = file_sha256(path)
            for part in results:
                if progress is not None:
                    progress(part.lines)
                total.merge(part)
    file_entries = [
        {"name": f.name, "sha256": total.sha256[f.name], "size": stats[f.name][1],
         "mtime_ns": stats[f.name][2]}
        for f in files
    ]
    doc = finalize(total, file_entries)
    doc["compute_seconds"] = round(time.perf_counter() - started, 3)
    return doc


# --------------------------------------------------------------------------------------------
# Caching (next to the data when docbench generated it, else under docbench's home)


_MEMO: dict[tuple, dict] = {}


def _files_key(files: list[Path]) -> tuple:
    return tuple((f.name, file_sha256(f)) for f in files)


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
    so that ``docbench run --data DIR`` never writes into a directory it does not own."""
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


def _cache_valid(doc: dict, files: list[Path]) -> bool:
    entries = doc.get("files")
    if not isinstance(entries, list) or len(entries) != len(files):
        return False
    for entry, f in zip(entries, files, strict=True):
        if not isinstance(entry, dict) or entry.get("name") != f.name:
            return False
        key = sha_cache_key(f)
        if "size" in entry and entry["size"] != key[1]:
            return False
        if entry.get("mtime_ns") == key[2] and isinstance(entry.get("sha256"), str):
            # unchanged since it was hashed (same size and mtime): don't read it again
            remember_sha256(f, entry["sha256"], key)
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
                     progress: Callable[[int], None] | None = None) -> tuple[dict, str]:
    """(answers, source) with source ``"answers.json"``, ``"memory"`` or ``"computed"``."""
    data_dir = Path(data_dir)
    files = dataset_files(data_dir)
    single = data_dir.is_file()
    if not refresh:
        if not single:
            cached = read_cached_answers(data_dir)
            if cached is not None and _cache_valid(cached, files):
                return cached, ANSWERS_NAME
        memo = _MEMO.get(_files_key(files))
        if memo is not None:
            # the files were just hashed as they are now: record their current mtimes
            memo = dict(memo)
            memo["files"] = [dict(entry, size=key[1], mtime_ns=key[2]) for entry, key in
                             zip(memo["files"], map(sha_cache_key, files), strict=True)]
            _MEMO[_doc_key(memo)] = memo
            if not single:  # answers.json is missing or stale: put it back if we may
                _store(data_dir, memo)
            return memo, "memory"
    doc = compute_answers(files, jobs=jobs, progress=progress)
    _MEMO[_doc_key(doc)] = doc
    if not single:
        _store(data_dir, doc)
    return doc, "computed"


def load_or_compute_answers(data_dir: Path, jobs: int = 1) -> dict:
    """The answers for a dataset directory (or single file), from ``answers.json`` (see
    :func:`answers_cache_path`) when its files' names and sha256 match the data, else computed
    and cached there (atomically; in memory only when that place is not writable or a single
    file was given)."""
    return _load_or_compute(data_dir, jobs=jobs)[0]


def write_answers(data_dir: Path, jobs: int = 1) -> Path:
    """Compute the answers afresh and write ``answers.json`` into the dataset directory (an
    explicit request, as ``docbench generate`` makes for the datasets it writes)."""
    data_dir = Path(data_dir)
    if data_dir.is_file():
        raise ValueError("write_answers needs a dataset directory, not a file")
    doc = compute_answers(dataset_files(data_dir), jobs=jobs)
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
    """``docbench answers DIR``: compute (or read the cached) answers and print them."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console()
    data_dir = Path(data_dir)
    files = dataset_files(data_dir)
    if not files:
        console.print(f"[red]no data files (*.json, *.jsonl, *.ndjson[.gz|.zst|.lz4]) in "
                      f"{data_dir}[/red]")
        raise SystemExit(1)
    started = time.perf_counter()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"),
                  TextColumn("{task.completed:,.0f} lines"), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task(f"answers for {len(files)} file(s)", total=None)
        try:
            doc, source = _load_or_compute(data_dir, jobs=jobs, refresh=refresh,
                                           progress=lambda n: bar.advance(task, n))
        except OSError as error:  # an unreadable file: say which, not a traceback
            bar.stop()
            console.print(read_error_message(error), style="red", markup=False)
            raise SystemExit(1) from None
    elapsed = time.perf_counter() - started
    print_answers(doc, console)
    console.print(
        f"files {len(doc['files'])}, documents {doc['documents']:,}, "
        f"invalid lines {doc['invalid_lines']:,}, empty lines {doc['empty_lines']:,}"
    )
    if source == "computed":
        rate = doc["documents"] / elapsed if elapsed > 0 else 0.0
        cache = answers_cache_path(data_dir)
        where = (f"written to {cache}" if not data_dir.is_file() and cache.exists()
                 else "kept in memory")
        console.print(f"computed in {elapsed:.2f} s ({rate:,.0f} documents/s, jobs={jobs}); "
                      f"{where}")
    else:
        console.print(f"read from {source} in {elapsed:.2f} s (computed originally in "
                      f"{doc.get('compute_seconds', '?')} s); --refresh recomputes")
