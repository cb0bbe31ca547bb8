"""`docbench bench io-limit`: how precisely the machine's block-IO throttle (core/iolimit.py)
holds a limit, measured with dd before anything is built on it.

For each limit L (IOPS) and each kind of IO, dd moves ``L * seconds`` blocks of 4 KiB through
a cgroup throttled at L (the same cgroup, device and files ``--io-limit`` uses), so a throttle
that holds makes it last ``seconds``. The IOPS observed are the requests the disk completed
during dd (/proc/diskstats of the device: reads or writes completed) over its wall time, set
against the limit asked:

* ``read-direct``: ``dd iflag=direct`` (one 4 KiB read per request) under read_iops=L;
* ``write-direct``: ``dd oflag=direct conv=notrunc`` under write_iops=L;
* ``write-fsync``: buffered ``dd conv=fsync`` under write_bps=L*4 KiB/s (buffered pages are
  merged into large requests, so bytes per second is the limit that can bite): the fsync is
  issued by dd, in the cgroup;
* ``write-flusher``: buffered ``dd`` without fsync under the same write_bps, then ``sync``
  from outside the cgroup (docbench itself): the write-back the kernel does for the cgroup,
  which cgroup v1 does not charge to it.

Each kind also runs once without a limit (the device's own rate) so that a limit above what
the disk does is not mistaken for a throttle that holds.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from docbench.core import iolimit

BLOCK = 4096
KINDS = ("read-direct", "write-direct", "write-fsync", "write-flusher")


class ProbeRecord(TypedDict):
    """One probe as the figures' JSON holds it: the fields of :class:`Probe`, then its rates."""

    kind: str
    limit: int | None
    blocks: int
    seconds: float
    requests: int
    cgroup_requests: int | None
    expected_s: float | None
    observed_iops: float
    block_rate: float


class ProbeReport(TypedDict):
    """What :func:`run_probes` measured (``bench io-limit --json``)."""

    device: str
    device_name: str
    cgroup: str
    kernel: str
    block_bytes: int
    seconds_asked: float
    probes: list[ProbeRecord]


