"""The cgroups docbench makes around processes it started: one manager for every use (the io
scenario's memory cap, workloads/throughput/memcap.py; the block-IO throttle, core/iolimit.py).

A :class:`RunCgroup` is one cgroup, named after docbench's PID and the run, in each of the
hierarchies it is given: a cgroup v1 controller (``memory``, ``blkio``: one hierarchy each
under /sys/fs/cgroup/<controller>) or :data:`UNIFIED` (the cgroup v2 hierarchy, wherever it is
mounted). It is made inside docbench's own cgroup of each hierarchy, so it stays within what
the machine already allows docbench. Only processes docbench started go in (by PID, with
their descendants); on leaving the ``with`` block -- normally, on an exception or on Ctrl-C --
every process still inside is moved back to the parent cgroup, then the cgroup is removed.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
# The name by which a RunCgroup asks for the cgroup v2 hierarchy (not a v1 controller).
UNIFIED = "unified"


def v2_mount() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted (None: it is not)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) > 2 and parts[2] == "cgroup2":
                return Path(parts[1])
    return None


def own_cgroup(controller: str) -> Path:
    """This process's cgroup in a v1 hierarchy (``controller``) or in the v2 one
    (:data:`UNIFIED`): new cgroups are made inside it."""
    lines = Path("/proc/self/cgroup").read_text().splitlines()
    if controller == UNIFIED:
        mount = v2_mount() or CGROUP_ROOT
        for line in lines:
            number, names, path = line.split(":", 2)
            if number == "0" and names == "":
                return mount / path.lstrip("/")
        return mount
    for line in lines:
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return CGROUP_ROOT / controller / path.lstrip("/")
    return CGROUP_ROOT / controller


def descendants(pid: int) -> list[int]:
    """The process and all its descendants (from /proc's parent links)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            stat = (entry / "stat").read_text()
            parent = int(stat[stat.rindex(")") + 2 :].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


class RunCgroup:
    """One cgroup per hierarchy in ``controllers`` (see the module's docstring)."""

    def __init__(self, name: str, controllers: tuple[str, ...]) -> None:
        self.name = name
        self.dirs = {c: own_cgroup(c) / f"docbench-{os.getpid()}-{name}" for c in controllers}
        self.members: list[int] = []

    def __enter__(self) -> RunCgroup:
        try:
            for controller, path in self.dirs.items():
                if controller == UNIFIED:
                    # A v2 cgroup gets the io controller only when its parent passes it down.
                    with contextlib.suppress(OSError):
                        (path.parent / "cgroup.subtree_control").write_text("+io")
                path.mkdir(exist_ok=True)
        except BaseException:
            self.remove()
            raise
        return self

    def procs_files(self) -> list[str]:
        """Files a process writes its own PID to, to join (the embedded engines' workers)."""
        return [str(path / "cgroup.procs") for path in self.dirs.values()]

    def add_tree(self, pid: int) -> None:
        """The process and its descendants, into the cgroup (of every hierarchy)."""
        for member in descendants(pid):
            for path in self.dirs.values():
                with contextlib.suppress(OSError):  # a short-lived child may be gone
                    (path / "cgroup.procs").write_text(str(member))
            self.members.append(member)

    def processes(self) -> list[int]:
        """The processes in the cgroup now (of any hierarchy)."""
        found: set[int] = set()
        for path in self.dirs.values():
            with contextlib.suppress(OSError):
                found.update(int(pid) for pid in (path / "cgroup.procs").read_text().split())
        return sorted(found)

    def remove(self) -> None:
        """Every process still inside back to the parent cgroup, then the cgroup removed."""
        for path in self.dirs.values():
            parent = path.parent / "cgroup.procs"
            with contextlib.suppress(OSError):
                for pid in (path / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        parent.write_text(pid)
            with contextlib.suppress(OSError):
                path.rmdir()

    def __exit__(self, *exc: object) -> None:
        self.remove()
