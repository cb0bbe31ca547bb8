"""Routing the lines of raw blocks: to a template (checked in bulk) or to the full parse.

Lines whose length has a template (:mod:`.templates`) wait, as rows of a uint8 matrix per
length (gathered across blocks, so that each numpy pass covers many rows), for the template
check; the others, and lines with a backslash anywhere, go to the full parse. No per-line
Python object is made for a line a template takes: its did and time are read from the rows
in bulk (:func:`apply_template`).
"""

from __future__ import annotations

import numpy as np

from docbench.dataset.oracle.dids import EMPTY_U64, pack_did_rows
from docbench.dataset.oracle.parse import Line
from docbench.dataset.oracle.partials import Partial
from docbench.dataset.oracle.semantics import HOUR_US, HOURS, NO_HOUR
from docbench.dataset.oracle.templates import (
    CHUNK_BYTES,
    TEMPLATE_MAX_LEN,
    DidSlot,
    Template,
    TemplateStore,
    TimeSlot,
)

BATCH_ROWS = 2048  # rows of one length gathered (across blocks) before they are checked
PENDING_BYTES = 16 << 20  # at most this many bytes of rows wait to be checked
MAX_MARKS = 4096  # backslashes found one by one; beyond, one numpy pass finds them all
_BACKSLASH = 0x5C

_D4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_D8 = np.uint64(0x00FF00FF00FF00FF)
_D16 = np.uint64(0x0000FFFF0000FFFF)

Block = bytes | memoryview  # raw lines; see docbench.dataset.reader.iter_blocks


def buffer_of(block: Block) -> bytes | bytearray:
    """The buffer a block is: for ``find`` and slices (one copy, where a memoryview's slice
    would be a view on a buffer the reader reuses). A reader's block views the start of its
    bytearray."""
    if not isinstance(block, memoryview):
        return block
    obj = block.obj
    return obj if isinstance(obj, bytes | bytearray) else bytes(block)


# -- the rows a template took, into a partial -------------------------------------------------


def _times(rows: np.ndarray, rule: TimeSlot) -> np.ndarray:
    """The integers of a digit slot (at most 18 digits): right-aligned in 24 ASCII zeros,
    read 8 digits per uint64 (first digit in the lowest byte) by pairs, fours, eights."""
    s, e = rule.start, rule.end
    digits = np.full((len(rows), 24), 0x30, dtype=np.uint8)
    digits[:, 24 - (e - s) :] = rows[:, s:e]
    x = digits.view(np.uint64)
    x = ((x & _D4) * np.uint64(2561)) >> np.uint64(8)
    x = ((x & _D8) * np.uint64(6553601)) >> np.uint64(16)
    x = ((x & _D16) * np.uint64(42949672960001)) >> np.uint64(32)
    t = ((x[:, 0] * np.uint64(10**16)) + (x[:, 1] * np.uint64(10**8)) + x[:, 2]).view(np.int64)
    return -t if rule.negative else t


