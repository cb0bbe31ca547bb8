"""Storage baselines of a dataset: its raw ndjson size and that ndjson compressed.

JSONBench lists these next to every system (`_files_gzip`, `_files_zstd`, ...). They are
computed per file (each file compressed on its own, as JSONBench publishes its files; gzip
level 6, zstd level 3 -- each tool's default -- and lz4 frame default), in parallel, and cached
per file in ``baselines.json`` (see :func:`docbench.core.paths.cache_dir_for`), keyed by the files'
sha256. Beyond SAMPLE_FILES files, the compressed sizes are extrapolated from an evenly spread
sample (the raw bytes stay exact); the cache says so in ``basis``.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import IO, Any, cast

import lz4.frame
import zstandard

from docbench.core.paths import cache_dir_for
from docbench.dataset.manifest import read_manifest
from docbench.dataset.reader import dataset_files, file_sha256, iter_decompressed, iter_lines

CACHE_NAME = "baselines.json"
FORMAT = 2
# Beyond this many files the compressed sizes come from an evenly spread sample of them.
SAMPLE_FILES = 10


class _Counter:
    """A write-only sink that only counts bytes (the compressed output is not kept)."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, data: bytes) -> int:
        self.bytes += len(data)
        return len(data)


def file_baselines(path: Path) -> dict[str, int]:
    """One file's raw ndjson bytes and its gzip/zstd/lz4 sizes (each file compressed on its
    own, as JSONBench publishes its files)."""
    raw = 0
    gzip = zlib.compressobj(6, zlib.DEFLATED, 31)
    gzip_bytes = 0
    zstd_sink = _Counter()
    # zstandard's stubs ask for an IO[bytes]; the writer only calls write() (and flush() when
    # the sink has one), which is all _Counter has.
    zstd_writer = zstandard.ZstdCompressor(level=3).stream_writer(cast(IO[bytes], zstd_sink), closefd=False)
    lz4_ctx = lz4.frame.LZ4FrameCompressor()
    lz4_bytes = len(lz4_ctx.begin())
    buffer: list[bytes] = []
    size = 0
    for line in iter_lines(path):
        buffer.append(line)
        size += len(line) + 1
        if size >= 8 << 20:
            raw, gzip_bytes, lz4_bytes = _feed(buffer, raw, gzip, gzip_bytes, zstd_writer, lz4_ctx, lz4_bytes)
            buffer, size = [], 0
    raw, gzip_bytes, lz4_bytes = _feed(buffer, raw, gzip, gzip_bytes, zstd_writer, lz4_ctx, lz4_bytes)
    gzip_bytes += len(gzip.flush())
    zstd_writer.flush(zstandard.FLUSH_FRAME)
    lz4_bytes += len(lz4_ctx.flush())
    return {"raw": raw, "gzip": gzip_bytes, "zstd": zstd_sink.bytes, "lz4": lz4_bytes}


def _file_baselines_task(path: str) -> dict[str, int]:
    return file_baselines(Path(path))


def raw_bytes(path: Path) -> int:
    """The file's ndjson bytes (decompressed when it is compressed): no compression work."""
    return sum(len(chunk) for chunk in iter_decompressed(path, 16 << 20))


def sample_of(files: list[Path], count: int = SAMPLE_FILES) -> list[Path]:
    """`count` files spread evenly over the dataset (all of them when there are no more)."""
    if len(files) <= count:
        return list(files)
    step = len(files) / count
    return [files[int(i * step)] for i in range(count)]


