"""What every workload does to its own index: (re)create it, refresh, count, merge it to one
segment (the clean state the analytics load ends in and the sizes are measured on).

Every index docbench creates carries ``"_meta": {"created_by": "created by docbench ..."}`` in
its mapping. :func:`recreate` drops an index of that name only when it has the mark: an
unmarked one is someone else's (ForeignDatabase, nothing changed). A managed node's indexes
from a docbench before the mark are marked when the node starts (:func:`mark_all`).
"""

from __future__ import annotations

import contextlib
import copy
from typing import TYPE_CHECKING
from urllib.parse import quote

from docbench.core.jsontypes import JsonObject, as_object, as_str
from docbench.core.ownership import MARKER_TEXT, ForeignDatabase, foreign_message, is_marked
from docbench.systems.searchengine.http import MERGE_TIMEOUT, HttpClient, member, objects, to_int

META_KEY = "created_by"

if TYPE_CHECKING:
    from docbench.systems.searchengine.engine import SearchEngineBase


def index_path(index: str) -> str:
    return f"/{quote(index)}"


def marked(definition: JsonObject) -> JsonObject:
    """The index definition with docbench's mark in its mapping's ``_meta``."""
    definition = copy.deepcopy(definition)
    mappings = as_object(definition.setdefault("mappings", {}), "mappings")
    mappings["_meta"] = {**as_object(mappings.get("_meta") or {}, "_meta"), META_KEY: MARKER_TEXT}
    return definition


def state(client: HttpClient, index: str) -> str:
    """``absent``, ``docbench`` (an index with docbench's mark) or ``foreign`` (an index
    without it, or an alias / data stream of that name)."""
    answer = client.request("GET", f"{index_path(index)}/_mapping", ok=(200, 404))
    if isinstance(answer, dict) and "error" in answer:
        return "absent"
    mapping = as_object(as_object(answer or {}, "mapping").get(index) or {}, index)
    meta = as_object(as_object(mapping.get("mappings", {}), "mappings").get("_meta") or {}, "_meta")
    return "docbench" if is_marked(meta.get(META_KEY)) else "foreign"


def foreign_index_message(client: HttpClient, index: str) -> str:
    return foreign_message(
        f"index {index!r}",
        client.endpoint.name,
        f"DELETE /{index}",
        f'PUT /{index}/_mapping {{"_meta": {{"{META_KEY}": "created by docbench"}}}}',
    )


def recreate(client: HttpClient, index: str, definition: JsonObject) -> None:
    """Drop docbench's index (if there) and create it empty and marked: nothing else is
    touched, and an index of that name docbench did not create is not dropped."""
    found = state(client, index)
    if found == "foreign":
        raise ForeignDatabase(foreign_index_message(client, index))
    if found == "docbench":
        client.request("DELETE", index_path(index), ok=(200, 404))
    client.request("PUT", index_path(index), marked(definition), what=f"create index {index}")


def mark(client: HttpClient, index: str) -> None:
    """Add docbench's mark to an index's mapping (``_meta`` is replaced whole: keep the rest)."""
    answer = client.request_object("GET", f"{index_path(index)}/_mapping")
    mapping = as_object(answer.get(index) or {}, index)
    meta = as_object(as_object(mapping.get("mappings") or {}, "mappings").get("_meta") or {}, "_meta")
    client.request(
        "PUT",
        f"{index_path(index)}/_mapping",
        {"_meta": {**meta, META_KEY: MARKER_TEXT}},
        what=f"mark index {index}",
    )


def mark_all(client: HttpClient) -> list[str]:
    """Mark every unmarked index of a node docbench owns (its managed node: all of its indexes
    are docbench's, those of a docbench before the mark too); the names marked."""
    rows = client.request("GET", "/_cat/indices?format=json&h=index&expand_wildcards=open")
    done = []
    for name in sorted(as_str(row["index"], "index") for row in objects(rows or [], "_cat/indices")):
        if not name.startswith(".") and state(client, name) == "foreign":
            mark(client, name)
            done.append(name)
    return done


def refresh(client: HttpClient, index: str) -> None:
    client.request("POST", f"{index_path(index)}/_refresh")


class ShardsLost(RuntimeError):
    """Some of an index's shards cannot be read (their node is down and they have no copy
    elsewhere): the documents in them are lost to the run, and counted as such."""

    def __init__(self, index: str, reachable: int, failed: int, total: int) -> None:
        self.reachable = reachable
        super().__init__(
            f"index {index}: {failed} of {total} shards unavailable (their node is "
            f"down and they have no replica): only {reachable:,} documents reachable, "
            f"the rest are lost data"
        )


def count(client: HttpClient, index: str, refreshed: bool = True) -> int:
    """Documents in the index, after a refresh (every write counted; ``refreshed`` False:
    what searches see now, nothing forced); :class:`ShardsLost` when a shard cannot answer
    (a partial count is never passed off as the count)."""
    if refreshed:
        with contextlib.suppress(Exception):  # a red index refreshes what it can; counted below
            refresh(client, index)
    answer = client.request_object("GET", f"{index_path(index)}/_count")
    shards = as_object(answer.get("_shards") or {}, "_shards")
    failed = to_int(shards.get("failed", 0) or 0) + max(
        0,
        to_int(shards.get("total", 0) or 0)
        - to_int(shards.get("successful", 0) or 0)
        - to_int(shards.get("skipped", 0) or 0)
        - to_int(shards.get("failed", 0) or 0),
    )
    if failed:
        raise ShardsLost(index, to_int(answer["count"]), failed, to_int(shards.get("total", 0) or 0))
    return to_int(answer["count"])


def index_uuid(client: HttpClient, index: str) -> str:
    answer = client.request("GET", f"{index_path(index)}/_settings/index.uuid")
    return as_str(member(answer, index, "settings", "index", "uuid"), "index.uuid")


def merge_to_one_segment(engine: SearchEngineBase, index: str, refresh_interval: str | None = None) -> None:
    """Refresh interval back to the index definition's (None: the server's default), refresh,
    force-merge into one segment (like JSONBench), refresh."""
    client = engine.client()
    client.request("PUT", f"{index_path(index)}/_settings", {"index": {"refresh_interval": refresh_interval}})
    refresh(client, index)
    engine.long_request(
        "POST",
        f"{index_path(index)}/_forcemerge?max_num_segments=1",
        timeout=MERGE_TIMEOUT,
        what="force merge",
    )
    refresh(client, index)
