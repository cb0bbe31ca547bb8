"""The generic load driver: stream a dataset into a system, isolating refused documents.

The driver reads each file as raw lines (no parsing: the engine is the judge of what it
accepts, with one exception below), sends batches of ``System.load_batch_size`` lines to the
system's loader and, when a batch is refused, bisects it until only the refused lines are
left. Each refused line is logged with its file, line number and the engine's reason; the
others are loaded. Refusals are rare (about one document per million), so bisection costs
little: a refused batch of B lines is re-sent as at most ~2B lines in total.

One definition of a document for every system and the oracle: a line is a document only if it
is a JSON object. A line whose first byte after JSON whitespace (space, tab, CR, LF) is not
``{`` cannot be one (an array, a string, a number, true/false/null, or not JSON at all), so the
driver refuses it itself, with the same reason whatever the system -- engines disagree about
such lines (PostgreSQL's jsonb takes ``null`` and arrays, ClickHouse turns ``[{...}]`` into a
row), and the oracle counts them as invalid. That is a byte test, no parsing. A line starting
with ``{`` that is not valid JSON is still left to the engine.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypedDict

from docbench.contracts.analytics import AnalyticsAdapter, Loader
from docbench.contracts.common import BatchRejected, StorageSize
from docbench.core.prefetch import prefetched
from docbench.dataset.reader import compression_of, iter_decompressed, iter_line_batches

log = logging.getLogger(__name__)

# How many refused documents a result file lists in full (all are counted, and all are written
# to the refusal log when the caller gives one).
MAX_LISTED_ERRORS = 100
# How many refusals are also printed as warnings (the rest only go to the refusal log).
MAX_PRINTED_ERRORS = 20


class TextSink(Protocol):
    """Where refusals are written: a text file, or anything with its ``write``."""

    def write(self, text: str, /) -> int: ...


@dataclass
class RefusedDocument:
    file: str
    line: int
    reason: str


class RefusedState(TypedDict):
    """A refused document as a checkpoint keeps it (a :class:`RefusedDocument`'s fields)."""

    file: str
    line: int
    reason: str


class LoadState(TypedDict):
    """A :class:`LoadReport` as JSON, its log handle left out (a resumable load's checkpoint)."""

    offered: int
    empty_lines: int
    refused: list[RefusedState]
    refused_count: int
    not_objects: int
    refused_lines: dict[str, list[int]]
    seconds: float
    batches: int
    retried_batches: int
    whole_file_refusals: int


@dataclass
class LoadReport:
    offered: int = 0
    empty_lines: int = 0
    refused: list[RefusedDocument] = field(default_factory=list)
    refused_count: int = 0
    # Of those, lines the driver refused itself because they are not JSON objects (the same
    # for every system; the oracle counts them as invalid lines, never as documents).
    not_objects: int = 0
    # Every refused line (all of them, not only the listed ones): file name -> line numbers.
    refused_lines: dict[str, set[int]] = field(default_factory=dict)
    seconds: float = 0.0
    batches: int = 0
    retried_batches: int = 0
    # Files whose native whole-file load was refused, then loaded in batches instead.
    whole_file_refusals: int = 0
    # Where every refusal is written as "file<TAB>line<TAB>reason" (None: nowhere).
    refusal_log: TextSink | None = None

    def state(self) -> LoadState:
        """Everything but the log handle, as JSON (a resumable load's checkpoint)."""
        return {
            "offered": self.offered,
            "empty_lines": self.empty_lines,
            "refused": [{"file": r.file, "line": r.line, "reason": r.reason} for r in self.refused],
            "refused_count": self.refused_count,
            "not_objects": self.not_objects,
            "refused_lines": {name: sorted(lines) for name, lines in self.refused_lines.items()},
            "seconds": self.seconds,
            "batches": self.batches,
            "retried_batches": self.retried_batches,
            "whole_file_refusals": self.whole_file_refusals,
        }

    @classmethod
    def from_state(cls, state: LoadState) -> LoadReport:
        report = cls(
            offered=state["offered"],
            empty_lines=state["empty_lines"],
            refused_count=state["refused_count"],
            not_objects=state["not_objects"],
            seconds=state["seconds"],
            batches=state["batches"],
            retried_batches=state["retried_batches"],
            whole_file_refusals=state["whole_file_refusals"],
        )
        report.refused = [RefusedDocument(**r) for r in state["refused"]]
        report.refused_lines = {name: set(lines) for name, lines in state["refused_lines"].items()}
        return report

    def refuse(self, document: RefusedDocument) -> None:
        self.refused_count += 1
        self.refused_lines.setdefault(document.file, set()).add(document.line)
        if len(self.refused) < MAX_LISTED_ERRORS:
            self.refused.append(document)
        if self.refusal_log is not None:
            self.refusal_log.write(f"{document.file}\t{document.line}\t{document.reason}\n")
        if self.refused_count <= MAX_PRINTED_ERRORS:
            log.warning("refused %s:%d: %s", document.file, document.line, document.reason)
        elif self.refused_count == MAX_PRINTED_ERRORS + 1:
            log.warning("more refusals: counted, and written to the refusal log if there is one")


@dataclass
class Batch:
    """Lines to load, and where they are in their file (1-based line numbers).

    Numbers are kept implicitly (`first` + position) while the lines are contiguous, which is
    the common case, so building a batch costs no Python work per line; `numbers` is set only
    when empty lines were dropped from the middle of the batch.
    """

    lines: list[bytes]
    first: int
    numbers: list[int] | None = None

    def number(self, index: int) -> int:
        return self.numbers[index] if self.numbers is not None else self.first + index

    def without(self, indexes: set[int]) -> Batch:
        kept = [i for i in range(len(self.lines)) if i not in indexes]
        return Batch([self.lines[i] for i in kept], 0, [self.number(i) for i in kept])

    def split(self) -> tuple[Batch, Batch]:
        middle = len(self.lines) // 2
        if self.numbers is None:
            return (Batch(self.lines[:middle], self.first), Batch(self.lines[middle:], self.first + middle))
        return (
            Batch(self.lines[:middle], 0, self.numbers[:middle]),
            Batch(self.lines[middle:], 0, self.numbers[middle:]),
        )


JSON_WHITESPACE = b" \t\r\n"
OBJECT_START = ord("{")


def _all_start_with_brace(block: list[bytes]) -> bool:
    """True when every line of the block starts with '{': then it has no empty line and no
    line that cannot be an object, so needs no per-line check. Lines sort bytewise by their
    first byte, so the smallest and the largest line (found at C speed, ~20 ns a line) tell."""
    return min(block)[:1] == b"{" and max(block)[:1] == b"{"


_NUMBER_BYTES = frozenset(b"0123456789+-.eE")


def not_object_reason(line: bytes) -> str:
    """Why a line whose first non-whitespace byte is not '{' is refused. Byte tests only (no
    parsing): "an array" means it starts with '[' and ends with ']', and so on."""
    body = line.strip(JSON_WHITESPACE)
    head, tail = body[:1], body[-1:]
    if not body:
        what = "an empty line"
    elif head == b"[" and tail == b"]":
        what = "an array"
    elif head == b'"' and tail == b'"' and len(body) > 1:
        what = "a string"
    elif body in (b"true", b"false", b"null"):
        what = body.decode()
    elif head in b"-0123456789" and _NUMBER_BYTES.issuperset(body):
        what = "a number"
    elif 0x20 < body[0] < 0x7F:
        what = f"starts with '{chr(body[0])}'"
    else:
        what = f"starts with byte 0x{body[0]:02x}"
    return f"not a JSON object: {what}"


def _document_lines(
    block: list[bytes], first_number: int, path: Path, report: LoadReport
) -> list[tuple[int, bytes]]:
    """The (line number, line) pairs of a block that may be documents. Same rules as the
    oracle: a line of only JSON whitespace is empty (not a document); a line whose first other
    byte is not '{' is not an object: refused here, for every system alike."""
    kept = []
    for number, line in enumerate(block, first_number):
        body = line.lstrip(JSON_WHITESPACE)
        if not body:
            report.empty_lines += 1
        elif body[0] == OBJECT_START:
            kept.append((number, line))
        else:
            report.offered += 1
            report.not_objects += 1
            report.refuse(RefusedDocument(path.name, number, not_object_reason(body)))
    return kept


def offered_lines(path: Path) -> int:
    """How many lines of a file the driver offers to an engine: every line but the empty ones
    (nothing, or only JSON whitespace), counted as :func:`batches` and the whole-file paths
    count them. A resumed load checks its checkpoint's claims against this."""
    offered = 0
    for block in iter_line_batches(path):
        if block and _all_start_with_brace(block):
            offered += len(block)
        else:
            offered += sum(1 for line in block if line.strip(JSON_WHITESPACE))
    return offered


def batches(path: Path, size: int, report: LoadReport) -> Iterator[Batch]:
    pending: list[bytes] = []
    numbers: list[int] | None = None
    first = next_number = 1
    # (the next block is read and split while the engine loads the current batch)
    for block in prefetched(iter_line_batches(path)):
        if not _all_start_with_brace(block):
            kept = _document_lines(block, next_number, path, report)
            if numbers is None:
                numbers = list(range(first, first + len(pending)))
            numbers.extend(n for n, _ in kept)
            pending.extend(line for _, line in kept)
        else:
            if numbers is not None:
                numbers.extend(range(next_number, next_number + len(block)))
            pending.extend(block)
        next_number += len(block)
        while len(pending) >= size:
            yield _take(pending, numbers, first, size)
            del pending[:size]
            if numbers is not None:
                del numbers[:size]
            first += size  # only meaningful while numbers is None
        if numbers is not None and not pending:
            numbers, first = None, next_number
    if pending:
        yield _take(pending, numbers, first, len(pending))


def _take(pending: list[bytes], numbers: list[int] | None, first: int, size: int) -> Batch:
    if numbers is None:
        return Batch(pending[:size], first)
    return Batch(pending[:size], numbers[0], numbers[:size])


def load_batch_isolating(loader: Loader, batch: Batch, file_name: str, report: LoadReport) -> int:
    """Load a batch: through the loader's ``load_batch_skipping`` where the engine skips and
    names its refusals itself, else all or nothing, split in halves on a refusal until the
    refused lines are alone.

    Returns the number of documents loaded.
    """
    named = loader.load_batch_skipping(batch.lines)
    if named is not None:  # the engine skipped and named its refusals itself
        for index, reason in sorted(named.items()):
            report.refuse(RefusedDocument(file_name, batch.number(index), _short(reason)))
        return len(batch.lines) - len(named)
    try:
        loader.load_batch(batch.lines)
        return len(batch.lines)
    except BatchRejected as refusal:
        named = {i: reason for i, reason in refusal.refused.items() if 0 <= i < len(batch.lines)}
        if named and len(batch.lines) > 1:
            # The engine said which documents it refused: record them, load the rest at once.
            for index, reason in sorted(named.items()):
                report.refuse(RefusedDocument(file_name, batch.number(index), _short(reason)))
            report.retried_batches += 1
            rest = batch.without(set(named))
            return load_batch_isolating(loader, rest, file_name, report) if rest.lines else 0
        if len(batch.lines) == 1:
            report.refuse(RefusedDocument(file_name, batch.number(0), _short(str(refusal))))
            return 0
    report.retried_batches += 1
    left, right = batch.split()
    return load_batch_isolating(loader, left, file_name, report) + load_batch_isolating(
        loader, right, file_name, report
    )


# Compressed files the engines' own readers open by themselves: they recognise the compression
# by the file name (DuckDB's read_ndjson_objects, ClickHouse's FROM INFILE), so only a name
# that says what the bytes are qualifies.
NATIVE_COMPRESSED_SUFFIXES = {"gzip": (".gz", ".gzip"), "zstd": (".zst", ".zstd")}


_NOT_AN_OBJECT_START = re.compile(rb"\n[^{]")


def plain_file_documents(path: Path) -> int | None:
    """The number of lines of an ndjson file when it is safe to hand the whole file to an
    engine's own reader: plain, or gzip/zstd named as such; no CR, and every line starting
    with '{' (so no blank line: each line is then one document, exactly as the batch path
    would count it). None otherwise -- anything unusual just takes the batch path. Byte scans
    at C speed (count, find, one regex for a newline not followed by '{'): ~0.1 s per 500 MB,
    plus the decompression of a compressed file (streamed, no copy on disk)."""
    compression = compression_of(path)
    if compression != "none" and not path.name.endswith(NATIVE_COMPRESSED_SUFFIXES.get(compression, ("\0",))):
        return None
    lines, line_starts_next = 0, True
    for chunk in iter_decompressed(path, 16 << 20):
        if not chunk:
            continue
        if b"\r" in chunk or (line_starts_next and chunk[0] != OBJECT_START):
            return None
        if _NOT_AN_OBJECT_START.search(chunk):
            return None
        lines += chunk.count(b"\n")
        line_starts_next = chunk[-1] == 0x0A
    if not line_starts_next:
        lines += 1  # a last line without a newline
    return lines or None


def load_whole_file(
    loader: Loader,
    path: Path,
    report: LoadReport,
    on_progress: Callable[[int], None] | None,
    known_documents: int | None = None,
) -> bool:
    """Try the loader's native whole-file paths (the one that skips and names refused
    documents first); False means: send this file in batches. `known_documents`: the file's
    line count when it is known that every line is a document starting with '{' (a file the
    generator wrote, byte for byte): no scan of the file then."""
    if not loader.takes_whole_files():
        return False  # (a batch-only loader: the scan would be wasted, ~0.8 s per 500 MB)
    documents = known_documents or plain_file_documents(path)
    if documents is None:
        return False
    try:
        refused = loader.load_file_skipping(path, documents)
        if refused is None:
            if not loader.load_file(path, documents):
                return False
            refused = {}
    except BatchRejected as refusal:
        report.whole_file_refusals += 1
        log.info("%s refused as a whole (%s); loading it in batches", path.name, refusal)
        return False
    for line, reason in sorted(refused.items()):
        report.refuse(RefusedDocument(path.name, line, _short(reason)))
    report.offered += documents
    report.batches += 1
    if on_progress:
        on_progress(documents)
    return True


def load_file_in_batches(
    loader: Loader, path: Path, batch_size: int, report: LoadReport, on_progress: Callable[[int], None] | None
) -> None:
    not_objects = report.not_objects
    for batch in batches(path, batch_size, report):
        report.offered += len(batch.lines)
        report.batches += 1
        load_batch_isolating(loader, batch, path.name, report)
        if on_progress:
            # lines refused as non-objects while the batch was read count as offered
            on_progress(len(batch.lines) + report.not_objects - not_objects)
            not_objects = report.not_objects
    if on_progress and report.not_objects != not_objects:
        on_progress(report.not_objects - not_objects)  # after the last batch


def load_file_group(
    loader: Loader,
    paths: list[Path],
    report: LoadReport,
    on_progress: Callable[[int], None] | None,
    known_documents: dict[str, int | None],
) -> bool:
    """Several whole files in one statement (``Loader.files_per_statement``), when each has a
    known line count; False (nothing kept) means: take them one by one."""
    for path in paths:
        if path.name not in known_documents:
            # (remembered: a file taken alone after all is not scanned twice)
            known_documents[path.name] = plain_file_documents(path)
    documents = [known_documents[path.name] for path in paths]
    if None in documents:
        return False
    counts = [int(n) for n in documents if n is not None]
    try:
        refused = loader.load_files_skipping(paths, counts)
    except BatchRejected as refusal:
        log.info(
            "%s refused as a group (%s); loading them one by one", ", ".join(p.name for p in paths), refusal
        )
        return False
    if refused is None:
        return False
    for path, reasons, lines in zip(paths, refused, counts, strict=True):
        for line, reason in sorted(reasons.items()):
            report.refuse(RefusedDocument(path.name, line, _short(reason)))
        report.offered += lines
        report.batches += 1
        if on_progress:
            on_progress(lines)
    return True


def load_files(
    loader: Loader,
    files: list[Path],
    batch_size: int,
    on_progress: Callable[[int], None] | None = None,
    refusal_log: TextSink | None = None,
    on_file: Callable[[int, int, Path], None] | None = None,
    report: LoadReport | None = None,
    on_committed: Callable[[list[Path], LoadReport], None] | None = None,
    known_documents: dict[str, int] | None = None,
) -> LoadReport:
    """Load every file through `loader`, each as one unit (``begin_file``/``commit_file``),
    or ``loader.files_per_statement`` files at a time where the loader takes whole files in
    one statement; `on_progress(n)` is called with lines offered, `on_file(done, total,
    path)` before each unit (the live line shows files done/total), `on_committed(paths,
    report)` after each unit is committed (the checkpoint of a resumable load). A resumed
    load passes the `report` of the files already committed and only the files still to
    load. `known_documents`: file name -> lines, for files known to hold one document
    starting with '{' per line (see :func:`load_whole_file`)."""
    report = report or LoadReport()
    report.refusal_log = refusal_log
    known: dict[str, int | None] = dict(known_documents or {})
    started = time.perf_counter() - report.seconds
    per_statement = max(1, loader.files_per_statement) if loader.takes_whole_files() else 1
    done = 0
    while done < len(files):
        group = files[done : done + per_statement]
        if on_file:
            on_file(done, len(files), group[0])
        loader.begin_file(group[0].name)
        if len(group) == 1 or not load_file_group(loader, group, report, on_progress, known):
            group = group[:1]
            path = group[0]
            if not load_whole_file(loader, path, report, on_progress, known.get(path.name)):
                load_file_in_batches(loader, path, batch_size, report, on_progress)
        loader.commit_file()
        report.seconds = time.perf_counter() - started
        if on_committed:
            on_committed(group, report)
        done += len(group)
    loader.close()
    report.seconds = time.perf_counter() - started
    return report


@dataclass
class LoadEnd:
    """What a load ends with: the finishing steps' time, the system's own count, its sizes,
    and a warning when the count is not what it accepted."""

    finish_seconds: float
    count: int
    storage: StorageSize
    warning: str | None


def end_load(system: AnalyticsAdapter, report: LoadReport) -> LoadEnd:
    """After the last batch: the system's finishing steps (index builds, merges,
    checkpoints: part of the load time), its count and sizes; then the parent's handles are
    released for the query workers. Shared by the workloads that load through the analytics
    adapters."""
    started = time.perf_counter()
    system.finish_load()
    finish_seconds = time.perf_counter() - started
    count = system.count()
    storage = system.storage()
    system.release()
    accepted = report.offered - report.refused_count
    warning = (
        None
        if count == accepted
        else f"the system counts {count} documents but accepted {accepted} of {report.offered}"
    )
    return LoadEnd(finish_seconds, count, storage, warning)


def _short(message: str, limit: int = 300) -> str:
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 1] + "…"
