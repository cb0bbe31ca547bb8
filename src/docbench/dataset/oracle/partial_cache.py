"""The per-file partials of a dataset, cached: ``.oracle-partials/<data file name>.npz``.

Beside ``answers.json`` (see :func:`docbench.core.paths.cache_dir_for`: next to the data only
when docbench generated the dataset, else under docbench's home). One partial aggregate per
data file (counts, hour counts, the packed did sets; numpy arrays, no pickles), valid while
that file has the recorded name and sha256 and the oracle is the same version (a digest of
this package's source). Adding files to a dataset reads only the new files; removing one
reads nothing (its partial is dropped); a changed file is read again. A file whose size and
mtime are those recorded is not hashed again.

Each partial carries its own proof: the SHA-256 of its metadata (the data file's name,
sha256, size and mtime, the oracle's version) and of every array, stored in the metadata. A
partial that cannot be read (truncated, overwritten), whose checksum does not match its
content (edited, damaged), that an older docbench wrote without a checksum or that another
version of the oracle computed is not used: its file is scanned again, and the reason is
recorded in the :class:`ComputeLog` for the caller to say.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
from numpy.lib.npyio import NpzFile

from docbench.core.jsontypes import JsonArray, JsonObject, as_array, as_int, as_str, optional_str
from docbench.core.paths import cache_dir_for
from docbench.dataset.oracle.compute_log import ComputeLog
from docbench.dataset.oracle.partials import Partial
from docbench.dataset.oracle.semantics import HOURS
from docbench.dataset.reader import file_sha256, remember_sha256

PARTIALS_DIR = ".oracle-partials"  # in the directory answers.json goes to (cache_dir_for)
PARTIAL_FORMAT = 2  # 2: with a checksum ("checksum" in the metadata)
FileKey = tuple[str, int, int]  # (path, size, mtime_ns): see reader.sha_cache_key
Meta = JsonObject  # a stored partial's identity and counts (JSON)

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


def another_oracle(theirs: object) -> str:
    """Why a cache that another version of the oracle computed is not used."""
    return f"computed by another version of the oracle ({theirs}; this one is {oracle_version()})"


def directory_writable(path: Path) -> bool:
    """Writable for us AND not marked read-only: root could write into a ``r-x`` directory
    (such as a shared, read-only dataset), but docbench leaves it alone."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return bool(mode & 0o222) and os.access(path, os.W_OK)


# -- a partial as arrays (np.savez) -----------------------------------------------------------


class UnusablePartial(Exception):
    """A stored partial that must not be used; the message says why (for the user)."""


def canonical_json(value: object) -> bytes:
    """One text for one JSON value, whatever the key order or spacing it was read with."""
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode()