def _slot_dids(rows: np.ndarray, rule: DidSlot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Packed did:plc keys of the did slot: ``(hi, lo, ok)``; the other rows' dids are read
    as text by the caller."""
    if rule.end - rule.start == 32:
        return pack_did_rows(rows[:, rule.start : rule.end])
    return EMPTY_U64, EMPTY_U64, np.zeros(len(rows), dtype=bool)


def _texts(rows: np.ndarray, rule: DidSlot, ok: np.ndarray) -> list[str]:
    rest = rows[~ok, rule.start : rule.end]
    data = rest.tobytes()
    w = rule.end - rule.start
    return [data[i : i + w].decode("ascii") for i in range(0, len(data), w)]


def _row_times(tpl: Template, rows: np.ndarray, hours: list[int]) -> np.ndarray | None:
    """Count the rows' creates into their hours; their times, None when they have none."""
    rule = tpl.time
    n = len(rows)
    if isinstance(rule, TimeSlot):
        t = _times(rows, rule)
        counts = np.bincount(t // HOUR_US % HOURS, minlength=HOURS).tolist()
        for h in range(HOURS):
            hours[h] += counts[h]
        return t
    if rule.time_us is not None:
        hours[rule.time_us // HOUR_US % HOURS] += n
        return np.full(n, rule.time_us, dtype=np.int64)
    hours[NO_HOUR] += n
    return None


def _timed_posts(tpl: Template, rows: np.ndarray, t: np.ndarray, part: Partial) -> None:
    """Timed post creates: to the first and last times per did (Q4, Q5; Q2 through them)."""
    did = tpl.did
    if isinstance(did, DidSlot):
        hi, lo, ok = _slot_dids(rows, did)
        part.post_packed.append((hi, lo, t[ok]))
        if not ok.all():
            part.post_dids.extend(_texts(rows, did, ok))
            part.post_times.extend(t[~ok].tolist())
    elif did.did is None:
        part.posts.add_other(None, int(t.min()), int(t.max()))
    else:
        part.post_dids.extend((did.did, did.did))
        part.post_times.extend((int(t.min()), int(t.max())))


def apply_template(tpl: Template, rows: np.ndarray, part: Partial) -> None:
    """Aggregate rows that follow ``tpl`` exactly as the line-by-line path would."""
    n = len(rows)
    tpl.hits += n
    part.documents += n
    if tpl.no_commit:
        part.collection(None).documents += n
        return
    st = part.collection(tpl.coll)
    st.documents += n
    if not tpl.creates:
        return
    st.creates += n
    if st.hours is not None:
        t = _row_times(tpl, rows, st.hours)
        if t is not None and st.is_post:
            _timed_posts(tpl, rows, t, part)
            return
    did = tpl.did
    if isinstance(did, DidSlot):
        hi, lo, ok = _slot_dids(rows, did)
        st.packed.append((hi, lo))
        if not ok.all():
            st.pending.extend(_texts(rows, did, ok))
    elif did.did is not None:
        st.pending.append(did.did)


# -- the router -------------------------------------------------------------------------------


class BlockRouter:
    """Routes the lines of raw blocks (see the module's docstring)."""

    def __init__(self, store: TemplateStore) -> None:
        self.store = store
        self.rows: dict[int, list[np.ndarray]] = {}  # waiting rows of each length
        self.count: dict[int, int] = {}
        self.bytes = 0
        self.newlines = np.empty(0, dtype=bool)

    def route(self, block: Block, part: Partial, lo: int = 0, hi: int | None = None) -> list[Line]:
        """Count the lines of ``block[lo:hi]`` (whole lines) into ``part.lines``, queue those
        a template may take, and return the others (for the full parse; a ``\\r`` before
        the newline removed). ``block``: bytes, or a memoryview from
        :func:`docbench.dataset.reader.iter_blocks` (its ``obj`` starts where it does)."""
        a = np.frombuffer(block, dtype=np.uint8)
        if hi is None:
            hi = len(a)
        a = a[lo:hi]
        starts, ends = self._line_spans(a)
        part.lines += len(ends)
        lens = ends - starts
        has = self.store.has[np.minimum(lens, TEMPLATE_MAX_LEN + 1)]
        src = buffer_of(block)
        escaped = _escaped_lines(src, a, ends, lo, hi)
        if escaped is not None:  # a line with a backslash (an escape) always takes the parse
            has[escaped] = False
        fast = np.flatnonzero(has)
        lines = _slices(src, starts, ends, np.flatnonzero(~has), lo, hi)
        if len(fast):
            self._queue(a, starts[fast], lens[fast], part, lines)
            if self.bytes > PENDING_BYTES:
                lines.extend(self.drain(part))
        return lines

    def _line_spans(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Start and end (its newline, or the end) of each line of ``a``."""
        size = len(a)
        if len(self.newlines) < size:
            self.newlines = np.empty(size, dtype=bool)
        newlines = self.newlines[:size]  # (reused: a fresh 4 MB array costs page faults)
        np.equal(a, 10, out=newlines)
        ends = np.flatnonzero(newlines)
        if size and a[-1] != 10:  # the file's last line, without a newline
            ends = np.append(ends, size)
        n = len(ends)
        starts = np.empty(n, dtype=np.intp)
        if n:
            starts[0] = 0
            starts[1:] = ends[:-1] + 1
        return starts, ends

    def _queue(
        self, a: np.ndarray, first: np.ndarray, lengths: np.ndarray, part: Partial, lines: list[Line]
    ) -> None:
        """Queue the lines of ``a`` at ``first`` (of those lengths) as rows per length;
        lengths with enough rows are checked at once (lines no template took go to
        ``lines``)."""
        order = np.argsort(lengths, kind="stable")
        lengths = lengths[order]
        first = first[order]
        cuts = np.flatnonzero(lengths[1:] != lengths[:-1]) + 1
        bounds = np.concatenate(([0], cuts, [len(order)])).tolist()
        size = len(a)
        for s, e in zip(bounds[:-1], bounds[1:], strict=True):
            length = int(lengths[s])
            # every window of `length` bytes (a view), of which the rows starting lines (a copy)
            windows = np.ndarray((size - length + 1, length), np.uint8, a, 0, (1, 1))
            self.rows.setdefault(length, []).append(windows[first[s:e]])
            count = self.count[length] = self.count.get(length, 0) + e - s
            self.bytes += (e - s) * length
            if count >= BATCH_ROWS:
                lines.extend(self.check(length, part))

    def check(self, n: int, part: Partial) -> list[Line]:
        """Check the waiting rows of length ``n`` against its templates; return the rows no
        template takes, as lines."""
        count = self.count.pop(n)
        self.bytes -= count * n
        parts = self.rows.pop(n)
        allrows = parts[0] if len(parts) == 1 else np.concatenate(parts)
        tpls = self.store.by_len[n]
        if len(tpls) > 1:
            tpls.sort(key=lambda t: -t.hits)
        which = _matching_templates(allrows, tpls)
        if (which == 0).all():
            apply_template(tpls[0], allrows, part)
            return []
        for k, tpl in enumerate(tpls):
            taken = which == k
            if taken.any():
                apply_template(tpl, allrows[taken], part)
        return [allrows[j].tobytes() for j in np.flatnonzero(which < 0).tolist()]

    def drain(self, part: Partial) -> list[Line]:
        left: list[Line] = []
        for n in list(self.count):
            left.extend(self.check(n, part))
        return left


def _matching_templates(allrows: np.ndarray, tpls: list[Template]) -> np.ndarray:
    """The index of the first template (of ``tpls``) each row follows, -1 for none; in
    chunks of CHUNK_BYTES (a template's scratch buffers)."""
    count, n = allrows.shape
    which = np.full(count, -1, dtype=np.int16)
    step = max(1, CHUNK_BYTES // n)
    for i in range(0, count, step):
        rows = allrows[i : i + step]
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
    return which


def _escaped_lines(
    src: bytes | bytearray, a: np.ndarray, ends: np.ndarray, lo: int, hi: int
) -> np.ndarray | None:
    """The indexes of the lines with a backslash (None when there is none). Few: found with
    ``find``; many: one numpy pass over the block."""
    i = src.find(b"\\", lo, hi)
    if i < 0:
        return None
    found = [i]
    while (i := src.find(b"\\", i + 1, hi)) >= 0 and len(found) < MAX_MARKS:
        found.append(i)
    marks = np.asarray(found) - lo if i < 0 else np.flatnonzero(a == _BACKSLASH)
    return np.searchsorted(ends, marks)


def _slices(
    src: bytes | bytearray, starts: np.ndarray, ends: np.ndarray, which: np.ndarray, lo: int, hi: int
) -> list[Line]:
    """The lines ``which`` of ``src[lo:hi]`` (slices of the buffer itself: one copy; a
    bytearray where blocks are memoryviews), without a ``\\r`` before the newline."""
    lines: list[Line] = [
        src[s:e] for s, e in zip((starts[which] + lo).tolist(), (ends[which] + lo).tolist(), strict=True)
    ]
    if src.find(b"\r", lo, hi) >= 0:  # (CRLF line ends: the reader drops the \r)
        lines = [line[:-1] if line[-1:] == b"\r" else line for line in lines]
    return lines
