"""The byte-level fast path: line templates, and why a line that fits one needs no parse.

Most lines of a dataset share a handful of exact byte layouts: the same keys in the same
order, values of the same lengths (a like is a like: did, time, rev, rkey, cids, date and
uri always have the same widths). A *template* is such a layout, learned from one line that
the full parse accepted: every byte is either LITERAL (JSON structure, keys, whitespace,
and the values of ``kind``, ``commit.operation``, ``commit.collection``, which fix the
line's group) or a SLOT: a byte inside a string value (``did``, ``rev``, text, ...) or a
digit of an integer (``time_us``, numbers in the record). Lines of the template's length
are then checked in bulk with numpy, one comparison per byte, instead of being parsed
(:mod:`.block_router`).

Why a line that passes the check parses exactly as the template says (the proof the fast
path rests on). The line that taught the template (L) is printable ASCII without any
backslash, and the full parse accepted it. A checked line (M) has L's length, L's bytes at
every literal position, a byte in 0x23-0x7e (printable ASCII above the quote: no quote, no
control character, nothing beyond ASCII) at every string-slot position, a digit at every
digit slot (not 0 first in a multi-digit integer), and no backslash anywhere (a line with a
backslash never reaches a template: see :meth:`.block_router.BlockRouter.route`). Reading M
from left to right, every string starts and ends where it does in L (no quote in a slot to
end it early, no backslash to escape one), every number has L's extent and is a valid JSON
integer, every other token is L's own bytes: M is the same sequence of tokens, valid JSON,
with the same keys (so the same duplicate keys -- and templates refuse those at the top
level and in ``commit`` anyway). Its ``kind``, ``commit.operation`` and
``commit.collection`` are L's (literal), its ``did`` is the ASCII text of its slot (no
escapes), its ``time_us`` the integer of its digits (at most 18: always within int64). M is
pure ASCII, hence valid UTF-8. Whether orjson or the fallbacks would have parsed M, the
result is the same document. Anything else (escapes, non-ASCII, a space in a value, other
lengths or layouts) takes the full parse, line by line; the tests check this on every byte
of template lines replaced by tricky bytes (test_oracle_scale.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
import orjson

from docbench.core.jsontypes import JsonObject
from docbench.dataset.oracle.parse import Line, json_text
from docbench.dataset.oracle.semantics import INT64_MAX, INT64_MIN, Collection

TEMPLATE_MAX_LEN = 4096  # longer lines always take the full parse
TEMPLATES_PER_LEN = 4
MAX_TEMPLATES = 256
LEARN_MIN = 3  # a length is worth a template once this many lines of it missed in one block
LEARN_TRIES = 2  # failed attempts per length before that length is given up
LEARN_PER_BLOCK = 4
LEARN_FIRST_BLOCKS = 16  # attempts per block in a process's first 4 blocks (fast start)
LEARN_EVERY_BLOCK = 32  # learn from each of a process's first blocks, then from every 8th
CHUNK_BYTES = 256 << 10  # bytes of rows per numpy pass (temporaries stay in the cache)
_QUOTE = 0x22
_STR_LO, _STR_SPAN = 0x23, 0x7E - 0x23  # a string-slot byte: printable ASCII after '"'
_TOKEN = re.compile(
    rb'"[^"]*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null'
    rb"|[{}\[\]:,]|[ \t\r]+"
)
_INT_TOKEN = re.compile(rb"-?[0-9]+")
_NOT_TEMPLATE_BYTE = re.compile(rb"[^\x20-\x7e]|\\")
_MAX_DEPTH = 64
_MAX_DIGITS = 18  # a digit slot's integer is always within int64
_SCRATCH = np.empty(CHUNK_BYTES + TEMPLATE_MAX_LEN, dtype=np.uint8)
_SCRATCH_BOOL = np.empty(CHUNK_BYTES + TEMPLATE_MAX_LEN, dtype=bool)


@dataclass(frozen=True, slots=True)
class DidSlot:
    """The did is the ASCII text of the bytes ``[start, end)``."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class DidValue:
    """Every line of the template has this did (None: no did)."""

    did: str | None


@dataclass(frozen=True, slots=True)
class TimeSlot:
    """``time_us`` is the integer of the digits ``[start, end)`` (after a ``-`` if negative)."""

    negative: bool
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class TimeValue:
    """Every line of the template has this time (None: no time)."""

    time_us: int | None


SlotKind = Literal["str", "int"]
Slot = tuple[int, int, SlotKind]  # bytes [start, end) of a string's content or digits


class Template:
    """One exact byte layout (see above): per byte an allowed range ``[lo, lo + span]``."""

    __slots__ = ("length", "lo", "span", "no_commit", "coll", "creates", "did", "time", "hits")

    def __init__(
        self,
        line: bytes,
        slots: list[Slot],
        no_commit: bool,
        coll: Collection,
        creates: bool,
        did: DidSlot | DidValue,
        time_: TimeSlot | TimeValue,
    ) -> None:
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
        self.did = did
        self.time = time_
        self.hits = 0

    def match(self, m: np.ndarray) -> np.ndarray | None:
        """Which rows of ``m`` (n x length, uint8; rows without a backslash, see
        :mod:`.block_router`) follow the template: a bool mask, or None when all of them do."""
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