def partial_checksum(meta: Meta, arrays: Iterable[tuple[str, np.ndarray]]) -> str:
    """SHA-256 of a partial's metadata (without its checksum) and of its arrays (name, dtype,
    shape, bytes), in name order."""
    digest = hashlib.sha256(canonical_json({k: v for k, v in meta.items() if k != "checksum"}))
    for name, a in sorted(arrays, key=lambda item: item[0]):
        digest.update(f"\0{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        digest.update(np.ascontiguousarray(a).data)
    return digest.hexdigest()


def partial_arrays(part: Partial, meta: Meta) -> dict[str, np.ndarray]:
    """A partial as named arrays for ``np.savez`` (no pickles: loading runs no code).
    ``meta`` (the file's identity) is stored with the counts as JSON."""
    part.flush()
    arrays: dict[str, np.ndarray] = {}
    colls: JsonArray = []
    for i, (coll, st) in enumerate(part.collections.items()):
        arrays[f"c{i}_hi"], arrays[f"c{i}_lo"] = st.distinct.arrays()
        hours: JsonArray | None = None if st.hours is None else list(st.hours)
        colls.append([coll, st.documents, st.creates, hours, list(sorted(st.distinct.other))])
    for name, a in zip(("p_hi", "p_lo", "p_mn", "p_mx"), part.posts.runs.arrays(), strict=True):
        arrays[name] = a
    posts = part.posts
    others: JsonArray = [[d, t, posts.maxs[d]] for d, t in posts.mins.items()]
    doc: Meta = {
        **meta,
        "lines": part.lines,
        "documents": part.documents,
        "invalid": part.invalid,
        "empty": part.empty,
        "colls": colls,
        "post_others": others,
    }
    doc["checksum"] = partial_checksum(doc, arrays.items())
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
    part = Partial(
        lines=as_int(doc["lines"], "lines"),
        documents=as_int(doc["documents"], "documents"),
        invalid=as_int(doc["invalid"], "invalid"),
        empty=as_int(doc["empty"], "empty"),
    )
    for i, entry in enumerate(as_array(doc["colls"], "colls")):
        coll, n_all, n_creates, hours, other = as_array(entry, "colls[]")
        st = part.collection(optional_str(coll, "collection"))
        st.documents, st.creates = as_int(n_all, "documents"), as_int(n_creates, "creates")
        hours_expected = None if st.hours is None else HOURS + 1  # (Q3's collections only)
        counts = None if hours is None else [as_int(n, "hours[]") for n in as_array(hours, "hours")]
        if (None if counts is None else len(counts)) != hours_expected:
            raise ValueError("hour counts do not fit the collection")
        st.hours = counts
        hi, lo = _array(arrays, f"c{i}_hi", np.uint64), _array(arrays, f"c{i}_lo", np.uint64)
        if len(hi) != len(lo):
            raise ValueError("packed dids of different lengths")
        st.distinct.push_sorted((hi, lo))
        st.distinct.other = {as_str(did, "did") for did in as_array(other, "dids")}
    runs = (
        _array(arrays, "p_hi", np.uint64),
        _array(arrays, "p_lo", np.uint64),
        _array(arrays, "p_mn", np.int64),
        _array(arrays, "p_mx", np.int64),
    )
    if len({len(a) for a in runs}) != 1:
        raise ValueError("post arrays of different lengths")
    part.posts.runs.push_sorted(runs)
    for row in as_array(doc["post_others"], "post_others"):
        did, t0, t1 = as_array(row, "post_others[]")
        part.posts.add_other(optional_str(did, "did"), as_int(t0, "first"), as_int(t1, "last"))
    return part


def read_partial(path: Path) -> tuple[Meta, dict[str, np.ndarray]]:
    """The metadata and arrays of a stored partial, unchecked. FileNotFoundError when there
    is none; UnusablePartial when the file is not one (truncated, overwritten...)."""
    try:
        stored = np.load(path, allow_pickle=False)
        if not isinstance(stored, NpzFile):
            raise ValueError("a single array, not an archive of arrays")
        with stored:
            arrays = {name: stored[name] for name in stored.files}
        meta = json.loads(bytes(arrays.pop("meta")))
        if not isinstance(meta, dict):
            raise ValueError("its metadata is not a JSON object")
    except FileNotFoundError:
        raise
    # Whatever its bytes are (zipfile, zlib, numpy and json each raise their own errors on
    # a truncated or overwritten file), a damaged cache file must never stop a run.
    except Exception as error:
        detail = f"{type(error).__name__}: {error}"
        raise UnusablePartial(f"not readable: truncated or not a partial ({detail})") from None
    return meta, arrays


def check_partial(meta: Meta, arrays: Mapping[str, np.ndarray], name: str) -> None:
    """UnusablePartial unless the partial is intact (its checksum matches its metadata and
    arrays), of this format, computed by this version of the oracle, for the data file
    ``name``."""
    if not isinstance(meta.get("checksum"), str):
        raise UnusablePartial("it has no checksum (written by an older docbench)")
    if meta["checksum"] != partial_checksum(meta, arrays.items()):
        raise UnusablePartial("its checksum does not match its content (edited or damaged)")
    if meta.get("format") != PARTIAL_FORMAT:
        raise UnusablePartial(f"format {meta.get('format')!r}, not {PARTIAL_FORMAT} (another docbench)")
    if meta.get("oracle") != oracle_version():
        raise UnusablePartial(another_oracle(meta.get("oracle")))
    if meta.get("name") != name:
        raise UnusablePartial(f"made for another data file ({meta.get('name')!r})")


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

    def _open(self, name: str, log: ComputeLog) -> tuple[Meta, dict[str, np.ndarray]] | None:
        """``(meta, arrays)`` of the stored partial of a data file, checked (see
        :func:`check_partial`); None when there is none or it must not be used (the reason
        goes to ``log``)."""
        path = self.path(name)
        try:
            meta, arrays = read_partial(path)
            check_partial(meta, arrays, name)
        except FileNotFoundError:
            return None
        except UnusablePartial as error:
            log.partial_not_used(str(path), name, str(error))
            return None
        return meta, arrays

    def recorded_sha(self, path: Path, key: FileKey, log: ComputeLog) -> str | None:
        """The sha256 recorded for this file if its size and mtime are still those."""
        opened = self._open(path.name, log)
        if opened is None:
            return None
        meta = opened[0]
        if (meta.get("size"), meta.get("mtime_ns")) == key[1:]:
            return optional_str(meta.get("sha256"), "sha256")
        return None

    def load(self, path: Path, key: FileKey, log: ComputeLog) -> tuple[Partial, str] | None:
        """The cached partial of a file and its sha256, if valid (the file is hashed when
        its mtime changed: a new mtime is recorded when the content is the same)."""
        opened = self._open(path.name, log)
        if opened is None:
            return None
        meta, arrays = opened
        sha = meta.get("sha256")
        if meta.get("size") != key[1] or not isinstance(sha, str):
            return None
        if meta.get("mtime_ns") != key[2]:  # touched or copied: is it the same content?
            log.hashed.append(path.name)
            if file_sha256(path) != sha:
                return None
        try:
            part = partial_from_arrays(meta, arrays)
        except (KeyError, IndexError, TypeError, ValueError) as error:
            reason = f"not a partial of this format ({type(error).__name__}: {error})"
            log.partial_not_used(str(self.path(path.name)), path.name, reason)
            return None
        remember_sha256(path, sha, key)
        if meta.get("mtime_ns") != key[2]:
            self.save(path, key, sha, part)  # record the new mtime: no hashing next time
        return part, sha

    def save(self, path: Path, key: FileKey, sha: str, part: Partial) -> None:
        if not self.writable:
            return
        meta: Meta = {
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