@dataclasses.dataclass
class Probe:
    kind: str
    limit: int | None  # IOPS asked (None: no throttle)
    blocks: int
    seconds: float
    requests: int  # completed by the disk during the probe (reads or writes)
    cgroup_requests: int | None  # as the cgroup's own blkio counters saw them (v1)

    @property
    def expected_s(self) -> float | None:
        return self.blocks / self.limit if self.limit else None

    @property
    def observed_iops(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def block_rate(self) -> float:
        """4 KiB blocks moved per second (what the limit asked, for every kind)."""
        return self.blocks / self.seconds if self.seconds else 0.0

    def as_dict(self) -> ProbeRecord:
        return {
            "kind": self.kind,
            "limit": self.limit,
            "blocks": self.blocks,
            "seconds": self.seconds,
            "requests": self.requests,
            "cgroup_requests": self.cgroup_requests,
            "expected_s": self.expected_s,
            "observed_iops": self.observed_iops,
            "block_rate": self.block_rate,
        }


def disk_counts(device: tuple[int, int]) -> tuple[int, int]:
    """(reads completed, writes completed) of the device since boot (/proc/diskstats)."""
    for line in Path("/proc/diskstats").read_text().splitlines():
        parts = line.split()
        if int(parts[0]) == device[0] and int(parts[1]) == device[1]:
            return int(parts[3]), int(parts[7])
    raise ValueError(f"device {device[0]}:{device[1]} is not in /proc/diskstats")


def make_file(path: Path, size: int) -> None:
    """The probe's file, written once (random bytes: nothing below can compress them)."""
    if path.is_file() and path.stat().st_size >= size:
        return
    chunk = os.urandom(1 << 20)
    with path.open("wb") as handle:
        for _ in range(size // len(chunk)):
            handle.write(chunk)
        handle.flush()
        os.fsync(handle.fileno())


def _cgroup_requests(group: iolimit.Throttled | None, direction: str) -> int | None:
    if group is None or group.version != "v1":
        return None
    text = (group.dirs["blkio"] / "blkio.throttle.io_serviced").read_text()
    return sum(
        int(parts[2])
        for parts in (line.split() for line in text.splitlines())
        if len(parts) == 3 and parts[1] == direction
    )


def _dd_args(kind: str, path: Path, blocks: int, offset_blocks: int) -> list[str]:
    common = [f"bs={BLOCK}", f"count={blocks}", "status=none"]
    if kind == "read-direct":
        return ["dd", f"if={path}", "of=/dev/null", "iflag=direct", f"skip={offset_blocks}", *common]
    target = [
        f"of={path}",
        f"seek={offset_blocks}",
        "conv=notrunc" + (",fsync" if kind == "write-fsync" else ""),
    ]
    flags = ["oflag=direct"] if kind == "write-direct" else []
    return ["dd", "if=/dev/zero", *target, *flags, *common]


def probe(
    kind: str,
    limit: int | None,
    blocks: int,
    path: Path,
    device: tuple[int, int],
    version: str,
    offset_blocks: int = 0,
) -> Probe:
    """One dd of ``blocks`` 4 KiB blocks of ``kind``, throttled at ``limit`` (None: not)."""
    if kind == "read-direct":
        asked = f"read_iops={limit}"
    elif kind == "write-direct":
        asked = f"write_iops={limit}"
    else:
        asked = f"write_bps={(limit or 0) * BLOCK}"
    os.sync()  # nothing dirty from before counts in this probe
    group = iolimit.Throttled(f"io-probe-{kind}", iolimit.parse(asked), device, version) if limit else None
    direction = "Read" if kind == "read-direct" else "Write"
    if group is not None:
        group.__enter__()
    try:
        procs = group.procs_files()[0] if group is not None else None

        def join() -> None:  # in the child, before dd runs: dd is in the cgroup from its start
            if procs:
                Path(procs).write_text(str(os.getpid()))

        before = disk_counts(device)
        started = time.perf_counter()
        subprocess.run(_dd_args(kind, path, blocks, offset_blocks), check=True, preexec_fn=join)
        if kind == "write-flusher":
            os.sync()  # docbench's own sync, outside the cgroup: the kernel's write-back
        seconds = time.perf_counter() - started
        after = disk_counts(device)
        in_cgroup = _cgroup_requests(group, direction)
    finally:
        if group is not None:
            group.__exit__(None, None, None)
    index = 0 if kind == "read-direct" else 1
    return Probe(kind, limit, blocks, seconds, after[index] - before[index], in_cgroup)


def run_probes(
    directory: Path,
    limits: list[int],
    seconds: float,
    kinds: tuple[str, ...] = KINDS,
    say: Callable[[str], None] = print,
    file_bytes: int = 1 << 30,
) -> ProbeReport:
    """Every kind without a limit, then under each limit: the figures, as a document."""
    version = iolimit.cgroup_version()
    problem = iolimit.refusal(directory)
    if problem or version is None:
        raise RuntimeError(problem or "no block-IO throttle here")
    directory.mkdir(parents=True, exist_ok=True)
    device = iolimit.device_of(directory)
    path = directory / "io-probe.bin"
    say(
        f"probe file {path} ({file_bytes >> 20} MiB) on {iolimit.device_name(device)} {device[0]}:{device[1]}"
    )
    make_file(path, file_bytes)
    say(HEADER)
    total_blocks = file_bytes // BLOCK
    probes: list[Probe] = []
    cursor = 0
    for limit in [None, *limits]:
        for kind in kinds:
            blocks = int((limit or max(limits)) * seconds)
            blocks = min(blocks, total_blocks)
            if cursor + blocks > total_blocks:
                cursor = 0  # (each probe at other offsets: the device's own cache stays cold)
            result = probe(kind, limit, blocks, path, device, version, cursor)
            cursor += blocks
            probes.append(result)
            say(format_row(result))
    return {
        "device": f"{device[0]}:{device[1]}",
        "device_name": iolimit.device_name(device),
        "cgroup": version,
        "kernel": os.uname().release,
        "block_bytes": BLOCK,
        "seconds_asked": seconds,
        "probes": [p.as_dict() for p in probes],
    }


HEADER = (
    f"{'kind':<14} {'limit':>6} {'blocks':>7} {'expected s':>10} {'took s':>7} "
    f"{'disk reqs':>9} {'disk IOPS':>9} {'4k blocks/s':>11} {'of limit':>8} {'cgroup reqs':>11}"
)


def format_row(result: Probe) -> str:
    expected = f"{result.expected_s:.1f}" if result.expected_s else "-"
    share = f"{result.block_rate / result.limit:.1%}" if result.limit else "-"
    cgroup = "-" if result.cgroup_requests is None else str(result.cgroup_requests)
    return (
        f"{result.kind:<14} {result.limit or 'none':>6} {result.blocks:>7} {expected:>10} "
        f"{result.seconds:>7.2f} {result.requests:>9} {result.observed_iops:>9.0f} "
        f"{result.block_rate:>11.0f} {share:>8} {cgroup:>11}"
    )
