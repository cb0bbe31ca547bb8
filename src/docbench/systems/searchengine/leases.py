"""Soft deletes: what a merge may drop.

A shard keeps every operation its retention leases still retain (deleted or updated documents,
and ``_recovery_source`` without ``_source``) until the leases move past them at a background
sync (every 30 s, not configurable outside the engines' own tests); only a merge after that
drops them. The updates and storage workloads wait for it before the merge that measures
reclaimed space.
"""

from __future__ import annotations

import time
from urllib.parse import quote

from docbench.core.jsontypes import as_object
from docbench.systems.searchengine.http import HttpClient, member_object, objects, to_int

# The background sync renews the leases every 30 s: a wait for one, with a margin.
LEASE_TIMEOUT = 90.0


def retention(client: HttpClient, index: str) -> tuple[int, int | None]:
    """(max seq_no of the index's shard copies, lowest seq_no their retention leases retain)."""
    answer = client.request("GET", f"/{quote(index)}/_stats/docs?level=shards")
    groups = member_object(answer, "indices", index, "shards").values()
    copies = [shard for group in groups for shard in objects(group, "shard copies")]
    leases = [
        to_int(lease["retaining_seq_no"])
        for shard in copies
        for lease in objects(
            as_object(shard.get("retention_leases") or {}, "retention_leases").get("leases") or [], "leases"
        )
    ]
    return max(to_int(member_object(c, "seq_no")["max_seq_no"]) for c in copies), min(
        leases
    ) if leases else None


def wait_for_retention_leases(client: HttpClient, index: str, timeout: float = LEASE_TIMEOUT) -> float | None:
    """Seconds until no retention lease retains an operation of the index any more (None:
    still retained after ``timeout`` seconds)."""
    started = time.monotonic()
    while True:
        max_seq_no, retained = retention(client, index)
        waited = time.monotonic() - started
        if retained is None or retained > max_seq_no:
            return waited
        if waited > timeout:
            return None
        time.sleep(0.5)
