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


# ----- a process tree over a run (the engine's CPU and memory while clients query it) -----


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command name (which may hold spaces): field 3 onwards."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def process_tree(roots: list[int]) -> list[int]:
    """The roots and every process descending from them (a server's backends and workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields and len(fields) > 1:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    # Parents before their children (breadth first): summed in this order, a child that ends
    # and is reaped between two readings is counted in its parent's cutime or in its own
    # reading, never in both (see cpu_seconds).
    found, pending = [], list(roots)
    while pending:
        pid = pending.pop(0)
        if pid not in found:
            found.append(pid)
            pending.extend(children.get(pid, []))
    return found


def cpu_seconds(pids: list[int]) -> float:
    """CPU time (user + system) the processes used so far, with that of their children that
    have ended and been reaped (the kernel adds those to the parent's cutime/cstime): summed
    over a whole process tree, a backend that ends between two readings moves into its
    parent's figure and is neither lost nor counted twice."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = _stat_fields(pid)
        if fields and len(fields) > 14:
            total += sum(int(value) for value in fields[11:15])
    return total / ticks


def pss_bytes(pids: list[int]) -> int:
    """Memory of the processes now, as proportional set size (Pss, /proc/PID/smaps_rollup):
    pages shared between them (a server's shared buffers, mapped by every backend) count
    once in the sum, not once per process; VmRSS where smaps_rollup cannot be read."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
                    break
            continue
        except OSError:
            pass
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


class TreeMonitor:
    """A process tree over a measured window: its CPU time between :meth:`window_start` and
    :meth:`window_end` (each takes its reading the first time it is called), and its memory
    (PSS) sampled on a thread meanwhile, so a peak shorter than the interval can be missed:
    the interval is in the record. No roots: nothing is read."""

    def __init__(self, roots: list[int], interval_s: float = 1.0) -> None:
        import threading

        self.roots = roots
        self.interval_s = interval_s
        self.peak_pss = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._start: tuple[float, float] | None = None  # (monotonic, CPU seconds)
        self._end: tuple[float, float] | None = None

    def _cpu_now(self) -> tuple[float, float]:
        import time

        return time.monotonic(), cpu_seconds(process_tree(self.roots))

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            if self._start is not None and self._end is None:
                self.peak_pss = max(self.peak_pss, pss_bytes(process_tree(self.roots)))
                self.samples += 1

    def window_start(self) -> None:
        if self._start is None and self.roots:
            self._start = self._cpu_now()

    def window_end(self) -> None:
        if self._start is not None and self._end is None:
            self._end = self._cpu_now()

    def __enter__(self) -> TreeMonitor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def record(self) -> dict[str, float | int | None]:
        """CPU seconds used over the window, the average number of cores that is, and the
        peak memory sampled in it (None where the window was never reached)."""
        if self._start is None or self._end is None:
            return {"cpu_seconds": None, "cores": None, "peak_pss_bytes": None, "samples": 0}
        wall = max(1e-9, self._end[0] - self._start[0])
        used = max(0.0, self._end[1] - self._start[1])
        return {
            "cpu_seconds": round(used, 3),
            "cores": round(used / wall, 3),
            "peak_pss_bytes": self.peak_pss or None,
            "samples": self.samples,
            "interval_s": self.interval_s,
        }
