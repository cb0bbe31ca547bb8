"""What every workload does to its own index: (re)create it, refresh, count, merge it to one
segment (the clean state the analytics load ends in and the sizes are measured on)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from docbench.systems.searchengine.http import MERGE_TIMEOUT, HttpClient

if TYPE_CHECKING:
    from docbench.systems.searchengine.engine import SearchEngineBase


def index_path(index: str) -> str:
    return f"/{quote(index)}"


def recreate(client: HttpClient, index: str, definition: dict[str, Any]) -> None:
    """Drop docbench's index (if there) and create it empty: nothing else is touched."""
    client.request("DELETE", index_path(index), ok=(200, 404))
    client.request("PUT", index_path(index), definition, what=f"create index {index}")


def refresh(client: HttpClient, index: str) -> None:
    client.request("POST", f"{index_path(index)}/_refresh")


def count(client: HttpClient, index: str) -> int:
    """Documents in the index, after a refresh (every write counted)."""
    refresh(client, index)
    return int(client.request("GET", f"{index_path(index)}/_count")["count"])


def index_uuid(client: HttpClient, index: str) -> str:
    answer = client.request("GET", f"{index_path(index)}/_settings/index.uuid")
    return answer[index]["settings"]["index"]["uuid"]


def merge_to_one_segment(engine: SearchEngineBase, index: str) -> None:
    """Refresh interval back to the default, refresh, force-merge into one segment (like
    JSONBench), refresh."""
    client = engine.client()
    client.request("PUT", f"{index_path(index)}/_settings", {"index": {"refresh_interval": None}})
    refresh(client, index)
    engine.long_request("POST", f"{index_path(index)}/_forcemerge?max_num_segments=1",
                        timeout=MERGE_TIMEOUT, what="force merge")
    refresh(client, index)
