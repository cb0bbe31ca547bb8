"""Every data file is verified before anything trusts it: read once, and again only when changed.

A compressed file must end where its format says it ends, or the oracle and every engine
would read a download cut short as if the data ended there ("5/5 correct" on half the data).
So each file's bytes are read once, in parallel over the files, and fed both to SHA-256
(the data's fingerprint, which :mod:`.reader` then knows without reading the file again) and,
for a compressed file, to the format's own decompressor, whose output is thrown away:

- zstd (``zstandard``): every frame reaches its end (``eof``; its checksum, when it has one,
  is checked by the decompressor) and what follows a frame is another frame (skippable ones
  included), up to the last byte;
- gzip (``zlib``, gzip wrapper): every member's deflate stream ends and its trailer (CRC-32
  and ISIZE, both checked by zlib) is there; what follows is another member;
- lz4 (``lz4.frame``): every frame reaches its end mark (and its content checksum).

A file that ends inside a frame is *truncated*; bytes after the last frame that do not
begin another are *trailing garbage*; a decompressor's error is *damage*. Each is one line
naming the file, the byte offset and the reason.

A dataset docbench generated carries ``dataset.json`` (:mod:`.manifest`): every file it
lists must be there with the size and SHA-256 it records, and no other data file may be
there. A user's own data (no manifest) gets the structural check only.

:func:`verify_dataset` is called once per run, before the oracle reads the data and before
any engine starts (``docbench run``, ``docbench answers``); :class:`DamagedDataset` carries
one line per damaged file. A file found whole gets a verification stamp (:mod:`.stamps`):
the next run does not read it again while its size, mtime, ctime, inode and device are the
ones stamped (its SHA-256 and format come from the stamp; the check against dataset.json is
made again), unless ``full`` (``--verify full``) asks for every file to be read.
"""

from __future__ import annotations

import hashlib
import os
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from docbench.dataset.manifest import FileEntry, Manifest, read_manifest
from docbench.dataset.reader import (
    compression_of,
    remember_hashed_sha256,
    remember_sha256,
    sha_cache_key,
)
from docbench.dataset.stamps import (
    Identity,
    Stamp,
    StampFile,
    read_stamps,
    stamp_after_read,
    write_stamps,
)

READ_BYTES = 1 << 20  # bytes read per call
# Bytes given to a decompressor per call: what it returns for them stays small (the output
# is thrown away, but a highly compressible piece could otherwise take gigabytes at once).
PIECE_BYTES = 64 << 10
SKIPPABLE_FRAMES = range(0x184D2A50, 0x184D2A60)  # zstd's and lz4's skippable frame magics
HEADER_BYTES = 8  # a skippable frame's magic and size; longer than every format's magic


class Decompressor(Protocol):
    """What zstandard's decompressobj, zlib's decompressobj and lz4's frame decompressor
    have in common."""

    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes | None: ...

    def decompress(self, data: memoryview) -> bytes: ...


@dataclass(frozen=True)
class Format:
    name: str
    unit: str  # what the file is a sequence of: "frame", "member"
    magic: bytes
    skippable: bool  # may skippable frames sit between the units?
    new: Callable[[], Decompressor]
    end: str  # what a complete unit ends with (for the message)


def _zstd() -> Decompressor:
    import zstandard

    return zstandard.ZstdDecompressor().decompressobj()


def _gzip() -> Decompressor:
    return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip wrapper: the trailer is checked


def _lz4() -> Decompressor:
    import lz4.frame

    return lz4.frame.LZ4FrameDecompressor()


FORMATS = {
    "zstd": Format("zstd", "frame", b"\x28\xb5\x2f\xfd", True, _zstd, "its end"),
    "gzip": Format("gzip", "member", b"\x1f\x8b", False, _gzip, "its CRC-32 and ISIZE trailer"),
    "lz4": Format("lz4", "frame", b"\x04\x22\x4d\x18", True, _lz4, "its end mark"),
}


class Damage(Exception):
    """What is wrong with one file: where and why (the message does not name the file)."""


