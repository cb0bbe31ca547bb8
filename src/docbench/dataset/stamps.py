"""Verification stamps: a data file that passed the full check is not read again while it is
unchanged since (:mod:`.verify` reads the rest).

After a file was read to its end and found whole, its stamp records what ``stat`` says of it
then -- size, mtime_ns, ctime_ns, inode, device -- with its SHA-256, its format, when it was
checked and the verifier's version, in ``.verified.json`` (hidden: never a data file) in the
dataset's cache directory (:func:`docbench.core.paths.cache_dir_for`; docbench's own cache when
that is a generated dataset's directory docbench may not write). A file whose five figures
all equal its stamp's is known unchanged since its check and is not read: a write, a
truncation, an append, a file renamed over it, ``touch -r`` and ``os.utime`` all set the
ctime to the current time, which no user can set back. Anything else means the full check of
the file: no stamp, another figure, a stamp file edited or damaged (its checksum covers its
content, as ``answers.json``'s does) or written by another verifier (then every file).

A file changed again within the timestamp granularity of its filesystem could keep its ctime
("racy git"): a file whose ctime is less than :data:`RECENT_NS` before its check began gets
no stamp (it is read again by the next run).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from docbench.core.jsontypes import JsonMapping, JsonObject
from docbench.core.paths import cache_dir_for, own_cache_dir_for

STAMPS_NAME = ".verified.json"
FORMAT = 1
WHOLE = "whole"  # the only verdict recorded: a damaged file is read again by every run
# Longer than the timestamp granularity of any filesystem a dataset is on (1 s for some):
# a change after the check then always lands in a later ctime.
RECENT_NS = 2_000_000_000


@dataclass(frozen=True)
class Identity:
    """What changes when a file's content can have changed (the ctime at least)."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int

    @classmethod
    def of(cls, st: os.stat_result) -> Identity:
        return cls(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


@dataclass(frozen=True)
class Stamp:
    """A file found whole by the full check, as it was then."""

    identity: Identity
    sha256: str
    compression: str  # "zstd", "gzip", "lz4", "none"
    checked_ns: int  # when its check began (wall clock)

    def to_json(self) -> JsonObject:
        return {
            **asdict(self.identity),
            "sha256": self.sha256,
            "compression": self.compression,
            "verdict": WHOLE,
            "checked_ns": self.checked_ns,
        }

    @classmethod
    def from_json(cls, entry: object) -> Stamp | None:
        """The stamp an entry of the file records, None for one of another shape."""
        if not isinstance(entry, dict) or entry.get("verdict") != WHOLE:
            return None
        try:
            identity = Identity(*(_integer(entry[name]) for name in Identity.__dataclass_fields__))
            return cls(
                identity, str(entry["sha256"]), str(entry["compression"]), _integer(entry["checked_ns"])
            )
        except (KeyError, TypeError):
            return None


def _integer(value: object) -> int:
    if type(value) is not int:
        raise TypeError(value)
    return value


def stamp_after_read(
    before: os.stat_result, after: os.stat_result, began_ns: int, sha256: str, compression: str
) -> Stamp | None:
    """The stamp of a file read whole between ``before`` and ``after`` (its stat when the read
    began and ended), None when it changed during the read or just before it."""
    identity = Identity.of(before)
    if identity != Identity.of(after) or began_ns - identity.ctime_ns < RECENT_NS:
        return None
    return Stamp(identity, sha256, compression, began_ns)


# -- the stamp file ---------------------------------------------------------------------------


def stamps_path(data: Path) -> Path:
    """``.verified.json`` in the dataset's cache directory, or in docbench's own cache when
    that is a generated dataset's directory docbench may not write."""
    place = cache_dir_for(Path(data))
    if place == Path(data).resolve() and not _writable(place):
        place = own_cache_dir_for(Path(data))
    return place / STAMPS_NAME


def _writable(directory: Path) -> bool:
    """Writable for us and not marked read-only (root may write into a ``r-x`` directory, but a
    dataset made read-only is left alone)."""
    try:
        mode = os.stat(directory).st_mode
    except OSError:
        return False
    return bool(mode & 0o222) and os.access(directory, os.W_OK)


def stamps_checksum(doc: JsonMapping) -> str:
    """SHA-256 of a stamp document without its ``checksum`` (key order and spacing aside)."""
    sealed = {key: value for key, value in doc.items() if key != "checksum"}
    return hashlib.sha256(json.dumps(sealed, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class StampFile:
    path: Path
    stamps: dict[str, Stamp]  # by file name
    problem: str | None  # why the file's stamps are not used (it exists but is not usable)


def read_stamps(data: Path, version: str) -> StampFile:
    """The stamps recorded for the files of ``data`` by this verifier (``version``); none, with
    the reason, when the stamp file is damaged, edited or another verifier's."""
    path = stamps_path(data)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return StampFile(path, {}, None)
    except (OSError, ValueError) as error:  # (UnicodeDecodeError and JSONDecodeError too)
        return StampFile(path, {}, f"not readable as JSON, truncated or damaged ({error})")
    problem = _not_usable(doc, version)
    if problem is not None:
        return StampFile(path, {}, problem)
    entries = {name: Stamp.from_json(entry) for name, entry in doc["files"].items()}
    return StampFile(path, {name: stamp for name, stamp in entries.items() if stamp is not None}, None)


def _not_usable(doc: object, version: str) -> str | None:
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
        return "not a stamp file of docbench"
    if not isinstance(doc.get("checksum"), str):
        return "it has no checksum"
    if doc["checksum"] != stamps_checksum(doc):
        return "its checksum does not match its content (edited or damaged)"
    if doc.get("format") != FORMAT or doc.get("verifier") != version:
        return f"written by another version of the verifier ({doc.get('verifier')}; this one is {version})"
    return None


def write_stamps(path: Path, stamps: dict[str, Stamp], version: str) -> str | None:
    """Record ``stamps`` (atomically: a reader sees the old file or the new one); the reason
    when they cannot be written (they are an optimisation: the run goes on without)."""
    doc: JsonObject = {
        "format": FORMAT,
        "verifier": version,
        "written_ns": time.time_ns(),
        "files": {name: stamps[name].to_json() for name in sorted(stamps)},
    }
    doc["checksum"] = stamps_checksum(doc)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return error.strerror or str(error)
    return None
