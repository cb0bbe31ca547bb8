"""``dataset.json``: what a generated dataset directory holds.

The manifest names the generator and its parameters (which fully determine every file's bytes),
and lists the files present (name, bytes, documents, sha256) and the documents a loader may
trip over: *hard* documents (valid JSON that some systems refuse) and *dirty* lines (invalid
lines mixed in on purpose). Line numbers are 1-based line numbers within their file.

Other code reads a dataset through :func:`read_manifest`.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

MANIFEST_NAME = "dataset.json"
FORMAT = 1

#: Parameters that identify a dataset: two manifests can be merged only if these agree.
IDENTITY_KEYS = (
    "generator",
    "generator_version",
    "seed",
    "docs",
    "docs_per_file",
    "compress",
    "hard_rate",
    "dirty_rate",
)
#: Parameters that determine each file's bytes (the document count only decides how many
#: files there are and how many documents the last one holds).
CONTENT_KEYS = tuple(k for k in IDENTITY_KEYS if k != "docs")


def file_name(number: int, compress: str = "none") -> str:
    """JSONBench's layout: file_0001.json, file_0002.json, ... (.json.gz / .json.zst)."""
    suffix = {"none": ".json", "gzip": ".json.gz", "zstd": ".json.zst"}[compress]
    return f"file_{number:04d}{suffix}"


@dataclass
class FileEntry:
    number: int
    name: str
    bytes: int
    docs: int
    lines: int
    sha256: str
    uncompressed_bytes: int
    first_time_us: int
    last_time_us: int


@dataclass
class Marked:
    """A hard document or a dirty line: ``file`` name, 1-based ``line``, ``kind``."""

    file: str
    line: int
    kind: str


@dataclass
class Manifest:
    generator: str
    generator_version: str
    seed: int
    docs: int
    docs_per_file: int
    compress: str
    hard_rate: float
    dirty_rate: float
    files_total: int
    files: list[FileEntry] = field(default_factory=list)
    hard_documents: list[Marked] = field(default_factory=list)
    dirty_lines: list[Marked] = field(default_factory=list)
    format: int = FORMAT
    updated: str = ""
    notes: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ queries

    def identity(self) -> dict:
        return {k: getattr(self, k) for k in IDENTITY_KEYS}

    def same_dataset(self, other: Manifest) -> bool:
        return self.identity() == other.identity()

    def same_content(self, other: Manifest) -> bool:
        """True if file k of both datasets is the same bytes (given the same document count)."""
        return all(getattr(self, k) == getattr(other, k) for k in CONTENT_KEYS)

    def is_complete(self) -> bool:
        return sorted(f.number for f in self.files) == list(range(1, self.files_total + 1))

    def docs_present(self) -> int:
        return sum(f.docs for f in self.files)

    def file_paths(self, directory: Path) -> list[Path]:
        return [Path(directory) / f.name for f in sorted(self.files, key=lambda f: f.number)]

    def expected_docs(self, number: int) -> int:
        """Documents file ``number`` holds in this dataset (the last one may hold fewer)."""
        return min(self.docs_per_file, self.docs - (number - 1) * self.docs_per_file)

    # ------------------------------------------------------------------ changes

    def put_file(self, entry: FileEntry, hard: list[Marked], dirty: list[Marked]) -> None:
        """Add or replace a file and its hard/dirty marks."""
        self.files = [f for f in self.files if f.number != entry.number] + [entry]
        self.files.sort(key=lambda f: f.number)
        self.hard_documents = [h for h in self.hard_documents if h.file != entry.name] + hard
        self.hard_documents.sort(key=lambda h: (h.file, h.line))
        self.dirty_lines = [d for d in self.dirty_lines if d.file != entry.name] + dirty
        self.dirty_lines.sort(key=lambda d: (d.file, d.line))

    def keep_present(self, directory: Path) -> None:
        """Drop entries whose file is missing or changed size (the manifest describes only
        what is on disk)."""
        keep = []
        for f in self.files:
            p = Path(directory) / f.name
            if p.is_file() and p.stat().st_size == f.bytes:
                keep.append(f)
        names = {f.name for f in keep}
        self.files = keep
        self.hard_documents = [h for h in self.hard_documents if h.file in names]
        self.dirty_lines = [d for d in self.dirty_lines if d.file in names]

    # ------------------------------------------------------------------ (de)serialisation

    def to_dict(self) -> dict:
        d = asdict(self)
        d["complete"] = self.is_complete()
        d["docs_present"] = self.docs_present()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Manifest:
        d = dict(d)
        d.pop("complete", None)
        d.pop("docs_present", None)
        files = [FileEntry(**f) for f in d.pop("files", [])]
        hard = [Marked(**h) for h in d.pop("hard_documents", [])]
        dirty = [Marked(**x) for x in d.pop("dirty_lines", [])]
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(files=files, hard_documents=hard, dirty_lines=dirty, **known)


def read_manifest(directory: Path) -> Manifest | None:
    """The manifest of a dataset directory, or None if there is none (or it is unreadable)."""
    path = Path(directory) / MANIFEST_NAME
    try:
        return Manifest.from_dict(json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (ValueError, TypeError, KeyError):
        return None


def write_manifest(directory: Path, manifest: Manifest) -> Path:
    """Write ``dataset.json`` atomically (temporary file + rename)."""
    directory = Path(directory)
    manifest.updated = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    data = json.dumps(manifest.to_dict(), indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=".dataset.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, directory / MANIFEST_NAME)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return directory / MANIFEST_NAME


def merge(existing: Manifest | None, new: Manifest) -> Manifest:
    """Merge the entries of ``new`` into ``existing`` when both describe the same dataset;
    otherwise ``new`` replaces it."""
    if existing is None or not existing.same_dataset(new):
        return new
    out = Manifest.from_dict(existing.to_dict())
    for f in new.files:
        out.put_file(
            f,
            [h for h in new.hard_documents if h.file == f.name],
            [d for d in new.dirty_lines if d.file == f.name],
        )
    out.notes.update(new.notes)
    return out