class FrameWalk:
    """The frames (members) of one compressed file, checked as its bytes come in order:
    each decompressed to its end, each followed by another or by the end of the file."""

    def __init__(self, fmt: Format, size: int) -> None:
        self.fmt = fmt
        self.size = size  # the file's size, for the messages
        self.pos = 0  # offset in the file of the next byte to look at
        self.unit_start = 0  # where the frame being decompressed (or skipped) began
        self.decompressor: Decompressor | None = None
        self.skip = 0  # bytes of a skippable frame still to pass
        self.carry = b""  # the start of a frame header split between two reads

    def feed(self, data: bytes) -> None:
        if self.carry:
            data, self.carry = self.carry + data, b""
        view = memoryview(data)
        while view:
            if self.skip:
                n = min(self.skip, len(view))
                self.skip -= n
                self.pos += n
                view = view[n:]
            elif self.decompressor is None:
                if len(view) < HEADER_BYTES:  # the next read completes it
                    self.carry = bytes(view)
                    return
                view = self._begin(view)
            else:
                view = self._decompress(view)

    def finish(self) -> None:
        """At the end of the file: the last frame must be complete."""
        if self.carry:
            view = self._begin(memoryview(self.carry), final=True)
            self.carry = b""
            if self.decompressor is not None:
                self._decompress(view)
        if self.skip:
            raise self._truncated("the skippable frame", f"{self.skip:,} of its bytes are missing")
        if self.decompressor is not None:
            raise self._truncated(self._unit(), f"the file stops before {self.fmt.end}")

    def _begin(self, view: memoryview, final: bool = False) -> memoryview:
        """A frame starts at ``self.pos``: a skippable one is skipped, one of the format is
        handed to a new decompressor, anything else is trailing garbage."""
        self.unit_start = self.pos
        magic = int.from_bytes(view[:4], "little") if len(view) >= 4 else None
        if self.fmt.skippable and magic in SKIPPABLE_FRAMES:
            if len(view) < HEADER_BYTES:
                raise self._truncated("the skippable frame", "the file stops inside its header")
            self.skip = int.from_bytes(view[4:HEADER_BYTES], "little")
            self.pos += HEADER_BYTES
            return view[HEADER_BYTES:]
        if view[: len(self.fmt.magic)] == self.fmt.magic:
            self.decompressor = self.fmt.new()
            return view
        if final and self.fmt.magic.startswith(bytes(view)):
            raise self._truncated(self._unit(), "the file stops inside its header")
        raise Damage(
            f"trailing garbage at byte {self.pos:,}: the {self.size - self.pos:,} bytes after the last "
            f"{self.fmt.name} {self.fmt.unit} do not begin another one (bytes appended to the file?)"
        )

    def _decompress(self, view: memoryview) -> memoryview:
        assert self.decompressor is not None
        piece = view[:PIECE_BYTES]
        try:
            self.decompressor.decompress(piece)
        except Exception as error:  # zstandard.ZstdError, zlib.error, lz4's RuntimeError
            raise Damage(
                f"damaged at byte {self.pos:,} or in the {len(piece):,} bytes after it (in the "
                f"{self.fmt.name} {self.fmt.unit} that begins at byte {self.unit_start:,}): {error}"
            ) from None
        used = len(piece)
        if self.decompressor.eof:
            used -= len(self.decompressor.unused_data or b"")  # (lz4's is None when empty)
            self.decompressor = None
        self.pos += used
        return view[used:]

    def _unit(self) -> str:
        return f"the {self.fmt.name} {self.fmt.unit}"

    def _truncated(self, what: str, reason: str) -> Damage:
        return Damage(
            f"truncated at byte {self.size:,}: {what} that begins at byte {self.unit_start:,} is "
            f"incomplete ({reason}: a download cut short?)"
        )


@dataclass(frozen=True)
class FileFacts:
    """One file as read (or as its stamp records it): its size and SHA-256, its damage (None
    when it is whole) and, when whole, its stamp (None when it changed during the read)."""

    path: Path
    size: int
    sha256: str | None
    problem: str | None
    compression: str = "none"
    stamp: Stamp | None = None


