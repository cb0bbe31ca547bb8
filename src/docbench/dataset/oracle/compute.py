"""The answers of a list of data files: one partial per file, from the cache or scanned
(in parallel), merged and finalized."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from docbench.core.jsontypes import JsonArray, JsonObject
from docbench.dataset.oracle.compute_log import ComputeLog
from docbench.dataset.oracle.document import finalize
from docbench.dataset.oracle.parallel import execute
from docbench.dataset.oracle.partial_cache import FileKey, PartialCache, oracle_version
from docbench.dataset.oracle.partials import Partial
from docbench.dataset.oracle.tasks import Result, plan_tasks
from docbench.dataset.reader import known_sha256, remember_sha256, sha_cache_key


class _Merger:
    """Merges the results of one computation's tasks as they come: the pieces of a file
    (its byte ranges) into its partial, which is cached and merged into the total once
    every piece and the file's sha256 are in."""

    def __init__(
        self,
        todo: list[Path],
        tasks_left: Counter[str],
        keys: dict[str, FileKey],
        shas: dict[str, str],
        total: Partial,
        cache: PartialCache | None,
        log: ComputeLog,
    ) -> None:
        self.by_path = {str(f): f for f in todo}
        self.tasks_left = tasks_left  # scan tasks not done yet, per file
        self.keys = keys
        self.shas = shas
        self.total = total
        self.cache = cache
        self.log = log
        self.pieces: dict[str, Partial] = {}

    def __call__(self, result: Result) -> None:
        f = self.by_path[result[1]]
        if result[0] == "sha":
            self.log.hashed.append(f.name)
            self.shas[f.name] = result[2]
            remember_sha256(f, result[2], self.keys[f.name])
        else:
            part = result[2]
            if result[3] is not None:
                self.shas[f.name] = result[3]
                remember_sha256(f, result[3], self.keys[f.name])
            if f.name in self.pieces:
                self.pieces[f.name].merge(part)
            else:
                self.pieces[f.name] = part
            self.tasks_left[result[1]] -= 1
        if not self.tasks_left[result[1]] and f.name in self.shas and f.name in self.pieces:
            self._file_done(f)

    def _file_done(self, f: Path) -> None:
        part = self.pieces.pop(f.name)
        if self.cache is not None:
            self.cache.save(f, self.keys[f.name], self.shas[f.name], part)
        self.log.scanned.append(f.name)
        self.log.scanned_documents += part.documents
        self.total.merge(part)


def _known_shas(
    todo: list[Path],
    keys: dict[str, FileKey],
    cache: PartialCache | None,
    shas: dict[str, str],
    log: ComputeLog,
) -> None:
    """The sha256 of the files to scan that this process or the cache already knows."""
    for f in todo:
        sha = known_sha256(f, keys[f.name])
        if sha is None and cache is not None:
            sha = cache.recorded_sha(f, keys[f.name], log)
        if sha is not None:
            shas[f.name] = sha


def _scan(
    todo: list[Path],
    jobs: int,
    progress: Callable[[int], None] | None,
    keys: dict[str, FileKey],
    shas: dict[str, str],
    total: Partial,
    cache: PartialCache | None,
    log: ComputeLog,
) -> None:
    """Scan the files without a cached partial (hashing those whose sha256 is not known)
    into ``total``."""
    for f in todo:
        # An unreadable file is named here, by this process, before any worker starts
        # (a worker's failure would name its own executable, not the file).
        with open(f, "rb"):
            pass
    _known_shas(todo, keys, cache, shas, log)
    tasks = plan_tasks(todo, jobs, {f.name for f in todo if f.name not in shas})
    tasks_left = Counter(t[1] for t in tasks if t[0] == "scan")
    merger = _Merger(todo, tasks_left, keys, shas, total, cache, log)
    execute(tasks, jobs, merger, progress, log)


def compute_answers(
    files: list[Path],
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
    *,
    cache: PartialCache | None = None,
    refresh: bool = False,
    log: ComputeLog | None = None,
) -> JsonObject:
    """The canonical answer document for these data files (see :mod:`.document`).

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
        _scan(todo, jobs, progress, keys, shas, total, cache, log)
    if cache is not None:
        cache.prune(set(names))
    file_entries: JsonArray = [
        {"name": f.name, "sha256": shas[f.name], "size": keys[f.name][1], "mtime_ns": keys[f.name][2]}
        for f in files
    ]
    doc = finalize(total, file_entries)
    doc["oracle"] = oracle_version()  # answers.json of another version is not used
    doc["compute_seconds"] = round(time.perf_counter() - started, 3)
    return doc
