"""Lucene's files on disk: bytes per file extension of an index's shards, compound files read
part by part (for engines without Elasticsearch's ``_disk_usage`` API)."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

# Lucene files holding stored fields (the _source and _id): the "data" part of the index.
STORED_FIELD_EXTENSIONS = {".fdt", ".fdx", ".fdm"}


def compound_file_entries(cfe: Path) -> dict[str, int] | None:
    """Bytes per file extension inside a Lucene 9 compound file, read from its entries
    table (``.cfe``: codec header, vint count, then name, offset, length per file); None
    when it cannot be read."""
    try:
        data = cfe.read_bytes()
        pos = 4  # magic (big-endian int)

        def vint() -> int:
            nonlocal pos
            value = shift = 0
            while True:
                byte = data[pos]
                pos += 1
                value |= (byte & 0x7F) << shift
                if byte < 0x80:
                    return value
                shift += 7

        def string() -> str:
            nonlocal pos
            length = vint()
            pos += length
            return data[pos - length : pos].decode()

        string()  # codec name
        pos += 4 + 16  # version (big-endian int), segment id
        pos += 1 + data[pos]  # suffix
        sizes: dict[str, int] = defaultdict(int)
        for _ in range(vint()):
            name = string()
            pos += 8  # offset (little-endian long)
            length = int.from_bytes(data[pos : pos + 8], "little")
            pos += 8
            sizes[os.path.splitext(name)[1] or name] += length
        return dict(sizes)
    except (OSError, IndexError, UnicodeDecodeError):
        return None


def files_by_extension(data_dir: Path, index_uuid: str) -> dict[str, int]:
    """Bytes per Lucene file extension of the index's shards under a node's data directory
    (a compound file counted by its parts)."""
    sizes: dict[str, int] = defaultdict(int)
    for shard in data_dir.rglob(f"indices/{index_uuid}/*/index"):
        for entry in shard.iterdir():
            if not entry.is_file():
                continue
            if entry.suffix == ".cfs":
                # A compound file packs a small segment's files: count its parts.
                parts = compound_file_entries(entry.with_suffix(".cfe"))
                if parts:
                    for ext, length in parts.items():
                        sizes[ext] += length
                    continue
            sizes[entry.suffix or entry.name] += entry.stat().st_blocks * 512
    return dict(sizes)


def stored_field_bytes(files: dict[str, int]) -> int:
    return sum(size for ext, size in files.items() if ext in STORED_FIELD_EXTENSIONS)
