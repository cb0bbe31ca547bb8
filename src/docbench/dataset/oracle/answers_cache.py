"""The answers of a dataset directory, cached in ``answers.json`` (and in this process).

``answers.json`` goes next to the data only when docbench generated the dataset (see
:func:`docbench.core.paths.cache_dir_for`), else under docbench's home, so that a user's data
directory is never written. It is used only when intact (its checksum matches its content,
see :mod:`.document`) and computed by this version of the oracle; then it is valid while the
data files' names and sha256 match its ``files``, and a file whose size and mtime are those
recorded is not hashed again (the checksum vouches for them: validating the cache reads no
data). One that is not intact or of another oracle is named in the :class:`ComputeLog`'s
notes and recomputed. The per-file partials (:mod:`.partial_cache`) go to the same place.
``--refresh`` ignores both.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from docbench.core.jsontypes import JsonObject, as_array, as_object, as_str, is_object
from docbench.core.paths import cache_dir_for
from docbench.dataset.oracle.compute import compute_answers
from docbench.dataset.oracle.compute_log import ComputeLog
from docbench.dataset.oracle.document import FORMAT, answers_checksum, dumps_answers
from docbench.dataset.oracle.partial_cache import (
    PartialCache,
    another_oracle,
    directory_writable,
    oracle_version,
)
from docbench.dataset.reader import dataset_files, file_sha256, known_sha256, remember_sha256, sha_cache_key

ANSWERS_NAME = "answers.json"

Answers = JsonObject  # an answer document (document.py says its keys)
FilesKey = tuple[tuple[str, str], ...]  # (name, sha256) of each file

# Answers computed in this process, by their files: their sha256 are known, nothing is read.
_MEMO: dict[FilesKey, Answers] = {}


def _files_key(files: list[Path]) -> FilesKey:
    return tuple((f.name, file_sha256(f)) for f in files)


def _known_files_key(files: list[Path]) -> FilesKey | None:
    """``_files_key`` when every file's sha256 is known without reading it, else None."""
    key = []
    for f in files:
        sha = known_sha256(f)
        if sha is None:
            return None
        key.append((f.name, sha))
    return tuple(key)


def _doc_key(doc: Answers) -> FilesKey:
    entries = (as_object(f, "files[]") for f in as_array(doc.get("files", []), "files"))
    return tuple((as_str(f["name"], "files[].name"), as_str(f["sha256"], "files[].sha256")) for f in entries)


def answers_cache_path(data_dir: Path) -> Path:
    """Where the answers of a dataset directory are cached: ``answers.json`` in the directory
    when docbench generated it (its ``dataset.json`` is there), else in docbench's own cache,
    so that ``docbench run --data DIR`` never writes into a directory it does not own. The
    per-file partials go to the same place (``.oracle-partials/``)."""
    return cache_dir_for(Path(data_dir)) / ANSWERS_NAME


def _damage(doc: object) -> str | None:
    """Why an answer document read from answers.json is not what docbench wrote, or None."""
    if not isinstance(doc, dict):
        return "not an answer document"
    if not isinstance(doc.get("checksum"), str):
        return "it has no checksum (written by an older docbench)"
    if doc["checksum"] != answers_checksum(doc):
        return "its checksum does not match its content (edited or damaged)"
    return None


def _not_ours(doc: Answers) -> str | None:
    """Why an intact answer document is not this docbench's answers, or None."""
    if doc.get("format") != FORMAT:
        return f"format {doc.get('format')!r}, not {FORMAT} (another docbench)"
    if doc.get("oracle") != oracle_version():
        return another_oracle(doc.get("oracle"))
    return None


def _read_intact(data_dir: Path, log: ComputeLog) -> tuple[Answers | None, bool]:
    """``(answers.json's document if intact, whether it may be used)``: intact when its
    checksum matches its content, usable when this oracle computed it too. Why not goes to
    ``log.notes``."""
    path = answers_cache_path(data_dir)
    doc: Answers | None = None
    try:
        read = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, False
    except (OSError, ValueError) as error:  # (UnicodeDecodeError and JSONDecodeError too)
        problem: str | None = f"not readable as JSON, truncated or damaged ({error})"
    else:
        problem = _damage(read)
        if problem is None:
            doc = read
            problem = _not_ours(doc)
    if problem is not None:
        log.note(f"{path}: {problem}; recomputing the answers")
    return doc, problem is None


