"""Import JSONBench result files, so that published results can be shown beside local ones.

A JSONBench result (``<system>/results/<machine>_bluesky_<scale>.json`` in its repository) has
the keys system, version, os, date, machine, retains_structure, tags, dataset_size,
num_loaded_documents, total_size, data_size, index_size, result (5 queries x 3 tries, seconds,
null = failed) and optionally memory_usage, load_time and comment. docbench's result format is
a superset of it, so the import keeps every JSONBench key and adds docbench's, marking the
document as measured elsewhere:

- ``"imported": {"from": "JSONBench", "source": <the file>, ...}`` and the tag ``imported``;
- the variant is ``imported-<machine>`` (role ``imported``), so the terminal report's
  ``system/variant`` names and the dashboard both show it;
- there is no ``answers`` key: docbench never saw the rows, so every answer is *unchecked*
  (the reports' status for a query without an answer record), never "ok";
- the environment holds only what the file says (machine, os); the rest is null.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from docbench import __version__
from docbench.core.jsontypes import JsonArray, JsonMapping, JsonObject, JsonValue, as_array, as_str
from docbench.results import RESULT_FORMAT, now_iso, write_atomically

QUERY_COUNT = 5
SOURCE_NAME = "JSONBench"
REQUIRED_KEYS = ("system", "dataset_size", "result")


class NotJSONBench(ValueError):
    """The file is not a JSONBench result document."""


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"


def scale_label(dataset_size: int | None) -> str:
    """1000000 -> "1m", as docbench labels its generated scales (1m, 10m, 100m, 1000m)."""
    if not dataset_size:
        return "unknown"
    if dataset_size % 1_000_000 == 0:
        return f"{dataset_size // 1_000_000}m"
    if dataset_size % 1_000 == 0:
        return f"{dataset_size // 1_000}k"
    return str(dataset_size)


def _per_query(value: JsonValue) -> list[JsonArray] | None:
    """A 5 x n array of numbers (as floats) or nulls, or None when ``value`` is not one."""
    if not isinstance(value, list) or len(value) != QUERY_COUNT:
        return None
    rows: list[JsonArray] = []
    for row in value:
        if not isinstance(row, list):
            return None
        numbers: JsonArray = []
        for v in row:
            if v is not None and (not isinstance(v, int | float) or isinstance(v, bool)):
                return None
            numbers.append(None if v is None else float(v))
        rows.append(numbers)
    return rows


def _int_or_none(value: JsonValue) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def convert(source: JsonMapping, source_name: str) -> JsonObject:
    """A docbench analytics result document made from one JSONBench result document."""
    missing = [k for k in REQUIRED_KEYS if k not in source]
    if missing:
        raise NotJSONBench(f"not a JSONBench result (no {', '.join(missing)})")
    result = _per_query(source["result"])
    if result is None:
        raise NotJSONBench("not a JSONBench result (result is not 5 lists of seconds)")
    tries = max((len(row) for row in result), default=0) or 1
    system = str(source["system"])
    machine = str(source.get("machine") or "unknown machine")
    dataset_size = _int_or_none(source.get("dataset_size"))
    tags: JsonArray = [t for t in as_array(source.get("tags") or [], "tags") if isinstance(t, str)]
    comment = str(source.get("comment") or "")
    load_time = source.get("load_time")
    imported: JsonObject = {
        "from": SOURCE_NAME,
        "source": source_name,
        "imported_at": now_iso(),
        "answers": "unchecked",
    }
    document: JsonObject = {
        # JSONBench's keys, as published (its `system` is docbench's display_name)
        "system": slug(system),
        "display_name": system,
        "version": str(source.get("version") or "unknown"),
        "os": str(source.get("os") or "unknown"),
        "date": str(source.get("date") or "1970-01-01"),
        "machine": machine,
        "retains_structure": "no" if source.get("retains_structure") == "no" else "yes",
        "tags": [*tags, "imported"] if "imported" not in tags else tags,
        "dataset_size": dataset_size,
        "num_loaded_documents": _int_or_none(source.get("num_loaded_documents")),
        "total_size": _int_or_none(source.get("total_size")),
        "data_size": _int_or_none(source.get("data_size")),
        "index_size": _int_or_none(source.get("index_size")),
        "result": [*result],
        "load_time": load_time
        if isinstance(load_time, int | float) and not isinstance(load_time, bool)
        else None,
        "comment": (
            f"Imported from {SOURCE_NAME} ({source_name}); measured on {machine}."
            + (f" {comment}" if comment else "")
        ),
        # docbench's additions
        "format": RESULT_FORMAT,
        "workload": "analytics",
        "complete": True,
        "dataset_label": scale_label(dataset_size),
        "dataset_fingerprint": None,
        "variant_settings": {},
        "engine_mode": "imported",
        "managed": False,
        "url": None,
        "machine_slug": slug(machine.split(",")[0]),
        "started_at": str(source.get("date") or "1970-01-01"),
        "finished_at": None,
        "variant": f"imported-{slug(machine.split(',')[0])}",
        "variant_role": "imported",
        "variant_description": f"{system} as published by {SOURCE_NAME}, measured on {machine}",
        "tries": tries,
        "cold_method": f"as measured by {SOURCE_NAME} (unknown to docbench)",
        "dataset": {
            "label": scale_label(dataset_size),
            "files": [],
            "baselines": {"raw": None, "gzip": None, "zstd": None, "lz4": None},
            "manifest": None,
            "source": f"{SOURCE_NAME}'s Bluesky dataset ({dataset_size or '?'} documents offered)",
        },
        "environment": {
            "cpu_model": None,
            "cores": None,
            "memory_bytes": None,
            "os": str(source.get("os") or "unknown"),
            "kernel": None,
            "docbench_version": __version__,
            "machine": machine,
        },
        "imported": imported,
    }
    memory = _per_query(source.get("memory_usage"))
    if memory is not None:
        document["memory_usage"] = [*memory]
    elif source.get("memory_usage") is not None:
        imported["memory_usage"] = source["memory_usage"]
    known = set(document) | {"memory_usage", "source"}
    extra: JsonObject = {k: v for k, v in source.items() if k not in known}
    if extra:
        imported["other_keys"] = extra
    return document


def _candidates(paths: list[Path]) -> list[Path]:
    files = []
    for path in paths:
        files.extend(sorted(path.rglob("*.json")) if path.is_dir() else [path])
    return files


def import_files(paths: list[Path], out_dir: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Convert every JSONBench result under ``paths``; returns (files written, files skipped)."""
    written: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    used: set[Path] = set()
    for path in _candidates(paths):
        try:
            source = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError) as error:
            skipped.append((path, f"unreadable: {error}"))
            continue
        if not isinstance(source, dict):
            skipped.append((path, "not a JSON object"))
            continue
        try:
            document = convert(source, str(path))
        except NotJSONBench as error:
            skipped.append((path, str(error)))
            continue
        target = _imported_path(out_dir, document)
        if target in used:  # two sources for the same system, machine and scale
            document["variant"] = as_str(document["variant"], "variant") + f"-{slug(path.stem)}"
            target = _imported_path(out_dir, document)
        used.add(target)
        write_atomically(target, document)
        written.append(target)
    return written, skipped


def _imported_path(out_dir: Path, document: JsonObject) -> Path:
    """One file per (system, machine, scale): importing again replaces it with the same data."""
    return out_dir / (
        f"analytics.{document['system']}.{document['variant']}.{document['dataset_label']}.imported.json"
    )
