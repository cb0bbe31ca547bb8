"""What a reader needs to judge the figures: hardware, OS, versions, docbench revision."""

from __future__ import annotations

import os
import platform
import re
from datetime import UTC, datetime
from functools import cache

from docbench import __version__
from docbench.core import paths, procstats
from docbench.core.jsontypes import JsonObject, as_float


@cache
def environment() -> JsonObject:
    memory = procstats.total_memory()
    return {
        "cpu_model": procstats.cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": memory,
        "os": procstats.os_name(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "docbench_version": __version__,
        "docbench_git_revision": procstats.git_revision(paths.repo_root()),
        "hostname": platform.node(),
        "root": os.geteuid() == 0,
    }


def machine_label() -> str:
    env = environment()
    return f"{env['cores']} cores, {as_float(env['memory_bytes']) / 2**30:.0f} GiB, {env['cpu_model']}"


def slug(hostname: str | None) -> str:
    """A host name as it appears in result file names."""
    return re.sub(r"[^A-Za-z0-9-]+", "-", hostname or "machine").strip("-")[:40] or "machine"


def machine_slug() -> str:
    """This machine's name as it appears in result file names."""
    return slug(platform.node())


def today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def stamp() -> str:
    """UTC start time in file names: 20261124T091500Z."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
