"""Facts about the machine every engine sizes itself from."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from docbench.core.units import parse_size

_CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def machine_memory(override_env: str | None = None) -> int:
    """RAM docbench may plan for: physical memory, capped by a cgroup limit when there is one.

    ``override_env`` names an environment variable (``DOCBENCH_POSTGRESQL_RAM=8G``) that wins
    when set, e.g. when the machine is shared with something else.
    """
    if override_env and os.environ.get(override_env):
        return parse_size(os.environ[override_env])
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in _CGROUP_LIMITS:
        with contextlib.suppress(OSError, ValueError):
            text = Path(limit_file).read_text().strip()
            if text != "max" and 0 < int(text) < total:
                total = int(text)
    return total
