"""Reading a dataset directory: which files are data, and their lines, decompressed on the fly.

Used by the answer oracle and by every database loader, so that all of them see exactly the
same lines.

- :func:`dataset_files` lists the data files of a directory (``*.json``, ``*.jsonl``,
  ``*.ndjson``, each optionally ``.gz`` / ``.zst`` / ``.lz4``), sorted by name, leaving out
  docbench's own ``dataset.json`` / ``answers.json`` / ``baselines.json``, any
  ``*.schema.json`` and hidden files.
- :func:`iter_lines` yields each raw line as ``bytes`` without its ``\\n`` (and without a
  ``\\r`` before it). Lines are not decoded; empty lines are yielded too (they are not
  documents, callers decide). :func:`iter_line_batches` yields the same lines in lists, one
  list per block read, which is cheaper per line for tight loops.
- :func:`file_sha256` hashes a file (its bytes on disk, i.e. compressed if compressed),
  cached in-process per (path, size, mtime).

Compression is recognised by the file's magic bytes (gzip, zstd, lz4 frame), so a misnamed
file is still read correctly; a plain JSON file cannot start with any of those bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path

BLOCK_SIZE = 1 << 20  # bytes read per call (decompressed bytes for compressed files)

DATA_SUFFIXES = (".json", ".jsonl", ".ndjson")
COMPRESSION_SUFFIXES = ("", ".gz", ".gzip", ".zst", ".zstd", ".lz4")
# docbench's own (shapes.json: the shape generator's summary beside its documents)
EXCLUDED_NAMES = frozenset({"dataset.json", "answers.json", "baselines.json", "shapes.json"})

_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_LZ4_MAGIC = b"\x04\x22\x4d\x18"


def is_data_file_name(name: str) -> bool:
    """True for ``x.json``, ``x.jsonl``, ``x.ndjson`` (optionally compressed), except
    docbench's own metadata files and hidden files."""
    lower = name.lower()
    if lower.startswith(".") or lower in EXCLUDED_NAMES:
        return False
    for comp in COMPRESSION_SUFFIXES:
        if comp and not lower.endswith(comp):
            continue
        base = lower[: len(lower) - len(comp)] if comp else lower
        if base.endswith(".schema.json") or base in EXCLUDED_NAMES:
            return False
        if base.endswith(DATA_SUFFIXES):
            return True
    return False


def dataset_files(data_dir: Path) -> list[Path]:
    """The data files of a dataset directory, sorted by name (not recursive).

    A path to a single file is accepted too and returned as a one-element list (whatever
    its name). Raises ``FileNotFoundError`` if the path does not exist.
    """
    data_dir = Path(data_dir)
    if data_dir.is_file():
        return [data_dir]
    if not data_dir.is_dir():
        raise FileNotFoundError(f"no such dataset file or directory: {data_dir}")
    files = [p for p in data_dir.iterdir() if is_data_file_name(p.name) and p.is_file()]
    return sorted(files, key=lambda p: p.name)


def compression_of(path: Path) -> str:
    """``"gzip"``, ``"zstd"``, ``"lz4"`` or ``"none"``, from the file's first bytes."""
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head.startswith(_GZIP_MAGIC):
        return "gzip"
    if head == _ZSTD_MAGIC:
        return "zstd"
    if head == _LZ4_MAGIC:
        return "lz4"
    return "none"


class _HashingReader:
    """A raw file object that feeds every byte read into a hash."""

    def __init__(self, fh: io.FileIO, digest: hashlib._Hash) -> None:
        self._fh = fh
        self._digest = digest

    def read(self, size: int = -1) -> bytes:
        data = self._fh.read(size)
        self._digest.update(data)
        return data

    def readinto(self, buffer) -> int:  # used by gzip's buffered reader
        n = self._fh.readinto(buffer)
        if n:
            self._digest.update(memoryview(buffer)[:n])
        return n

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self._fh.close()

    @property
    def closed(self) -> bool:
        return self._fh.closed

    def finish(self) -> None:
        """Hash whatever the decompressor did not read (trailing garbage, padding)."""
        while True:
            data = self._fh.read(BLOCK_SIZE)
            if not data:
                return
            self._digest.update(data)


