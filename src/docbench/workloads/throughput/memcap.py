"""The IO-bound scenario's memory cap: a cgroup (v1 memory + blkio controllers) around the
engine's processes.

With 24 GiB of RAM, a benchmark-sized document set always fits in the OS page cache, so
making only the engine's own cache small (PostgreSQL's shared_buffers) still serves every
read from memory. Page-cache pages are charged to the memory cgroup of the process that read
them; capping the cgroup of the server (or of the embedded engine's client processes) keeps
most of the data out of memory, so reads go to the disk. The blkio controller counts the
bytes the cgroup read from the disk, where the kernel accounts them (on this machine kind
only in a cgroup with a throttle limit: the figure stays 0, except under --io-limit). So
each run also records the pages brought into the cgroup's memory (memory.stat pgpgin: with
the cache capped, mostly page-cache misses) and the
sectors read by the machine's block devices during the run (machine-wide: other processes
count too): the proof, per run, that the scenario was IO-bound.

Only processes docbench started are moved into the cgroup, and moved back out before it is
removed. Needs root and cgroup v1 memory/blkio hierarchies (what this machine kind has);
otherwise :func:`availability` says why and the scenario is reported as not run.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from docbench.core.cgroups import CGROUP_ROOT, RunCgroup, descendants
from docbench.core.jsontypes import JsonObject

__all__ = ["CGROUP_ROOT", "MemoryCap", "availability", "block_sectors_read", "descendants", "drop_page_cache"]

CONTROLLERS = ("memory", "blkio")


def block_sectors_read() -> int:
    """Sectors (512 B) read by all whole block devices since boot (machine-wide)."""
    total = 0
    for stat in Path("/sys/block").glob("*/stat"):
        if stat.parent.name.startswith(("loop", "ram")):
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += int(stat.read_text().split()[2])
    return total


def availability() -> str | None:
    """None when a cap can be made here, else the reason it cannot."""
    if os.geteuid() != 0:
        return "needs root (cgroups, dropping the page cache)"
    for controller in CONTROLLERS:
        if not (CGROUP_ROOT / controller / "cgroup.procs").exists():
            return f"no cgroup v1 {controller} hierarchy at {CGROUP_ROOT / controller}"
    return None


class MemoryCap(RunCgroup):
    """The run's cgroup (memory and blkio: core/cgroups.py) with the memory limit; an io
    limit (core/iolimit.py) throttles its blkio cgroup when one is asked."""

    def __init__(self, name: str, limit_bytes: int) -> None:
        super().__init__(name, CONTROLLERS)
        self.limit_bytes = limit_bytes
        self.sectors_at_start = 0

    def __enter__(self) -> MemoryCap:
        super().__enter__()
        try:
            (self.dirs["memory"] / "memory.limit_in_bytes").write_text(str(self.limit_bytes))
        except BaseException:
            self.remove()
            raise
        self.sectors_at_start = block_sectors_read()
        return self

    def usage_bytes(self) -> int:
        return int((self.dirs["memory"] / "memory.usage_in_bytes").read_text())

    def cap_page_cache(self, budget_bytes: int) -> None:
        """Once the engine's processes run (clients connected): drop the page cache and allow
        what they use now plus ``budget_bytes``, which is then all the page cache they get."""
        drop_page_cache()
        self.limit_bytes = self.usage_bytes() + budget_bytes
        (self.dirs["memory"] / "memory.limit_in_bytes").write_text(str(self.limit_bytes))
        self.sectors_at_start = block_sectors_read()

    def lift(self) -> None:
        """No limit (until the next cap_page_cache): the clients of the next tool connect
        without the last one's tightened cap."""
        (self.dirs["memory"] / "memory.limit_in_bytes").write_text(str(1 << 50))

    def reset(self, budget_bytes: int) -> None:
        """Lift the limit, then cap again from the current usage (before a second tool runs
        under the same cap)."""
        (self.dirs["memory"] / "memory.limit_in_bytes").write_text(str(1 << 50))
        self.cap_page_cache(budget_bytes)

    def tighten(self, budget_bytes: int, slack_bytes: int = 16 << 20) -> bool:
        """After the warm-up, when the processes' own (anonymous) memory has grown to its
        working size: limit = that + slack + ``budget_bytes``, so the page cache really is
        about the budget. The kernel evicts cache to get under it; if it cannot (the
        processes' own memory is larger), the old limit stays. True when applied."""
        stat = dict(line.split() for line in (self.dirs["memory"] / "memory.stat").read_text().splitlines())
        limit = int(stat.get("rss", 0)) + int(stat.get("shmem", 0)) + slack_bytes + budget_bytes
        if limit >= self.limit_bytes:
            return False
        try:
            (self.dirs["memory"] / "memory.limit_in_bytes").write_text(str(limit))
        except OSError:
            return False
        self.limit_bytes = limit
        return True

    def stats(self) -> JsonObject:
        """The cap's figures as a run's ``memory_cap`` keeps them."""
        memory = self.dirs["memory"]
        stat = dict(line.split() for line in (memory / "memory.stat").read_text().splitlines())
        return {
            "limit_bytes": self.limit_bytes,
            "max_usage_bytes": int((memory / "memory.max_usage_in_bytes").read_text()),
            "cache_bytes": int(stat.get("cache", 0)),
            "rss_bytes": int(stat.get("rss", 0)),
            "failcnt": int((memory / "memory.failcnt").read_text()),
            "pages_in_bytes": int(stat.get("pgpgin", 0)) * 4096,
            "oom_kills": self.oom_kills(),
            "cgroup_disk_read_bytes": self.disk_read_bytes(),
            "machine_disk_read_bytes": (block_sectors_read() - self.sectors_at_start) * 512,
        }

    def oom_kills(self) -> int | None:
        """Processes the kernel killed for going over the cap (None: not reported here)."""
        with contextlib.suppress(OSError, ValueError):
            for line in (self.dirs["memory"] / "memory.oom_control").read_text().splitlines():
                name, _, value = line.partition(" ")
                if name == "oom_kill":
                    return int(value)
        return None

    def disk_read_bytes(self) -> int:
        text = (self.dirs["blkio"] / "blkio.throttle.io_service_bytes").read_text()
        return sum(
            int(parts[2])
            for parts in (line.split() for line in text.splitlines())
            if len(parts) == 3 and parts[1] == "Read"
        )


def drop_page_cache() -> None:
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")
