"""Data types every contract speaks."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISLNK

from docbench.core.jsontypes import JsonObject


class BatchRejected(Exception):
    """The engine refused a batch of documents because of their content; nothing of it was kept.

    Any other exception means the system itself failed (server gone, disk full) and stops the
    load. When the engine says which documents it refused (e.g. a bulk API's per-item errors),
    pass them as ``refused`` (index in the batch -> reason): the driver then records those and
    loads the rest at once instead of bisecting.
    """

    def __init__(self, message: str, refused: dict[int, str] | None = None) -> None:
        super().__init__(message)
        self.refused = refused or {}


class NotSupported(Exception):
    """An optional capability the engine or adapter does not have (the reason is the message)."""


@dataclass(frozen=True)
class Variant:
    """One storage configuration of a system (a compression codec, a column type...)."""

    name: str
    description: str
    # "default" = the system's out-of-the-box storage, "best" = its best compression; the
    # storage report puts these two side by side as JSONBench does.
    role: str = "default"
    settings: JsonObject = field(default_factory=dict)
    # True when the variant reconfigures the server itself: it runs on docbench's own managed
    # server only, not on a server reached by URL (which is not docbench's to change).
    own_server_only: bool = False

    def chosen(
        self, names: list[str] | None, representations: bool = False, defaults_only: bool = False
    ) -> bool:
        """Whether a run takes this variant: named in ``names`` (--variants), else every
        variant but the representations (role "representation"), unless those are asked for;
        with ``defaults_only`` (--default-variants) only the out-of-the-box one (role
        "default") of the others."""
        if names:
            return self.name in names
        if self.role == "representation":
            return representations
        return self.role == "default" or not defaults_only


def variant_named(variants: list[Variant], name: str, owner: str) -> Variant:
    for variant in variants:
        if variant.name == name:
            return variant
    raise KeyError(f"{owner} has no variant {name!r} (known: {', '.join(v.name for v in variants)})")


@dataclass
class Availability:
    """Whether a system can run on this machine, and if not why and how to fix it."""

    ok: bool
    version: str | None = None
    reason: str | None = None
    install_hint: str | None = None
    # The machine lacks something docbench cannot install (a full JDK 21+ on Debian 12):
    # `docbench setup all` reports the system as not available here instead of failing.
    machine_lacks: bool = False


@dataclass
class StorageSize:
    """Bytes on disk, from the system's own introspection plus a directory walk as a check."""

    total: int | None
    data: int | None
    index: int | None
    # Size of the system's data directory on disk (st_blocks * 512), where docbench owns one.
    on_disk: int | None = None
    detail: JsonObject = field(default_factory=dict)


def directory_size(path: Path) -> int:
    """Bytes allocated on disk under path (like `du -s --block-size=1`).

    Tolerates files and directories vanishing during the walk (engines delete old parts and
    WAL segments in the background).
    """
    total = 0
    for root, _dirs, files in os.walk(path, onerror=lambda _error: None):
        for name in files:
            try:
                stat = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if not S_ISLNK(stat.st_mode):
                total += stat.st_blocks * 512
    return total


def command_version(argv: list[str]) -> str | None:
    """First line of a program's --version output, or None if it does not run."""
    if not shutil.which(argv[0]) and not Path(argv[0]).exists():
        return None
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None
