"""The size of one index: its primary store size from ``_stats``, split into data (stored
fields: ``_source``, ``_id``) and index (terms, postings, doc values, points, norms...) by
Elasticsearch's ``_disk_usage`` API or, where it is missing (OpenSearch), by the Lucene files'
extensions on the managed node's disk; ``on_disk`` = the managed node's data directory."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from docbench.contracts.common import StorageSize, directory_size
from docbench.core.jsontypes import JsonMapping, JsonObject, as_object
from docbench.systems.searchengine import lucene
from docbench.systems.searchengine.http import HttpClient, SearchEngineError, member, member_object, to_int
from docbench.systems.searchengine.index import index_path, index_uuid, refresh

if TYPE_CHECKING:
    from docbench.systems.searchengine.engine import SearchEngineBase

_DISK_USAGE_PARTS = (
    "inverted_index",
    "stored_fields",
    "doc_values",
    "points",
    "norms",
    "term_vectors",
    "knn_vectors",
)


class DiskUsage(TypedDict):
    """What the _disk_usage API says of an index: its stored fields' bytes, the bytes of each
    structure (``<part>_bytes``) and the ten largest fields (bytes)."""

    stored_fields_bytes: int
    disk_usage: JsonObject
    largest_fields: JsonObject


def index_storage(engine: SearchEngineBase, index: str, detail: JsonMapping | None = None) -> StorageSize:
    """Sizes of ``index``; ``detail`` adds to the docs/deleted/segments the answer carries."""
    client = engine.client()
    refresh(client, index)
    stats = client.request("GET", f"{index_path(index)}/_stats/store,docs,segments")
    primaries = member_object(stats, "indices", index, "primaries")
    total = to_int(member(primaries, "store", "size_in_bytes"))
    out: JsonObject = {
        "docs": member(primaries, "docs", "count"),
        "deleted_docs": member(primaries, "docs", "deleted"),
        "segments": member(primaries, "segments", "count"),
        **(detail or {}),
    }
    data = part_index = None
    usage = disk_usage(client, index)
    data_dir = engine.data_dir
    if usage is not None:
        stored = usage["stored_fields_bytes"]
        data, part_index = stored, total - stored
        out.update({"disk_usage": usage["disk_usage"], "largest_fields": usage["largest_fields"]})
        out["split_from"] = "_disk_usage API (stored fields = data, the rest = index)"
    elif data_dir is not None:
        files = _lucene_files(client, index, data_dir)
        if files:
            stored = lucene.stored_field_bytes(files)
            data, part_index = stored, total - stored
            out["files_by_extension"] = {**files}
            out["split_from"] = (
                "Lucene files: stored fields .fdt/.fdx/.fdm (_source, _id) = data, the rest = index"
            )
    on_disk = directory_size(data_dir) if data_dir is not None else None
    return StorageSize(total=total, data=data, index=part_index, on_disk=on_disk, detail=out)


def disk_usage(client: HttpClient, index: str) -> DiskUsage | None:
    """Elasticsearch's _disk_usage API: bytes per structure, per field (not in OpenSearch)."""
    try:
        answer = client.request_object(
            "POST", f"{index_path(index)}/_disk_usage?run_expensive_tasks=true&flush=true"
        )
    except SearchEngineError:
        return None
    found = answer.get(index)
    if not found:
        return None
    usage = as_object(found, index)
    sums: dict[str, int] = defaultdict(int)
    per_field: dict[str, int] = {}
    for name, field_value in as_object(usage.get("fields", {}), "fields").items():
        field_usage = as_object(field_value, name)
        per_field[name] = to_int(field_usage.get("total_in_bytes", 0))
        for part in _DISK_USAGE_PARTS:
            value = field_usage.get(f"{part}_in_bytes")
            structure = field_usage.get(part)
            if value is None and isinstance(structure, dict):
                value = structure.get("total_in_bytes")
            if value is not None:
                sums[part] += to_int(value)
    largest: JsonObject = dict(sorted(per_field.items(), key=lambda kv: -kv[1])[:10])
    return {
        "stored_fields_bytes": sums.get("stored_fields", 0),
        "disk_usage": {f"{k}_bytes": v for k, v in sums.items()},
        "largest_fields": largest,
    }


def _lucene_files(client: HttpClient, index: str, data_dir: Path) -> dict[str, int]:
    try:
        uuid = index_uuid(client, index)
    except Exception:  # noqa: BLE001
        return {}
    return lucene.files_by_extension(data_dir, uuid)
