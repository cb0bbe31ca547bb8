"""The JVM a node runs on: which JDK, and how much heap."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from docbench.core.machine import machine_memory
from docbench.core.units import parse_size

GiB = 1 << 30
MiB = 1 << 20
JVM_ROOT = Path("/usr/lib/jvm")


def heap_size(ram: int | None = None) -> int:
    """JVM heap: 1/8 of RAM between 1 and 8 GiB (the rest stays page cache for Lucene's
    memory-mapped files); ``DOCBENCH_SEARCH_HEAP`` (e.g. ``2g``) overrides it."""
    override = os.environ.get("DOCBENCH_SEARCH_HEAP")
    if override:
        return parse_size(override)
    ram = ram if ram is not None else machine_memory()
    return min(max(ram // 8, 1 * GiB), 8 * GiB) // MiB * MiB


def find_java_home(accepted: tuple[int, ...]) -> Path | None:
    """A JDK of one of the accepted major versions (first preferred); ``DOCBENCH_JAVA_HOME``
    overrides the search."""
    override = os.environ.get("DOCBENCH_JAVA_HOME")
    if override:
        return Path(override)
    roots = sorted(JVM_ROOT.glob("*")) if JVM_ROOT.is_dir() else []
    for major in accepted:
        for root in roots:
            if root.is_symlink() or not (root / "bin" / "java").exists():
                continue
            if jdk_major(root) == major:
                return root
    java_home = os.environ.get("JAVA_HOME")
    if java_home and jdk_major(Path(java_home)) in accepted:
        return Path(java_home)
    return None


def jdk_major(root: Path) -> int | None:
    """The major version of the JDK in ``root``: its ``release`` file, else its name."""
    release = root / "release"
    with contextlib.suppress(OSError):
        match = re.search(r'JAVA_VERSION="(\d+)', release.read_text())
        if match:
            return int(match.group(1))
    match = re.search(r"(?:java-|jdk-?|openjdk-)(\d+)", root.name)
    return int(match.group(1)) if match else None
