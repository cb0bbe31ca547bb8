"""The per-file partials of a dataset, cached: ``.oracle-partials/<data file name>.npz``.

Beside ``answers.json`` (see :func:`docbench.paths.cache_dir_for`: next to the data only
when docbench generated the dataset, else under docbench's home). One partial aggregate per
data file (counts, hour counts, the packed did sets; numpy arrays, no pickles), valid while
that file has the recorded name and sha256 and the oracle is the same version (a digest of
this package's source). Adding files to a dataset reads only the new files; removing one
reads nothing (its partial is dropped); a changed file is read again. A file whose size and
mtime are those recorded is not hashed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib.npyio import NpzFile

from docbench.dataset.oracle.compute_log import ComputeLog
from docbench.dataset.oracle.partials import Partial
from docbench.dataset.oracle.semantics import HOURS
from docbench.dataset.reader import file_sha256, remember_sha256
from docbench.paths import cache_dir_for

PARTIALS_DIR = ".oracle-partials"  # in the directory answers.json goes to (cache_dir_for)
PARTIAL_FORMAT = 1
FileKey = tuple[str, int, int]  # (path, size, mtime_ns): see reader.sha_cache_key
Meta = dict[str, Any]  # a stored partial's identity and counts (JSON)

_VERSION: str | None = None


def oracle_version() -> str:
    """A digest of this package's source: partials that another version computed are not
    reused (any change to the oracle might change them)."""
    global _VERSION
    if _VERSION is None:
        digest = hashlib.sha256()
        for source in sorted(Path(__file__).parent.glob("*.py")):
            digest.update(source.name.encode() + b"\0" + source.read_bytes())
        _VERSION = digest.hexdigest()[:16]
    return _VERSION


def directory_writable(path: Path) -> bool:
    """Writable for us AND not marked read-only: root could write into a ``r-x`` directory
    (such as a shared, read-only dataset), but docbench leaves it alone."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return bool(mode & 0o222) and os.access(path, os.W_OK)


# -- a partial as arrays (np.savez) -----------------------------------------------------------


def partial_arrays(part: Partial, meta: Meta) -> dict[str, np.ndarray]:
    """A partial as named arrays for ``np.savez`` (no pickles: loading runs no code).
    ``meta`` (the file's identity) is stored with the counts as JSON."""
    part.flush()
    arrays: dict[str, np.ndarray] = {}
    colls = []
    for i, (coll, st) in enumerate(part.collections.items()):
        arrays[f"c{i}_hi"], arrays[f"c{i}_lo"] = st.distinct.arrays()
        colls.append([coll, st.documents, st.creates, st.hours, sorted(st.distinct.other)])
    for name, a in zip(("p_hi", "p_lo", "p_mn", "p_mx"), part.posts.runs.arrays(), strict=True):
        arrays[name] = a
    posts = part.posts
    others = [[d, t, posts.maxs[d]] for d, t in posts.mins.items()]
    doc = dict(
        meta,
        lines=part.lines,
        documents=part.documents,
        invalid=part.invalid,
        empty=part.empty,
        colls=colls,
        post_others=others,
    )
    # ensure_ascii: lone surrogates (valid JSON escapes in the data) survive as escapes
    arrays["meta"] = np.frombuffer(json.dumps(doc, ensure_ascii=True).encode(), np.uint8)
    return arrays


def _array(arrays: Mapping[str, np.ndarray], name: str, dtype: type[np.generic]) -> np.ndarray:
    a = arrays[name]
    if a.dtype != dtype or a.ndim != 1:
        raise ValueError(f"{name}: not a 1-d {dtype} array")
    return a