def read_and_check(path: Path) -> FileFacts:
    """Hash the file and, when it is compressed, walk its frames; one read."""
    began_ns = time.time_ns()
    before = os.stat(path)  # (before the format is looked at: a change after it shows)
    key = sha_cache_key(path)  # (path, size, mtime) before reading
    compression = compression_of(path)
    fmt = FORMATS.get(compression)
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as fh:
        size = os.fstat(fh.fileno()).st_size
        walk = FrameWalk(fmt, size) if fmt else None
        try:
            while data := fh.read(READ_BYTES):
                digest.update(data)
                if walk is not None:
                    walk.feed(data)
            if walk is not None:
                walk.finish()
        except Damage as damage:
            return FileFacts(path, size, None, f"{path}: {damage}", compression)  # (the rest is not read)
        after = os.fstat(fh.fileno())
    sha = digest.hexdigest()
    remember_hashed_sha256(path, sha, key)
    stamp = stamp_after_read(before, after, began_ns, sha, compression)
    return FileFacts(path, size, sha, None, compression, stamp)


def facts_of_unchanged(path: Path, stamp: Stamp | None) -> FileFacts | None:
    """The facts its stamp records for a file unchanged since its check (not read), else None."""
    if stamp is None or Identity.of(os.stat(path)) != stamp.identity:
        return None
    remember_sha256(path, stamp.sha256)  # the oracle does not hash it either
    return FileFacts(path, stamp.identity.size, stamp.sha256, None, stamp.compression, stamp)


def verifier_version() -> str:
    """A digest of the verifier's source: a stamp another version wrote is not trusted (it
    may have let through what this one refuses)."""
    digest = hashlib.sha256()
    for module in ("verify.py", "stamps.py"):
        digest.update(module.encode() + b"\0" + Path(__file__).with_name(module).read_bytes())
    return digest.hexdigest()[:16]


# -- the manifest of a generated dataset ------------------------------------------------------

FETCH_AGAIN = "fetch the file again, or move it out of the directory"
GENERATE_AGAIN = "generate it again (docbench generate, same options) or restore it"


def _own_data_problems(facts: dict[str, FileFacts]) -> list[str]:
    return [f"{fact.problem}; {FETCH_AGAIN}" for fact in facts.values() if fact.problem is not None]


def _listed_file_problem(entry: FileEntry, fact: FileFacts) -> str | None:
    """A file dataset.json lists, as read: its damage, else a size or SHA-256 not recorded."""
    if fact.problem is not None:
        size = f"; dataset.json records {entry.bytes:,} bytes" if fact.size != entry.bytes else ""
        return f"{fact.problem}{size}; {GENERATE_AGAIN}"
    if fact.size != entry.bytes:
        return (
            f"{fact.path}: {fact.size:,} bytes where dataset.json records {entry.bytes:,}: not the file "
            f"docbench generated (cut short, or written over?); {GENERATE_AGAIN}"
        )
    sha = fact.sha256 or ""  # (known: the file is whole)
    if sha != entry.sha256:
        return (
            f"{fact.path}: changed since docbench generated it: its SHA-256 begins {sha[:16]}, "
            f"the one dataset.json records {entry.sha256[:16]} (same size, {fact.size:,} bytes); "
            f"{GENERATE_AGAIN}"
        )
    return None


def _manifest_problems(directory: Path, manifest: Manifest, facts: dict[str, FileFacts]) -> list[str]:
    """Each file ``dataset.json`` lists is there with its size and SHA-256; no other is."""
    problems = []
    listed = {entry.name: entry for entry in manifest.files}
    for name, entry in listed.items():
        fact = facts.get(name)
        if fact is None:
            listing = f"dataset.json lists it ({entry.bytes:,} bytes)"
            problems.append(f"{directory / name}: missing: {listing}; {GENERATE_AGAIN}")
        elif (problem := _listed_file_problem(entry, fact)) is not None:
            problems.append(problem)
    for name, fact in facts.items():
        if name not in listed:
            problems.append(
                f"{fact.problem or fact.path}: not in dataset.json, which lists the files docbench "
                "generated here: move it out of the directory, or remove dataset.json to use the "
                "directory as your own data"
            )
    return problems


# -- a dataset ---------------------------------------------------------------------------------