# -- a line's token tree ----------------------------------------------------------------------


class _NoTemplate(Exception):
    pass


class _Token(NamedTuple):
    """A string, number or literal: bytes ``[start, end)`` of the line."""

    start: int
    end: int


class _Object(NamedTuple):
    members: list[tuple[bytes, _Node]]  # (key without its quotes, value)


class _Array(NamedTuple):
    items: list[_Node]


_Node = _Token | _Object | _Array
_Tokens = list[tuple[int, int]]


def _tokens(line: bytes) -> _Tokens | None:
    """The spans of the line's tokens (whitespace left out), or None if something else is
    there."""
    toks = []
    pos = 0
    for m in _TOKEN.finditer(line):
        if m.start() != pos:
            return None
        pos = m.end()
        if line[m.start()] not in b" \t\r":
            toks.append(m.span())
    return toks if pos == len(line) else None


def _after_item(line: bytes, toks: _Tokens, i: int, close: int) -> tuple[bool, int]:
    """After an item of a container: ``(closed, next token)`` at a ``,`` or its end."""
    sep = line[toks[i][0]]
    if sep == close:
        return True, i + 1
    if sep != 0x2C:
        raise _NoTemplate
    return False, i + 1


def _object(line: bytes, toks: _Tokens, i: int, depth: int) -> tuple[_Object, int]:
    """The object whose first token after ``{`` is ``i``."""
    members: list[tuple[bytes, _Node]] = []
    if line[toks[i][0]] == 0x7D:
        return _Object(members), i + 1
    while True:
        ks, ke = toks[i]
        if line[ks] != _QUOTE or line[toks[i + 1][0]] != 0x3A:  # "key" :
            raise _NoTemplate
        child, i = _tree(line, toks, i + 2, depth + 1)
        members.append((line[ks + 1 : ke - 1], child))
        closed, i = _after_item(line, toks, i, 0x7D)
        if closed:
            return _Object(members), i


def _array(line: bytes, toks: _Tokens, i: int, depth: int) -> tuple[_Array, int]:
    """The array whose first token after ``[`` is ``i``."""
    items: list[_Node] = []
    if line[toks[i][0]] == 0x5D:
        return _Array(items), i + 1
    while True:
        child, i = _tree(line, toks, i, depth + 1)
        items.append(child)
        closed, i = _after_item(line, toks, i, 0x5D)
        if closed:
            return _Array(items), i


def _tree(line: bytes, toks: _Tokens, i: int, depth: int) -> tuple[_Node, int]:
    """The JSON value starting at token ``i``: ``(node, next token)``."""
    if depth > _MAX_DEPTH:
        raise _NoTemplate
    s, e = toks[i]
    c = line[s]
    if c == 0x7B:  # {
        return _object(line, toks, i + 1, depth)
    if c == 0x5B:  # [
        return _array(line, toks, i + 1, depth)
    if c in b"{}[]:,":
        raise _NoTemplate
    return _Token(s, e), i + 1


def _members(node: _Object) -> dict[bytes, _Node]:
    keys = [k for k, _ in node.members]
    if len(set(keys)) != len(keys):  # duplicate keys: leave those lines to the full parse
        raise _NoTemplate
    return dict(node.members)


def _slots(line: bytes, node: _Node, out: list[Slot], fixed: set[int]) -> None:
    """Every slot under ``node``, except under the nodes in ``fixed`` (kept literal)."""
    if id(node) in fixed:
        return
    if isinstance(node, _Object):
        for _, child in node.members:
            _slots(line, child, out, fixed)
    elif isinstance(node, _Array):
        for child in node.items:
            _slots(line, child, out, fixed)
    else:
        s, e = node
        if line[s] == _QUOTE:
            if e - s > 2:
                out.append((s + 1, e - 1, "str"))
        elif _INT_TOKEN.fullmatch(line, s, e):
            out.append((s + (line[s] == 0x2D), e, "int"))


# -- deriving a template from a line ----------------------------------------------------------


@dataclass
class _Layout:
    """What a line's tokens say: its top-level members, its group, its slots so far."""

    top: dict[bytes, _Node]
    no_commit: bool
    coll: Collection
    creates: bool
    slots: list[Slot]