def _open_stream(raw, compression: str):
    """A stream of the decompressed bytes (``read(n)``, ``readinto(buffer)``)."""
    if compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True, read_size=BLOCK_SIZE)
    if compression == "lz4":
        import lz4.frame

        return lz4.frame.LZ4FrameFile(raw, mode="rb")
    return raw


def _open_decompressed(raw, compression: str) -> Callable[[int], bytes]:
    """A ``read(n)`` function returning decompressed bytes (``b""`` at the end)."""
    return _open_stream(raw, compression).read


def iter_line_batches(
    path: Path, *, start: int = 0, end: int | None = None, digest: hashlib._Hash | None = None
) -> Iterator[list[bytes]]:
    """Lists of raw lines (no ``\\n``, no trailing ``\\r``), one list per block read.

    ``start``/``end`` restrict reading to a byte range of an UNCOMPRESSED file; the range must
    begin at a line start (see :func:`split_ranges`). ``digest``, if given, is fed every byte
    of the file as it is read (only when the whole file is read).
    """
    path = Path(path)
    compression = compression_of(path)
    if compression != "none" and (start or end is not None):
        raise ValueError("byte ranges are only supported for uncompressed files")
    with open(path, "rb", buffering=0) as fh:
        raw: io.FileIO | _HashingReader = fh
        hashing = None
        if digest is not None:
            if start or end is not None:
                raise ValueError("cannot hash a byte range")
            raw = hashing = _HashingReader(fh, digest)
        if start:
            fh.seek(start)
        remaining = None if end is None else end - start
        read = _open_decompressed(raw, compression)
        carry = b""
        while True:
            if remaining is None:
                chunk = read(BLOCK_SIZE)
            elif remaining > 0:
                chunk = read(min(BLOCK_SIZE, remaining))
                remaining -= len(chunk)
            else:
                chunk = b""
            if not chunk:
                break
            if carry:
                chunk = carry + chunk
            lines = chunk.split(b"\n")
            carry = lines.pop()
            if not lines:
                continue
            if b"\r" in chunk:
                lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in lines]
            yield lines
        if carry:
            yield [carry[:-1] if carry.endswith(b"\r") else carry]
        if hashing is not None:
            hashing.finish()


def iter_blocks(
    path: Path,
    *,
    start: int = 0,
    end: int | None = None,
    digest: hashlib._Hash | None = None,
    size: int = BLOCK_SIZE,
) -> Iterator[memoryview]:
    """The bytes :func:`iter_line_batches` splits into lines, in blocks of whole lines, read
    into one reused buffer (no copy, no allocation per block): each block ends with
    ``\\n``, except the last one when the file's last line has none. Lines are left as they
    are (a ``\\r`` before the ``\\n`` stays).

    Each block is a memoryview on a ``bytearray`` (its ``obj``), starting at offset 0, and is
    valid only until the next block is requested. ``start``/``end`` and ``digest`` as in
    :func:`iter_line_batches`; ``size`` is the buffer size (bytes read per call)."""
    path = Path(path)
    compression = compression_of(path)
    if compression != "none" and (start or end is not None):
        raise ValueError("byte ranges are only supported for uncompressed files")
    with open(path, "rb", buffering=0) as fh:
        raw: io.FileIO | _HashingReader = fh
        hashing = None
        if digest is not None:
            if start or end is not None:
                raise ValueError("cannot hash a byte range")
            raw = hashing = _HashingReader(fh, digest)
        if start:
            fh.seek(start)
        remaining = None if end is None else end - start
        stream = _open_stream(raw, compression)
        buf = bytearray(size)
        view = memoryview(buf)
        have = 0  # bytes at the start of buf: the carried part of a line, then new data
        while remaining is None or remaining > 0:
            if have == len(buf):  # a line longer than the buffer: a bigger one
                buf = bytearray(2 * len(buf))
                buf[:have] = view
                view = memoryview(buf)
            want = len(buf) - have if remaining is None else min(len(buf) - have, remaining)
            n = stream.readinto(view[have : have + want])
            if not n:
                break
            if remaining is not None:
                remaining -= n
            have += n
            cut = buf.rfind(b"\n", 0, have) + 1
            if not cut:
                continue
            yield view[:cut]
            rest = have - cut
            buf[:rest] = view[cut:have]
            have = rest
        if have:
            yield view[:have]
        if hashing is not None:
            hashing.finish()