class DamagedDataset(Exception):
    """Files of a dataset that must not be used, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Verified:
    files: int
    bytes: int
    seconds: float
    manifest: bool  # checked against dataset.json
    read: int = 0  # files read and checked in full
    unchanged: list[Stamp] = field(default_factory=list)  # the stamps of the files not read
    compressed: bool = False  # some file is compressed (its frames were walked)
    full: bool = False  # every file was read, whatever its stamp (--verify full)
    notes: list[str] = field(default_factory=list)  # about the stamps, for the user

    def summary(self, data: Path) -> str:
        """One line: how many files were read and checked, how many are known unchanged since
        their check, and when that was."""
        checks = ", ".join(["SHA-256"] + ["frames"] * self.compressed + ["dataset.json"] * self.manifest)
        forced = "; --verify full" if self.full else ""
        files = f"{self.files} file{'' if self.files == 1 else 's'}, {self.bytes / 1e6:,.1f} MB"
        line = f"Dataset {data}: {files}: {self.read} read ({checks}{forced})"
        if self.unchanged:
            line += f", {len(self.unchanged)} unchanged since {self._when()} (--verify full re-reads them)"
        return f"{line} in {self.seconds:.2f} s"

    def _when(self) -> str:
        checked = [stamp.checked_ns for stamp in self.unchanged]
        first, last = (
            time.strftime("%Y-%m-%d %H:%M", time.localtime(ns / 1e9)) for ns in (min(checked), max(checked))
        )
        return f"their check of {first}" if first == last else f"their checks of {first} to {last}"


def _read_what_changed(
    files: list[Path], recorded: StampFile, full: bool, jobs: int
) -> tuple[dict[str, FileFacts], dict[str, FileFacts]]:
    """(the facts of every file, those of the files read): a file known unchanged since its
    check is not read (unless ``full``); the others are, ``jobs`` at a time, biggest first."""
    known = [] if full else [facts_of_unchanged(path, recorded.stamps.get(path.name)) for path in files]
    facts = {fact.path.name: fact for fact in known if fact is not None}
    order = sorted((path for path in files if path.name not in facts), key=lambda p: -p.stat().st_size)
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(order)))) as pool:
        # threads suffice: hashlib, zlib, zstandard and lz4 release the GIL while they work
        read = {fact.path.name: fact for fact in pool.map(read_and_check, order)}
    return facts | read, read


def _record_stamps(recorded: StampFile, facts: dict[str, FileFacts], version: str) -> str | None:
    """Write the stamps of the files found whole when they are not those recorded (whole files
    only: a file gone from the dataset loses its stamp); a note when they cannot be."""
    stamps = {name: fact.stamp for name, fact in facts.items() if fact.stamp is not None}
    if stamps == recorded.stamps and recorded.problem is None:
        return None
    problem = write_stamps(recorded.path, stamps, version)
    if problem is None:
        return None
    return f"{recorded.path}: cannot write the verification stamps ({problem}): the next run reads every file"


def verify_dataset(data: Path, files: list[Path], jobs: int = 1, full: bool = False) -> Verified:
    """Read every file not known unchanged since its check (every file when ``full``): its
    SHA-256 and, when compressed, its frames; then, when ``data`` is a directory with
    ``dataset.json``, check every file against the manifest. The files found whole get their
    stamps. Raises :class:`DamagedDataset` naming every damaged file."""
    started = time.perf_counter()
    version = verifier_version()
    recorded = read_stamps(data, version)
    notes = [f"{recorded.path}: {recorded.problem}; every file is read again"] if recorded.problem else []
    facts, read = _read_what_changed(files, recorded, full, jobs)
    notes += filter(None, [_record_stamps(recorded, facts, version)])
    manifest = read_manifest(data) if Path(data).is_dir() else None
    if manifest is not None:
        problems = _manifest_problems(Path(data), manifest, facts)
    else:
        problems = _own_data_problems(facts)
    if problems:
        raise DamagedDataset(sorted(problems))
    return Verified(
        files=len(facts),
        bytes=sum(fact.size for fact in facts.values()),
        seconds=time.perf_counter() - started,
        manifest=manifest is not None,
        read=len(read),
        unchanged=[fact.stamp for name, fact in facts.items() if name not in read and fact.stamp],
        compressed=any(fact.compression in FORMATS for fact in facts.values()),
        full=full,
        notes=notes,
    )
