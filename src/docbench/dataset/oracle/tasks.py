"""The oracle's units of work: scan a file (or a byte range of one), or hash a file.

Tasks and their results are tuples (sent between processes as they are); the named tuples
below are their shapes. A task scans through the native scanner when it is built
(``docbench-scan``, Rust; see :mod:`docbench.dataset.native_scan`), which aggregates the
lines it can judge exactly (valid UTF-8 that serde_json reads as an object with the five
fields of the right types, each once) and hands every other line back to the Python scan
(:mod:`.scan`), where the semantics live; otherwise the Python scan reads everything.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal, NamedTuple

from docbench.dataset import native_scan
from docbench.dataset.oracle.partials import Partial
from docbench.dataset.oracle.scan import scan_blocks, scan_lines
from docbench.dataset.oracle.semantics import HOURS, POST
from docbench.dataset.reader import (
    compression_of,
    file_sha256,
    iter_blocks,
    remember_sha256,
    sha_cache_key,
    split_ranges,
)

SPLIT_MIN_BYTES = 16 << 20  # uncompressed files larger than this may be split among jobs
READ_BYTES = 4 << 20  # bytes read per block
HASH_SPEEDUP = 8  # hashing a file is ~8x faster than scanning it (to weigh the tasks)


class ScanTask(NamedTuple):
    kind: Literal["scan"]
    path: str
    start: int
    end: int | None  # None: to the end of the file
    want_sha: bool  # hash the file as it is read (whole files only)


class HashTask(NamedTuple):
    kind: Literal["hash"]
    path: str


class ShaResult(NamedTuple):
    kind: Literal["sha"]
    path: str
    sha: str


class PartResult(NamedTuple):
    kind: Literal["part"]
    path: str
    partial: Partial
    sha: str | None


Task = ScanTask | HashTask
Result = ShaResult | PartResult


def plan_tasks(files: list[Path], jobs: int, need_sha: set[str] | None = None) -> list[Task]:
    """Whole files (hashed as they are read when their sha256 is not known yet), except big
    uncompressed files that are cut into byte ranges to keep ``jobs`` processes busy; such a
    file is hashed by a task of its own if need be. Biggest first, for better balance."""
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
            tasks.extend((b - a, ScanTask("scan", str(p), a, b, False)) for a, b in ranges)
            if p.name in need_sha:
                tasks.append((size // HASH_SPEEDUP, HashTask("hash", str(p))))
        else:
            tasks.append((size, ScanTask("scan", str(p), 0, None, p.name in need_sha)))
    tasks.sort(key=lambda t: -t[0])
    return [t for _, t in tasks]


def run_task(task: Task, progress: Callable[[int], None] | None = None) -> Result:
    """A task through the Python scan, in this process."""
    if task[0] == "hash":
        return ShaResult("sha", task[1], file_sha256(Path(task[1])))
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
        return PartResult("part", path_s, part, sha)
    scan_blocks(iter_blocks(path, start=start, end=end, size=READ_BYTES), part, progress)
    return PartResult("part", path_s, part, None)


def native_partial(result: native_scan.NativeResult) -> Partial:
    """The partial of a native scan: its aggregates, then the lines it handed back, through
    the Python scan (see :mod:`docbench.dataset.native_scan`)."""
    header = result.header
    part = Partial(lines=header["lines"], documents=header["documents"])
    for (coll, n_all, n_creates, hours, _, others), hi, lo in result.colls:
        st = part.collection(coll)
        st.documents, st.creates = n_all, n_creates
        if st.hours is not None:
            st.hours[:HOURS] = hours  # (every time it took is an i64: none without an hour)
        if len(hi):
            st.distinct.push_sorted((hi, lo))
        st.distinct.other.update(others)
    if header["no_commit"]:
        part.collection(None).documents += header["no_commit"]
    if len(result.posts[0]):
        part.posts.runs.push_sorted(result.posts)
    for did, t0, t1 in header["post_others"]:
        part.posts.add_other(did, t0, t1)
    scan_lines(result.handed_back, part)
    part.flush()
    return part


def run_native_task(binary: Path, task: Task) -> tuple[Result, int | None]:
    """:func:`run_task` through the native scanner, plus the scanner's peak RSS (bytes, or
    None); the Python scan when the file's compression is not one it reads or the scanner
    fails (which then names the problem)."""
    if task[0] == "hash":
        return run_task(task), None
    _, path_s, start, end, want_sha = task
    path = Path(path_s)
    compression = compression_of(path)
    if compression not in native_scan.COMPRESSIONS:
        return run_task(task), None
    key = sha_cache_key(path) if want_sha else None
    try:
        result = native_scan.scan_file(
            binary, path, compression, POST, start=start, end=end, want_sha=want_sha
        )
    except native_scan.NativeScanError:
        return run_task(task), None
    sha = result.header["sha256"]
    if sha is not None:
        remember_sha256(path, sha, key)
    return PartResult("part", path_s, native_partial(result), sha), result.header.get("peak_rss")