def iter_decompressed(path: Path, size: int = BLOCK_SIZE) -> Iterator[bytes]:
    """The file's bytes, decompressed as they are read (gzip, zstd, lz4 or none), in chunks."""
    with open(path, "rb", buffering=0) as fh:
        read = _open_decompressed(fh, compression_of(path))
        while chunk := read(size):
            yield chunk


def iter_lines(path: Path) -> Iterator[bytes]:
    """Every raw line of a (possibly compressed) file, without ``\\n`` / ``\\r\\n``.

    Streaming; empty lines are yielded; a last line without a newline is yielded too.
    """
    for lines in iter_line_batches(path):
        yield from lines


def split_ranges(path: Path, pieces: int) -> list[tuple[int, int]]:
    """Cut an uncompressed file into about ``pieces`` byte ranges that begin at line starts."""
    size = os.path.getsize(path)
    if pieces <= 1 or size == 0:
        return [(0, size)]
    bounds = [0]
    with open(path, "rb") as fh:
        for i in range(1, pieces):
            target = size * i // pieces
            if target <= bounds[-1]:
                continue
            fh.seek(target)
            fh.readline()  # skip to the start of the next line
            pos = fh.tell()
            if pos >= size:
                break
            if pos > bounds[-1]:
                bounds.append(pos)
    bounds.append(size)
    return list(zip(bounds[:-1], bounds[1:], strict=True))


_SHA_CACHE: dict[tuple[str, int, int], str] = {}
# The keys whose sha256 this process computed from the file's bytes: a sha256 recorded
# elsewhere (a cache's belief for the same size and mtime) does not replace it.
_HASHED: set[tuple[str, int, int]] = set()


def _sha_key(path: Path) -> tuple[str, int, int]:
    st = os.stat(path)
    return (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes, cached in-process per (path, size, mtime)."""
    key = _sha_key(path)
    cached = _SHA_CACHE.get(key)
    if cached is not None:
        return cached
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as fh:
        buf = bytearray(BLOCK_SIZE)
        view = memoryview(buf)
        while True:
            n = fh.readinto(buf)
            if not n:
                break
            digest.update(view[:n])
    value = digest.hexdigest()
    _SHA_CACHE[key] = value
    _HASHED.add(key)
    return value


def remember_sha256(path: Path, value: str, key: tuple[str, int, int] | None = None) -> None:
    """Record a hash computed elsewhere (e.g. while the oracle read the file).

    ``key`` is the (path, size, mtime) taken BEFORE the read, so that a file modified during
    the read is not cached under its new identity.
    """
    key = key or _sha_key(path)
    if key == _sha_key(path) and not (key in _HASHED and key in _SHA_CACHE):
        _SHA_CACHE[key] = value


def remember_hashed_sha256(path: Path, value: str, key: tuple[str, int, int]) -> None:
    """Record the sha256 this process computed from the file's bytes (read after ``key``
    was taken): no recorded belief replaces it."""
    if key == _sha_key(path):
        _SHA_CACHE[key] = value
        _HASHED.add(key)


def sha_cache_key(path: Path) -> tuple[str, int, int]:
    return _sha_key(path)


def known_sha256(path: Path, key: tuple[str, int, int] | None = None) -> str | None:
    """The file's sha256 if this process already knows it for the file's current (path,
    size, mtime) -- ``key`` when given -- without reading the file; else None."""
    return _SHA_CACHE.get(key or _sha_key(path))


def read_error_message(error: OSError) -> str:
    """One line for a dataset file or directory that cannot be read (no traceback): which
    one, and why."""
    reason = error.strerror or str(error)
    if error.filename is None:
        return f"cannot read the dataset: {reason}"
    hint = " (check its permissions)" if isinstance(error, PermissionError) else ""
    return f"cannot read {error.filename}: {reason}{hint}"