def read_cached_answers(data_dir: Path, log: ComputeLog | None = None) -> Answers | None:
    """The cached answers of a dataset directory, if there are any and they may be used: its
    checksum matches its content and this oracle computed them (why not: ``log.notes``)."""
    doc, usable = _read_intact(data_dir, log if log is not None else ComputeLog())
    return doc if usable else None


def _remember_recorded(doc: Answers, files: list[Path]) -> None:
    """Believe the sha256 recorded for a file whose size and mtime are still those."""
    entries = doc.get("files")
    if not isinstance(entries, list):
        return
    by_name = {f.name: f for f in files}
    for entry in entries:
        if not is_object(entry):
            continue
        name, sha = entry.get("name"), entry.get("sha256")
        f = by_name.get(name) if isinstance(name, str) else None
        if f is None or not isinstance(sha, str):
            continue
        key = sha_cache_key(f)
        if (entry.get("size"), entry.get("mtime_ns")) == key[1:]:
            remember_sha256(f, sha, key)


def _cache_valid(doc: Answers, files: list[Path]) -> bool:
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


def _store(data_dir: Path, doc: Answers) -> None:
    """Cache the answers if we may; a read-only place keeps them in memory only."""
    path = answers_cache_path(data_dir)
    with contextlib.suppress(OSError):  # (includes PermissionError from _write_atomic)
        if path.parent != Path(data_dir).resolve():  # docbench's cache: ours to create
            path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, dumps_answers(doc))


def _remembered(data_dir: Path, files: list[Path], single: bool) -> Answers | None:
    """Answers computed in this process for these files as they are, if any (with the
    files' current mtimes, put back into ``answers.json`` when it is missing or stale)."""
    key = _known_files_key(files) if _MEMO else None
    memo = _MEMO.get(key) if key is not None else None
    if memo is None:
        return None
    # the files were just hashed as they are now: record their current mtimes
    memo = dict(memo)
    memo["files"] = [
        {**as_object(entry, "files[]"), "size": file_key[1], "mtime_ns": file_key[2]}
        for entry, file_key in zip(as_array(memo["files"], "files"), map(sha_cache_key, files), strict=True)
    ]
    _MEMO[_doc_key(memo)] = memo
    if not single:
        _store(data_dir, memo)
    return memo


def load_or_compute(
    data_dir: Path,
    jobs: int = 1,
    refresh: bool = False,
    progress: Callable[[int], None] | None = None,
    log: ComputeLog | None = None,
) -> tuple[Answers, str]:
    """(answers, source) with source ``"answers.json"``, ``"memory"`` or ``"computed"``."""
    data_dir = Path(data_dir)
    files = dataset_files(data_dir)
    single = data_dir.is_file()
    log = log if log is not None else ComputeLog()
    intact, usable = (None, False) if single else _read_intact(data_dir, log)
    if not refresh:
        if intact is not None and usable and _cache_valid(intact, files):
            return intact, ANSWERS_NAME
        memo = _remembered(data_dir, files, single)
        if memo is not None:
            return memo, "memory"
    if intact is not None:  # its checksum vouches for the sha256 it records, whoever computed it
        _remember_recorded(intact, files)
    cache = None if single else PartialCache.for_dataset(data_dir)
    doc = compute_answers(files, jobs=jobs, progress=progress, cache=cache, refresh=refresh, log=log)
    _MEMO[_doc_key(doc)] = doc
    if not single:
        _store(data_dir, doc)
    return doc, "computed"


def load_or_compute_answers(data_dir: Path, jobs: int = 1, log: ComputeLog | None = None) -> Answers:
    """The answers for a dataset directory (or single file), from ``answers.json`` (see
    :func:`answers_cache_path`) when it is intact, of this oracle, and its files' names and
    sha256 match the data, else computed from the per-file partials (only files without a
    valid cached partial are read) and cached there (atomically; in memory only when that
    place is not writable or a single file was given). ``log.notes`` says which cache was
    not used, and why."""
    return load_or_compute(data_dir, jobs=jobs, log=log)[0]


def write_answers(data_dir: Path, jobs: int = 1) -> Path:
    """Compute the answers and write ``answers.json`` into the dataset directory (an explicit
    request, as ``docbench generate`` makes for the datasets it writes); files whose cached
    partial is still valid are not read again."""
    data_dir = Path(data_dir)
    if data_dir.is_file():
        raise ValueError("write_answers needs a dataset directory, not a file")
    doc = compute_answers(dataset_files(data_dir), jobs=jobs, cache=PartialCache.for_dataset(data_dir))
    _MEMO[_doc_key(doc)] = doc
    path = data_dir / ANSWERS_NAME
    _write_atomic(path, dumps_answers(doc))
    return path
