"""Scanning lines into a partial: templates where they fit, else the full parse.

:func:`scan_blocks` routes each block's lines (:mod:`.block_router`): those a learned
template takes are aggregated in bulk; every other line takes :func:`scan_lines`, the full
parse, line by line. Long lines of the usual event layout (posts, mostly) are read there
through simdjson's validating DOM parser, which builds no object for the parts the queries
do not read; any other layout, and any line simdjson refuses, takes the orjson parse (see
:func:`plain_fields`). Exact either way: the semantics are in :mod:`.semantics`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson

from docbench.dataset.oracle.block_router import Block, BlockRouter, buffer_of
from docbench.dataset.oracle.parse import Line, json_text, parse_fallback
from docbench.dataset.oracle.partials import CollectionState, Partial
from docbench.dataset.oracle.semantics import HOUR_US, INT64_MAX, INT64_MIN, NO_HOUR
from docbench.dataset.oracle.templates import TemplateStore

FLUSH_AT = 200_000  # pending dids (strings or packed) before they are merged into runs
SIMD_MIN_BYTES = 512  # lines this long try simdjson first (see plain_fields)
SAMPLE_BYTES = 256 << 10  # with few templates yet, the start of a block is learned from first
FEW_TEMPLATES = 8  # fewer than this learned: learn from a block's start before routing it

Fields = tuple[str, str, str, str, int]  # collection, operation, kind, did, time_us
SimdParse = Callable[[Line], Any]

# The templates this process has learned: kept across files and calls, the layouts recur.
_TEMPLATES = TemplateStore()
# simdjson's parser for this process: None until looked for, False without simdjson.
_SIMD: SimdParse | bool | None = None


def plain_fields(parse: SimdParse, line: Line) -> Fields | None:
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
        fields = (commit["collection"], commit["operation"], doc["kind"], doc["did"], doc["time_us"])
        if not (
            len(doc) == 4
            and len(commit) == 6
            and "rev" in commit
            and "rkey" in commit
            and "record" in commit
            and "cid" in commit
        ):
            return None
    except Exception:  # noqa: BLE001 - whatever simdjson refuses, the full parse judges
        return None
    coll, op, kind, did, t = fields
    if type(coll) is str and type(op) is str and type(kind) is str and type(did) is str and type(t) is int:
        return coll, op, kind, did, t
    return None


def simd_parse() -> SimdParse | None:
    """simdjson's ``Parser().parse`` for this process, None without simdjson."""
    global _SIMD
    if _SIMD is None:
        try:
            import simdjson
        except ImportError:
            _SIMD = False
        else:
            _SIMD = simdjson.Parser().parse
    return None if isinstance(_SIMD, bool) else _SIMD


def _no_simdjson(line: Line) -> Any:
    raise ValueError("simdjson is not installed")  # (plain_fields: the full parse decides)


def scan_lines(lines: Sequence[Line], part: Partial) -> None:
    """The full parse, line by line, into ``part`` (all but ``part.lines``). The hot loop of
    the lines templates do not take: keep it lean (names bound to locals, no calls but the
    parsers'). Long lines (posts, mostly) try :func:`plain_fields` first. Otherwise
    subscripts first (the usual document has every field); the ``.get`` path handles the
    rest, where :data:`.parse.INVALID` and every non-object value lack ``.get``: the
    ``AttributeError`` branches are the type checks."""
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    fallback = parse_fallback
    text_of = json_text
    new_state = CollectionState.of
    hour_us = HOUR_US
    lo, hi = INT64_MIN, INT64_MAX
    colls = part.collections
    post_did = part.post_dids.append
    post_time = part.post_times.append
    posts_other = part.posts.add_other
    simd = simd_parse()
    if simd is None:  # (no line is long enough for simdjson then)
        simd, simd_min = _no_simdjson, 1 << 62
    else:
        simd_min = SIMD_MIN_BYTES
    plain = plain_fields
    n_invalid = n_empty = no_commit = 0
    h_lo = h_hi = h_cur = 0  # the UTC hour [h_lo, h_hi) of the last time seen is h_cur
    coll: Any
    did: Any
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
        st.documents += 1
        if op != "create" or kind != "commit":
            continue
        st.creates += 1
        hours = st.hours
        if hours is not None:
            if type(t) is int and (h_lo <= t < h_hi or lo <= t <= hi):
                if not h_lo <= t < h_hi:  # a new hour (times mostly increase: rarely)
                    h_lo = t - t % hour_us
                    h_hi = min(h_lo + hour_us, hi + 1)
                    h_cur = t // hour_us % 24
                hours[h_cur] += 1
                if st.is_post:  # a timed post create: Q4, Q5 (and Q2 through them)
                    if did is not None:
                        post_did(did)
                        post_time(t)
                    else:
                        posts_other(None, t, t)
                    continue
            else:
                hours[NO_HOUR] += 1
        if did is not None:
            st.pending.append(did)
    if no_commit:
        part.collection(None).documents += no_commit
    part.invalid += n_invalid
    part.empty += n_empty
    part.documents += len(lines) - n_invalid - n_empty


def _split_lines(block: Block) -> list[Line]:
    """A block's lines, without their newline (nor a ``\\r`` before it)."""
    data = bytes(block)
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    return [line[:-1] if line[-1:] == b"\r" else line for line in lines]


def _learning_cuts(block: Block) -> list[int]:
    """Where to cut a block: with few templates yet, after its start (which the templates
    learn from before the rest is routed), else nowhere."""
    cuts = [0, len(block)]
    if _TEMPLATES.count < FEW_TEMPLATES and len(block) > 2 * SAMPLE_BYTES:
        cuts.insert(1, buffer_of(block).find(b"\n", SAMPLE_BYTES, len(block)) + 1)
    return cuts


def _route_block(router: BlockRouter, block: Block, part: Partial) -> None:
    """A block's lines through the templates, the rest through the full parse; the
    templates learn from the rest."""
    cuts = _learning_cuts(block)
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        if lo < hi:
            missed = router.route(block, part, lo, hi)
            scan_lines(missed, part)
            _TEMPLATES.learn(missed)


def scan_blocks(
    blocks: Iterable[Block], part: Partial, progress: Callable[[int], None] | None = None, fast: bool = True
) -> Partial:
    """Aggregate the lines of raw blocks (see :func:`docbench.dataset.reader.iter_blocks`)
    into ``part``: each line through a template (see :mod:`.templates`) when one takes it,
    else through the full parse. Exact either way; ``fast=False`` parses every line (for
    tests). ``progress``, if given, is called with the number of lines of each block."""
    router = BlockRouter(_TEMPLATES) if fast else None
    for block in blocks:
        before = part.lines
        if router is None:
            lines = _split_lines(block)
            part.lines += len(lines)
            scan_lines(lines, part)
        else:
            _route_block(router, block, part)
        if progress is not None:
            progress(part.lines - before)
        if part.pending() >= FLUSH_AT:
            part.flush()
    if router is not None:
        scan_lines(router.drain(part), part)
    part.flush()
    return part


def scan_batches(
    batches: Iterable[list[bytes]],
    part: Partial,
    progress: Callable[[int], None] | None = None,
    fast: bool = True,
) -> Partial:
    """:func:`scan_blocks` for lists of lines (as :func:`docbench.dataset.reader.
    iter_line_batches` yields them)."""
    blocks = (b"\n".join(lines) + b"\n" for lines in batches if lines)
    return scan_blocks(blocks, part, progress, fast)
