"""Storage baselines of a dataset: its raw ndjson size and that ndjson compressed.

JSONBench lists these next to every system (`_files_gzip`, `_files_zstd`, ...). They are
computed once per dataset (gzip level 6, zstd level 3 -- each tool's default -- and lz4 frame
default) and cached in ``baselines.json`` (see :func:`docbench.paths.cache_dir_for`), keyed by
the files' sha256.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import Any

import lz4.frame
import zstandard

from docbench.dataset.reader import dataset_files, file_sha256, iter_lines
from docbench.paths import cache_dir_for

CACHE_NAME = "baselines.json"


class _Counter:
    """A write-only sink that only counts bytes (the compressed output is not kept)."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, data: bytes) -> int:
        self.bytes += len(data)
        return len(data)


def compute_baselines(files: list[Path]) -> dict[str, int]:
    raw = 0
    gzip = zlib.compressobj(6, zlib.DEFLATED, 31)
    gzip_bytes = 0
    zstd_sink = _Counter()
    zstd_writer = zstandard.ZstdCompressor(level=3).stream_writer(zstd_sink, closefd=False)
    lz4_bytes = 0
    lz4_ctx = lz4.frame.LZ4FrameCompressor()
    lz4_bytes += len(lz4_ctx.begin())
    for path in files:
        buffer: list[bytes] = []
        size = 0
        for line in iter_lines(path):
            buffer.append(line)
            size += len(line) + 1
            if size >= 8 << 20:
                raw, gzip_bytes, lz4_bytes = _feed(buffer, raw, gzip, gzip_bytes, zstd_writer,
                                                   lz4_ctx, lz4_bytes)
                buffer, size = [], 0
        raw, gzip_bytes, lz4_bytes = _feed(buffer, raw, gzip, gzip_bytes, zstd_writer, lz4_ctx,
                                           lz4_bytes)
    gzip_bytes += len(gzip.flush())
    zstd_writer.flush(zstandard.FLUSH_FRAME)
    lz4_bytes += len(lz4_ctx.flush())
    return {"raw": raw, "gzip": gzip_bytes, "zstd": zstd_sink.bytes, "lz4": lz4_bytes}


def _feed(buffer: list[bytes], raw: int, gzip: Any, gzip_bytes: int, zstd_writer: Any,
          lz4_ctx: Any, lz4_bytes: int) -> tuple[int, int, int]:
    if not buffer:
        return raw, gzip_bytes, lz4_bytes
    chunk = b"\n".join(buffer) + b"\n"
    gzip_bytes += len(gzip.compress(chunk))
    zstd_writer.write(chunk)
    lz4_bytes += len(lz4_ctx.compress(chunk))
    return raw + len(chunk), gzip_bytes, lz4_bytes


def dataset_baselines(data_dir: Path) -> dict[str, Any]:
    files = dataset_files(data_dir)
    key = [[path.name, file_sha256(path)] for path in files]
    cache = cache_dir_for(data_dir) / CACHE_NAME
    if cache.exists():
        try:
            cached = json.loads(cache.read_text())
            if cached.get("files") == key:
                return cached["sizes"]
        except (OSError, ValueError, KeyError):
            pass
    sizes = compute_baselines(files)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp")
        tmp.write_text(json.dumps({"files": key, "sizes": sizes}))
        os.replace(tmp, cache)
    except OSError:
        pass  # nowhere writable: keep the figures in memory only
    return sizes
