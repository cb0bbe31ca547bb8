"""`--io-limit`: the kernel's block-IO throttle on the processes of the engine, as a stand-in
for capped cloud storage.

A limit is ``read_iops=N,write_iops=N,read_bps=SIZE,write_bps=SIZE`` (any of the four; a
missing one is unlimited; counts as ``3000`` or ``3k``, sizes as ``125MiB`` or ``1g``) or a
named profile (:data:`PROFILES`). It is applied with the cgroup block-IO throttle of the
machine -- cgroup v1 ``blkio.throttle.*_device`` files, else cgroup v2 ``io.max`` -- on the
block device that holds the engine's data directory (``os.stat(dir).st_dev``; a partition is
mapped to its whole disk, where the throttle is set), to processes docbench started, in a
cgroup of core/cgroups.py that is removed at the end of the run.

What the throttle does, measured on the machine kind docbench is developed on (cgroup v1
blkio, kernel 6.18, virtio disk): direct reads and direct writes are held to the limit
within a few percent; buffered writes are not throttled when the kernel writes them back (v1
cannot charge writeback to the cgroup that dirtied the pages; cgroup v2 with the memory
controller can), only their fsync's own IO is -- see docs/results/io-limit/ and
`docbench bench io-limit`.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from docbench.core.cgroups import CGROUP_ROOT, UNIFIED, RunCgroup, own_cgroup, v2_mount
from docbench.core.jsontypes import JsonMapping, JsonObject
from docbench.core.units import parse_count, parse_size

MIB = 1 << 20
# Named profiles, from AWS's EBS volume types (docs.aws.amazon.com/ebs/latest/userguide/
# ebs-volume-types.html): gp3's baseline is 3,000 IOPS and 125 MiB/s (more only when
# provisioned); an io1 volume provisioned with 16,000 IOPS, at io1's maximum throughput of
# 1,000 MiB/s. EBS counts IOPS per operation up to 256 KiB (a larger one counts as several);
# the kernel's throttle counts each request the block layer issues, whatever its size.
PROFILES: dict[str, dict[str, int]] = {
    "gp3-3k": {"read_iops": 3000, "write_iops": 3000, "read_bps": 125 * MIB, "write_bps": 125 * MIB},
    "io1-16k": {"read_iops": 16000, "write_iops": 16000, "read_bps": 1000 * MIB, "write_bps": 1000 * MIB},
}
KEYS = ("read_iops", "write_iops", "read_bps", "write_bps")
# cgroup v1 blkio file and cgroup v2 io.max key of each limit.
V1_FILES = {
    "read_iops": "blkio.throttle.read_iops_device",
    "write_iops": "blkio.throttle.write_iops_device",
    "read_bps": "blkio.throttle.read_bps_device",
    "write_bps": "blkio.throttle.write_bps_device",
}
V2_KEYS = {"read_iops": "riops", "write_iops": "wiops", "read_bps": "rbps", "write_bps": "wbps"}


@dataclasses.dataclass(frozen=True)
class IoLimit:
    """What was asked: the text given, and each limit (None: unlimited)."""

    asked: str
    read_iops: int | None = None
    write_iops: int | None = None
    read_bps: int | None = None
    write_bps: int | None = None

    def limits(self) -> dict[str, int]:
        return {key: value for key in KEYS if (value := getattr(self, key)) is not None}

    def label(self) -> str:
        figures = ", ".join(
            f"{key} {value:,}" if key.endswith("iops") else f"{key} {value / MIB:,.0f} MiB/s"
            for key, value in self.limits().items()
        )
        return f"{self.asked} ({figures})" if self.asked in PROFILES else figures


def parse(text: str) -> IoLimit:
    """A profile name or ``key=value`` pairs; ValueError with what is wrong (an unknown key
    or profile, a key twice, a value that is not a positive count or size)."""
    text = text.strip()
    if text in PROFILES:
        return IoLimit(text, **PROFILES[text])
    if "=" not in text:
        raise ValueError(
            f"{text!r}: not a profile ({', '.join(PROFILES)}) nor key=value pairs ({', '.join(KEYS)})"
        )
    values: dict[str, int] = {}
    for item in text.split(","):
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or key not in KEYS:
            raise ValueError(f"{item.strip()!r}: give key=value with key one of {', '.join(KEYS)}")
        if key in values:
            raise ValueError(f"{key} is given twice")
        try:
            number = parse_count(value) if key.endswith("iops") else parse_size(value)
        except ValueError as error:
            raise ValueError(f"{key}: {error}") from None
        if number <= 0:
            raise ValueError(f"{key}: must be above 0 (leave it out for no limit)")
        values[key] = number
    return IoLimit(text, **values)


# ----- where it applies ------------------------------------------------------------------------


def cgroup_version() -> str | None:
    """``v1`` (blkio throttle files), ``v2`` (the io controller) or None: no throttle here."""
    if (CGROUP_ROOT / "blkio" / V1_FILES["read_iops"]).exists():
        return "v1"
    mount = v2_mount()
    if mount is not None:
        try:
            available = (own_cgroup(UNIFIED) / "cgroup.controllers").read_text().split()
        except OSError:
            available = []
        if "io" in available:
            return "v2"
    return None


def device_of(path: Path) -> tuple[int, int]:
    """The block device (major, minor) that holds ``path``: the whole disk when ``path`` is on
    a partition (the throttle is set on disks). ValueError when no block device holds it
    (tmpfs, overlay, a network filesystem: st_dev with no /sys/dev/block entry)."""
    while not path.exists() and path != path.parent:
        path = path.parent  # the data directory may not exist yet: its nearest parent
    number = os.stat(path).st_dev
    major, minor = os.major(number), os.minor(number)
    entry = Path(f"/sys/dev/block/{major}:{minor}")
    if not entry.exists():
        raise ValueError(
            f"{path} is on device {major}:{minor}, which is not a block device (tmpfs, overlay, "
            "a network or multi-device filesystem?): no disk to throttle"
        )
    if (entry / "partition").exists():
        whole = entry.resolve().parent / "dev"
        major, minor = (int(part) for part in whole.read_text().split(":"))
    return major, minor


def device_name(device: tuple[int, int]) -> str:
    try:
        return Path(f"/sys/dev/block/{device[0]}:{device[1]}").resolve().name
    except OSError:
        return f"{device[0]}:{device[1]}"


def refusal(data_dir: Path, euid: int | None = None, version: str | None = "detect") -> str | None:
    """Why the limit cannot be applied here for an engine whose data lives in ``data_dir``
    (None: it can). ``euid`` and ``version`` default to this process's and this machine's."""
    if (os.geteuid() if euid is None else euid) != 0:
        return "--io-limit needs root (it makes a cgroup and moves the engine's processes into it)"
    if version == "detect":
        version = cgroup_version()
    if version is None:
        return (
            f"--io-limit needs a block-IO throttle: no cgroup v1 blkio throttle at "
            f"{CGROUP_ROOT / 'blkio'} and no io controller in the cgroup v2 hierarchy"
        )
    try:
        device_of(data_dir)
    except (OSError, ValueError) as error:
        return f"--io-limit: {error}"
    return None


def hierarchy(version: str) -> str:
    """The RunCgroup hierarchy the throttle is set in."""
    return "blkio" if version == "v1" else UNIFIED


def apply(cgroup_dir: Path, limit: IoLimit, device: tuple[int, int], version: str) -> None:
    """Set the throttle in a cgroup (``cgroup_dir``: its blkio dir on v1, its v2 dir)."""
    major, minor = device
    if version == "v1":
        for key, value in limit.limits().items():
            (cgroup_dir / V1_FILES[key]).write_text(f"{major}:{minor} {value}")
        return
    pairs = " ".join(f"{V2_KEYS[key]}={value}" for key, value in limit.limits().items())
    (cgroup_dir / "io.max").write_text(f"{major}:{minor} {pairs}")


def served(cgroup_dir: Path, version: str, device: tuple[int, int]) -> dict[str, int]:
    """The IO the cgroup's processes issued to the device (as the throttle counted it):
    requests and bytes, read and written. cgroup v1 counts only in a cgroup with a limit on
    the device (with none, as in the memory cap's own cgroup, its counters stay 0)."""
    key = f"{device[0]}:{device[1]}"
    found = {"read_ios": 0, "write_ios": 0, "read_bytes": 0, "write_bytes": 0}
    try:
        if version == "v1":
            for name, unit in (
                ("blkio.throttle.io_serviced", "ios"),
                ("blkio.throttle.io_service_bytes", "bytes"),
            ):
                for parts in (line.split() for line in (cgroup_dir / name).read_text().splitlines()):
                    if len(parts) == 3 and parts[0] == key and parts[1] in ("Read", "Write"):
                        found[f"{parts[1].lower()}_{unit}"] = int(parts[2])
        else:
            for line in (cgroup_dir / "io.stat").read_text().splitlines():
                parts = line.split()
                if parts and parts[0] == key:
                    stat = dict(part.split("=", 1) for part in parts[1:])
                    found = {
                        "read_ios": int(stat.get("rios", 0)),
                        "write_ios": int(stat.get("wios", 0)),
                        "read_bytes": int(stat.get("rbytes", 0)),
                        "write_bytes": int(stat.get("wbytes", 0)),
                    }
    except (OSError, ValueError):
        pass
    return found


def record(limit: IoLimit | None, data_dir: Path | None = None) -> JsonObject | None:
    """What a result's header keeps: the limit asked, the cgroup version and the device."""
    if limit is None:
        return None
    version = cgroup_version()
    device = device_of(data_dir) if data_dir is not None else None
    return {
        "asked": limit.asked,
        "limits": dict(limit.limits()),
        "cgroup": version,
        "device": f"{device[0]}:{device[1]}" if device else None,
        "device_name": device_name(device) if device else None,
    }


def difference(baseline: JsonMapping | None, contender: JsonMapping | None) -> str | None:
    """How two results' io limits differ (the limits themselves), or None."""
    base = (baseline or {}).get("limits") or None
    cont = (contender or {}).get("limits") or None
    if base == cont:
        return None

    def said(record: JsonMapping | None) -> str:
        if not record or not record.get("limits"):
            return "no io limit"
        return f"--io-limit {record['asked']} ({record.get('cgroup')} on {record.get('device_name')})"

    return f"block-IO throttle: baseline {said(baseline)}, contender {said(contender)}"


class Throttled(RunCgroup):
    """A cgroup (core/cgroups.py) with the throttle set, for processes docbench adds to it."""

    def __init__(self, name: str, limit: IoLimit, device: tuple[int, int], version: str) -> None:
        super().__init__(name, (hierarchy(version),))
        self.limit, self.device, self.version = limit, device, version

    def __enter__(self) -> Throttled:
        super().__enter__()
        try:
            apply(self.dirs[hierarchy(self.version)], self.limit, self.device, self.version)
        except BaseException:
            self.remove()
            raise
        return self