def _layout(line: bytes, doc: JsonObject, toks: _Tokens) -> _Layout | None:
    """The layout of a parsed line: None if it is not one object, or ``commit`` is an
    object of duplicate keys. ``kind``, ``did``, ``time_us``, and the collection and
    operation of ``commit`` (all of it when it is not an object) stay literal for now."""
    root, end = _tree(line, toks, 0, 0)
    if end != len(toks) or not isinstance(root, _Object):
        return None
    top = _members(root)
    fixed = {id(top[k]) for k in (b"kind", b"did", b"time_us") if k in top}
    commit = doc.get("commit")
    no_commit = type(commit) is not dict
    coll: Collection = None
    creates = False
    cnode = top.get(b"commit")
    if type(commit) is not dict:
        if cnode is not None:
            fixed.add(id(cnode))
    else:
        if not isinstance(cnode, _Object):
            return None
        cmap = _members(cnode)
        fixed.update(id(cmap[k]) for k in (b"collection", b"operation") if k in cmap)
        value = commit.get("collection")
        coll = value if type(value) is str or value is None else json_text(value)
        creates = commit.get("operation") == "create" and doc.get("kind") == "commit"
    slots: list[Slot] = []
    _slots(line, root, slots, fixed)
    return _Layout(top, no_commit, coll, creates, slots)


def _did_rule(line: bytes, layout: _Layout, did: object) -> DidSlot | DidValue | None:
    """A slot for a string did (appended to the layout's slots), else the did's value;
    None when the slot's bytes do not read as the did."""
    node = layout.top.get(b"did")
    if type(did) is str and isinstance(node, _Token) and node.end - node.start > 2:
        s, e = node.start + 1, node.end - 1
        if line[s:e].decode("ascii") != did:
            return None
        layout.slots.append((s, e, "str"))
        return DidSlot(s, e)
    if did is None:
        return DidValue(None)
    return DidValue(json_text(did) if type(did) is not str else did)


def _time_rule(line: bytes, layout: _Layout, t: object) -> TimeSlot | TimeValue | None:
    """A slot for an integer time of at most 18 digits (appended to the layout's slots),
    else the time's value; None when the slot's digits do not read as the time."""
    node = layout.top.get(b"time_us")
    if (
        type(t) is int
        and isinstance(node, _Token)
        and _INT_TOKEN.fullmatch(line, node.start, node.end)
        and node.end - node.start - (line[node.start] == 0x2D) <= _MAX_DIGITS
    ):
        negative = line[node.start] == 0x2D
        s, e = node.start + negative, node.end
        if int(line[node.start : e]) != t:
            return None
        layout.slots.append((s, e, "int"))
        return TimeSlot(negative, s, e)
    if type(t) is int and INT64_MIN <= t <= INT64_MAX:
        return TimeValue(t)
    return TimeValue(None)


def derive_template(line: Line) -> Template | None:
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
    toks = _tokens(line)
    if toks is None:
        return None
    try:
        layout = _layout(line, doc, toks)
    except (_NoTemplate, IndexError):
        return None
    if layout is None:
        return None
    did_rule = _did_rule(line, layout, doc.get("did"))
    if did_rule is None:
        return None
    time_rule = _time_rule(line, layout, doc.get("time_us"))
    if time_rule is None:
        return None
    tpl = Template(line, layout.slots, layout.no_commit, layout.coll, layout.creates, did_rule, time_rule)
    if tpl.match(np.frombuffer(line, dtype=np.uint8).reshape(1, -1)) is not None:
        return None  # (cannot happen: a template matches its own line)
    return tpl


# -- the templates one process has learned ----------------------------------------------------


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

    def learn(self, missed: Sequence[Line]) -> None:
        """Learn templates from lines that took the full parse, where a layout recurs: two
        lines of the same length with their quotes at the same places. (From every block
        at first, then from every 8th: the layouts that matter are learned early.)"""
        self.blocks += 1
        if self.blocks > LEARN_EVERY_BLOCK and self.blocks % 8:
            return
        if self.count >= MAX_TEMPLATES or len(missed) < LEARN_MIN:
            return
        by_len: dict[int, list[Line]] = {}
        for line in missed:
            by_len.setdefault(len(line), []).append(line)
        tries = 0
        for n, same in by_len.items():
            if not self._worth_trying(n, same):
                continue
            self._try_length(n, same)
            tries += 1
            if (
                tries >= (LEARN_FIRST_BLOCKS if self.blocks <= 4 else LEARN_PER_BLOCK)
                or self.count >= MAX_TEMPLATES
            ):
                return

    def _worth_trying(self, n: int, same: list[Line]) -> bool:
        """Whether to try a template for the missed lines ``same`` of length ``n``."""
        return not (
            len(same) < LEARN_MIN
            or n > TEMPLATE_MAX_LEN
            or self.failures.get(n, 0) >= LEARN_TRIES
            or len(self.by_len.get(n, ())) >= TEMPLATES_PER_LEN
        )

    def _try_length(self, n: int, same: list[Line]) -> None:
        """A template from two lines of the most common quote layout, if they make one."""
        layouts: dict[tuple[int, ...], list[Line]] = {}
        for line in same[:8]:  # (enough to find two alike where one layout dominates)
            layouts.setdefault(tuple(map(len, line.split(b'"'))), []).append(line)
        pair = max(layouts.values(), key=len)
        tpl = derive_template(pair[0]) if len(pair) >= 2 else None
        if tpl is not None and tpl.match(np.frombuffer(pair[1], np.uint8)[None]) is None:
            self.add(tpl)
        else:
            self.failures[n] = self.failures.get(n, 0) + 1
