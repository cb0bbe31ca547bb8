"""Per-process measurements from /proc: peak resident memory and bytes read from storage.

Peak memory of one query = VmHWM after the query, with the high-water mark reset just before
it by writing "5" to /proc/PID/clear_refs (Linux >= 4.0). ``read_bytes`` in /proc/PID/io
counts bytes the process caused to be fetched from the block layer, so a cold query (page
cache dropped) shows its disk reads and a hot one shows ~0.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class ProcSample:
    peak_rss: int | None
    read_bytes: int | None


def reset_peak(pid: int) -> bool:
    """Reset VmHWM to the current RSS; False when not permitted (not root, other user)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def read_bytes(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class QueryMeter:
    """Brackets one query try on a set of processes."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self._read_before: dict[int, int | None] = {}
        self.reset_ok = True

    def __enter__(self) -> QueryMeter:
        for pid in self.pids:
            self.reset_ok &= reset_peak(pid)
            self._read_before[pid] = read_bytes(pid)
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def sample(self) -> ProcSample:
        peaks = [peak_rss(pid) for pid in self.pids]
        reads = []
        for pid in self.pids:
            before, after = self._read_before.get(pid), read_bytes(pid)
            if before is not None and after is not None:
                reads.append(after - before)
        known_peaks = [p for p in peaks if p is not None]
        return ProcSample(
            peak_rss=sum(known_peaks) if known_peaks else None,
            read_bytes=sum(reads) if reads else None,
        )


def drop_page_cache() -> bool:
    """Write dirty pages and drop the OS page cache; False when not permitted (not root)."""
    with contextlib.suppress(OSError):
        os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def can_drop_page_cache() -> bool:
    return os.geteuid() == 0 and os.access("/proc/sys/vm/drop_caches", os.W_OK)


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def total_memory() -> int:
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return 0


def os_name() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    return "unknown"


def git_revision(path: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        dirty = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def process_start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks after boot, field 22 of /proc/PID/stat); None
    if there is no such process or it is a zombie (dead, not yet reaped). A PID is reused,
    (PID, start time) is not: a process is known by both."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return None if fields[0] in ("Z", "X") else int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def boot_id() -> str:
    """This boot's id: a (PID, start time) from another boot names no process of this one."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def own_peak_rss() -> int:
    """Peak resident memory of this process so far (bytes): docbench's own cost, without the
    engines' servers and the query worker processes."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