def compute_baselines(
    files: list[Path],
    jobs: int = 1,
    known: dict[str, dict[str, int]] | None = None,
    raw_known: dict[str, int] | None = None,
) -> tuple[dict[str, int], dict[str, dict[str, int]], str]:
    """(sizes of the dataset, sizes per file computed, how). Up to SAMPLE_FILES files every
    file is compressed; beyond, an evenly spread sample of SAMPLE_FILES files is, and the
    dataset's compressed sizes are its raw bytes (all files, exact) times the sample's
    compression ratios -- at 1000m, compressing 482 GB three times would take hours of CPU
    for a reference figure. `known`: per-file figures from the cache (not computed again);
    `raw_known`: files' raw bytes known without reading them (the generator's manifest)."""
    known = dict(known or {})
    chosen = sample_of(files)
    todo = [p for p in chosen if p.name not in known]
    if todo:
        if jobs > 1 and len(todo) > 1:
            import multiprocessing

            with multiprocessing.get_context("spawn").Pool(min(jobs, len(todo))) as pool:
                for path, sizes in zip(todo, pool.map(_file_baselines_task, map(str, todo)), strict=True):
                    known[path.name] = sizes
                # Let the workers leave by themselves before the block's terminate(): one
                # killed while it held the task queue's lock leaves the other waiting for that
                # lock, and terminate() then joins it forever (seen once in CI).
                pool.close()
                pool.join()
        else:
            for path in todo:
                known[path.name] = file_baselines(path)
    sample = [known[p.name] for p in chosen]
    totals = {name: sum(s[name] for s in sample) for name in ("raw", "gzip", "zstd", "lz4")}
    if len(chosen) == len(files):
        return totals, known, f"every file ({len(files)}) compressed"
    raw_known = raw_known or {}
    raw = sum(
        known[p.name]["raw"] if p.name in known else raw_known.get(p.name) or raw_bytes(p) for p in files
    )
    sizes = {
        "raw": raw,
        **{name: round(raw * totals[name] / totals["raw"]) for name in ("gzip", "zstd", "lz4")},
    }
    return (
        sizes,
        known,
        (
            f"raw bytes of all {len(files)} files; compressed sizes from "
            f"{len(chosen)} evenly spread files ({totals['raw'] / 1e9:.1f} GB)"
        ),
    )


def _feed(
    buffer: list[bytes], raw: int, gzip: Any, gzip_bytes: int, zstd_writer: Any, lz4_ctx: Any, lz4_bytes: int
) -> tuple[int, int, int]:
    if not buffer:
        return raw, gzip_bytes, lz4_bytes
    chunk = b"\n".join(buffer) + b"\n"
    gzip_bytes += len(gzip.compress(chunk))
    zstd_writer.write(chunk)
    lz4_bytes += len(lz4_ctx.compress(chunk))
    return raw + len(chunk), gzip_bytes, lz4_bytes


def _generated_raw_bytes(data_dir: Path, digests: dict[str, str]) -> dict[str, int]:
    """Raw bytes of the files exactly as the generator wrote them (manifest sha256 = theirs)."""
    manifest = read_manifest(data_dir) if Path(data_dir).is_dir() else None
    if manifest is None:
        return {}
    return {
        entry.name: entry.uncompressed_bytes
        for entry in manifest.files
        if digests.get(entry.name) == entry.sha256 and entry.uncompressed_bytes
    }


def dataset_baselines(data_dir: Path, jobs: int = 1) -> dict[str, int]:
    """The dataset's baselines, from ``baselines.json`` where its per-file figures are cached
    by (name, sha256): adding files to a dataset compresses only the new ones."""
    files = dataset_files(data_dir)
    cache = cache_dir_for(data_dir) / CACHE_NAME
    digests = {path.name: file_sha256(path) for path in files}
    known: dict[str, dict[str, int]] = {}
    try:
        cached = json.loads(cache.read_text())
        if cached.get("format") == FORMAT:
            known = {
                name: entry["sizes"]
                for name, entry in cached["files"].items()
                if digests.get(name) == entry["sha256"]
            }
            if cached.get("dataset") == sorted(digests.items()):
                return cached["sizes"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    sizes, per_file, basis = compute_baselines(
        files, jobs=jobs, known=known, raw_known=_generated_raw_bytes(data_dir, digests)
    )
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(
            json.dumps(
                {
                    "format": FORMAT,
                    "dataset": sorted(digests.items()),
                    "sizes": sizes,
                    "basis": basis,
                    "files": {
                        name: {"sha256": digests[name], "sizes": figures}
                        for name, figures in per_file.items()
                        if name in digests
                    },
                }
            )
        )
        os.replace(tmp, cache)
    except OSError:
        pass  # nowhere writable: keep the figures in memory only
    return sizes
