"""The oracle's native scanner (``docbench-scan``, Rust, ``native/docbench-gen/src/scan.rs``).

It reads a file (or a byte range of a plain one) and aggregates the lines it can judge
exactly: valid UTF-8 that serde_json reads as an object with ``did``, ``time_us`` (an i64),
``kind`` and ``commit.collection``/``commit.operation`` (strings), each key once. Every
other line comes back as bytes and the oracle's Python scan judges it (the full parse and
its fallbacks): the semantics stay in :mod:`docbench.dataset.oracle` (its ``semantics.py``
and ``scan.py``). The scanner is an accelerator: without the binary (or with
``DOCBENCH_ORACLE_NATIVE=0``) the oracle scans in Python and gets the same answers (tests
compare both).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from docbench.core import paths

BINARY_NAME = "docbench-scan"
DISABLE_ENV = "DOCBENCH_ORACLE_NATIVE"  # "0": always the Python scan
COMPRESSIONS = ("none", "gzip", "zstd")
_CRATE = Path("native") / "docbench-gen"


class NativeScanError(RuntimeError):
    """The scanner failed (the caller scans the file in Python, which names the problem)."""


@dataclass
class NativeResult:
    header: dict
    colls: list[tuple[list, np.ndarray, np.ndarray]]  # (header entry, hi, lo)
    posts: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # hi, lo, min, max
    handed_back: list[bytes]


def _sources_mtime() -> float:
    crate = paths.repo_root() / _CRATE
    newest = 0.0
    for p in [crate / "Cargo.toml", crate / "Cargo.lock", *(crate / "src").glob("*.rs")]:
        if p.exists():
            newest = max(newest, p.stat().st_mtime)
    return newest


# Where a wheel (`make wheel`) carries the programs: docbench installed without a Rust toolchain.
PACKAGED = Path(__file__).resolve().parents[1] / "native_bin"


def find_native(name: str) -> Path | None:
    """One of the crate's programs (``docbench-gen``, ``docbench-scan``, ``docbench-client``):
    ``<opt>/bin/NAME``, the crate's release build or the one a wheel carries, whichever exists
    first and is not older than the sources (a stale build is not used; an installed wheel has
    no sources beside it)."""
    src = _sources_mtime()
    candidates = (
        paths.opt_dir() / "bin" / name,
        paths.repo_root() / _CRATE / "target" / "release" / name,
        PACKAGED / name,
    )
    for cand in candidates:
        if cand.is_file() and os.access(cand, os.X_OK) and cand.stat().st_mtime >= src:
            return cand
    return None


def find_scanner() -> Path | None:
    """The scanner (see :func:`find_native`); None when disabled or absent."""
    if os.environ.get(DISABLE_ENV, "1") == "0":
        return None
    return find_native(BINARY_NAME)


def scan_file(
    binary: Path,
    path: Path,
    compression: str,
    post_collection: str,
    *,
    start: int = 0,
    end: int | None = None,
    want_sha: bool = False,
) -> NativeResult:
    command = [str(binary), str(path), "--compression", compression, "--post", post_collection]
    if start or end is not None:
        command += ["--start", str(start), "--end", str(end)]
    if want_sha:
        command.append("--sha256")
    proc = subprocess.run(command, capture_output=True, stdin=subprocess.DEVNULL, check=False)
    if proc.returncode != 0:
        raise NativeScanError(proc.stderr.decode("utf-8", "replace").strip()[-500:])
    return _decode(proc.stdout)


def scan_output_of(binary: Path, producer: list[str], post_collection: str) -> NativeResult:
    """Scan what ``producer`` (a command) writes to its stdout, through a pipe: nothing on
    disk (the generator's faithfulness at scales whose data would not fit)."""
    with subprocess.Popen(
        producer, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as source:
        assert source.stdout is not None
        proc = subprocess.run(
            [str(binary), "/dev/stdin", "--compression", "none", "--post", post_collection],
            stdin=source.stdout,
            capture_output=True,
            check=False,
        )
        source.stdout.close()
        errors = source.stderr.read() if source.stderr else b""
        source.wait()
    if source.returncode != 0:
        raise NativeScanError(
            f"{producer[0]} exited {source.returncode}: {errors.decode('utf-8', 'replace').strip()[-500:]}"
        )
    if proc.returncode != 0:
        raise NativeScanError(proc.stderr.decode("utf-8", "replace").strip()[-500:])
    return _decode(proc.stdout)


def _decode(out: bytes) -> NativeResult:
    newline = out.index(b"\n")
    header = json.loads(out[:newline])
    pos = newline + 1

    def take(n: int, dtype) -> np.ndarray:
        nonlocal pos
        a = np.frombuffer(out, dtype=dtype, count=n, offset=pos)
        pos += 8 * n
        return a

    colls = []
    for entry in header["colls"]:
        n = entry[4]
        colls.append((entry, take(n, "<u8").astype(np.uint64), take(n, "<u8").astype(np.uint64)))
    n = header["posts"]
    posts = (
        take(n, "<u8").astype(np.uint64),
        take(n, "<u8").astype(np.uint64),
        take(n, "<i8").astype(np.int64),
        take(n, "<i8").astype(np.int64),
    )
    k = header["handed_back"]
    lengths = np.frombuffer(out, dtype="<u4", count=k, offset=pos).tolist()
    pos += 4 * k
    lines = []
    for length in lengths:
        lines.append(out[pos : pos + length])
        pos += length
    if pos != len(out):
        raise NativeScanError(f"output of {len(out)} bytes, {pos} decoded")
    return NativeResult(header, colls, posts, lines)


def children_cpu() -> float:
    """CPU seconds of this process's finished children (the scanners, for the summary)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