def partial_from_arrays(doc: Meta, arrays: Mapping[str, np.ndarray]) -> Partial:
    """The partial :func:`partial_arrays` stored (``doc``: its meta, ``arrays``: name ->
    array); ValueError if the arrays are not what it stores."""
    part = Partial(lines=doc["lines"], documents=doc["documents"], invalid=doc["invalid"], empty=doc["empty"])
    for i, (coll, n_all, n_creates, hours, other) in enumerate(doc["colls"]):
        st = part.collection(coll)
        st.documents, st.creates = n_all, n_creates
        hours_expected = None if st.hours is None else HOURS + 1  # (Q3's collections only)
        if (None if hours is None else len(hours)) != hours_expected:
            raise ValueError("hour counts do not fit the collection")
        st.hours = hours
        hi, lo = _array(arrays, f"c{i}_hi", np.uint64), _array(arrays, f"c{i}_lo", np.uint64)
        if len(hi) != len(lo):
            raise ValueError("packed dids of different lengths")
        st.distinct.push_sorted((hi, lo))
        st.distinct.other = set(other)
    runs = (
        _array(arrays, "p_hi", np.uint64),
        _array(arrays, "p_lo", np.uint64),
        _array(arrays, "p_mn", np.int64),
        _array(arrays, "p_mx", np.int64),
    )
    if len({len(a) for a in runs}) != 1:
        raise ValueError("post arrays of different lengths")
    part.posts.runs.push_sorted(runs)
    for did, t0, t1 in doc["post_others"]:
        part.posts.add_other(did, t0, t1)
    return part


# -- the cache --------------------------------------------------------------------------------


class PartialCache:
    """The per-file partials of one dataset: ``<dir>/<data file name>.npz``. A partial is
    valid while its file has the recorded name and sha256 and this package's version; a
    file with the recorded size and mtime is not hashed again. Written atomically; never
    where docbench may not write (see :func:`directory_writable`)."""

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
        writable = directory_writable(directory) if directory.is_dir() else (directory_writable(base))
        return cls(directory, writable)

    def path(self, name: str) -> Path:
        return self.dir / f"{name}.npz"

    def _open(self, name: str) -> tuple[Meta, NpzFile] | None:
        """``(meta, arrays)`` of a stored partial of this version, or None."""
        try:
            arrays = np.load(self.path(name), allow_pickle=False)
        except (OSError, ValueError):
            return None
        if not isinstance(arrays, NpzFile):  # (a single array saved under that name)
            return None
        try:
            meta = json.loads(bytes(arrays["meta"]))
        except (KeyError, OSError, ValueError):
            arrays.close()
            return None
        if (
            not isinstance(meta, dict)
            or meta.get("format") != PARTIAL_FORMAT
            or meta.get("oracle") != oracle_version()
            or meta.get("name") != name
        ):
            arrays.close()
            return None
        return meta, arrays

    def recorded_sha(self, path: Path, key: FileKey) -> str | None:
        """The sha256 recorded for this file if its size and mtime are still those."""
        opened = self._open(path.name)
        if opened is None:
            return None
        meta, arrays = opened
        arrays.close()
        if (meta.get("size"), meta.get("mtime_ns")) == key[1:]:
            return meta.get("sha256")
        return None

    def load(self, path: Path, key: FileKey, log: ComputeLog) -> tuple[Partial, str] | None:
        """The cached partial of a file and its sha256, if valid (the file is hashed when
        its mtime changed: a new mtime is recorded when the content is the same)."""
        opened = self._open(path.name)
        if opened is None:
            return None
        meta, arrays = opened
        with arrays:
            if meta.get("size") != key[1] or not isinstance(meta.get("sha256"), str):
                return None
            sha: str = meta["sha256"]
            if meta.get("mtime_ns") != key[2]:  # touched or copied: is it the same content?
                log.hashed.append(path.name)
                if file_sha256(path) != sha:
                    return None
            try:
                part = partial_from_arrays(meta, arrays)
            except (KeyError, TypeError, ValueError, OSError):
                return None
        remember_sha256(path, sha, key)
        if meta.get("mtime_ns") != key[2]:
            self.save(path, key, sha, part)  # record the new mtime: no hashing next time
        return part, sha

    def save(self, path: Path, key: FileKey, sha: str, part: Partial) -> None:
        if not self.writable:
            return
        meta = {
            "format": PARTIAL_FORMAT,
            "oracle": oracle_version(),
            "name": path.name,
            "sha256": sha,
            "size": key[1],
            "mtime_ns": key[2],
        }
        target = self.path(path.name)
        tmp = self.dir / f".{path.name}.{os.getpid()}.tmp.npz"
        try:
            self.dir.mkdir(exist_ok=True)
            with open(tmp, "wb") as fh:
                np.savez(fh, allow_pickle=False, **partial_arrays(part, meta))
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
