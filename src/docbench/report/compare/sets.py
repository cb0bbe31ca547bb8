"""The two sides of a comparison: sets of results read from directories and files (docbench's
or JSONBench's result files), or JSONBench's published results shipped with docbench.

A JSONBench result becomes a docbench analytics result through ``jsonbench_import.convert``,
then takes the system and variant its configuration corresponds to (``systems/jsonbench.py``);
one with no counterpart, and JSONBench's file-size references (``fake``), are kept aside as
not compared, with the reason, never dropped silently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docbench.core.jsontypes import as_object
from docbench.report.jsonbench_import import SOURCE_NAME, NotJSONBench, convert
from docbench.results.compat import upgrade
from docbench.systems.jsonbench import counterpart

PUBLISHED_JSONBENCH = Path(__file__).resolve().parents[1] / "published" / "jsonbench.json"


@dataclass(frozen=True)
class NotCompared:
    path: str
    name: str
    reason: str


@dataclass
class ResultSet:
    label: str  # "baseline" or "contender"
    sources: list[str]
    documents: list[dict[str, Any]] = field(default_factory=list)
    not_compared: list[NotCompared] = field(default_factory=list)
    # JSONBench's provenance (source, commit, commit_date, extracted) for the published set
    published: dict[str, Any] | None = None


class NoResults(ValueError):
    """A path holds no result document (docbench's or JSONBench's)."""


def is_jsonbench(document: dict[str, Any]) -> bool:
    """A JSONBench result file: JSONBench's keys without docbench's workload and variant."""
    return "system" in document and "workload" not in document and "variant" not in document


NO_COUNTERPART = "no docbench system or variant corresponds (systems/jsonbench.py)"


def from_jsonbench(content: dict[str, Any], source: str) -> dict[str, Any] | NotCompared:
    """The docbench result a JSONBench result corresponds to, or why there is none."""
    name = str(content.get("system"))
    if content.get("fake"):
        return NotCompared(source, name, "a JSONBench file-size reference (fake: true), not a system")
    if counterpart(name) is None:
        return NotCompared(source, name, NO_COUNTERPART)
    try:
        document = convert(content, source)
    except NotJSONBench as error:
        return NotCompared(source, name, str(error))
    return as_counterpart(document, source)


def as_counterpart(document: dict[str, Any], source: str) -> dict[str, Any] | NotCompared:
    """A converted JSONBench result (also one `docbench import-jsonbench` wrote) under the
    docbench system and variant of its configuration (its display_name is JSONBench's system)."""
    name = str(document.get("display_name"))
    row = counterpart(name)
    if row is None:
        return NotCompared(source, name, NO_COUNTERPART)
    document.update(
        system=row.system,
        variant=row.variant,
        variant_settings=row.settings,
        jsonbench_counterpart={"jsonbench": row.jsonbench, "note": row.note},
        _path=source,
    )
    return document


def _candidates(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return [
        p
        for p in sorted(path.rglob("*.json"))
        if not p.name.startswith(".") and not p.name.endswith(".intervals.json")
    ]


def _add(result_set: ResultSet, content: Any, source: str) -> None:
    if not isinstance(content, dict) or "system" not in content:
        return  # not a result (answers, manifests, baselines...)
    if is_jsonbench(content):
        converted = from_jsonbench(content, source)
        if isinstance(converted, NotCompared):
            result_set.not_compared.append(converted)
        else:
            result_set.documents.append(converted)
        return
    document = upgrade(content)
    if "workload" not in document:
        return
    document.setdefault("_path", source)
    imported = as_object(document.get("imported") or {}, "imported")
    if imported.get("from") == SOURCE_NAME:  # docbench import-jsonbench's
        mapped = as_counterpart(document, source)
        if isinstance(mapped, NotCompared):
            result_set.not_compared.append(mapped)
            return
    result_set.documents.append(document)


def load_set(paths: list[Path], label: str) -> ResultSet:
    """Every result under ``paths`` (directories are read recursively)."""
    result_set = ResultSet(label, [str(p) for p in paths])
    for path in paths:
        for candidate in _candidates(path):
            try:
                content = json.loads(candidate.read_text())
            except (OSError, ValueError):
                continue  # unreadable or not JSON: not a result
            _add(result_set, content, str(candidate))
    if not result_set.documents and not result_set.not_compared:
        shown = ", ".join(map(str, paths))
        raise NoResults(
            f"{label} {shown} holds no docbench or JSONBench result file (*.json): give a results "
            "directory, a result file or a JSONBench checkout"
        )
    return result_set


def published_jsonbench(label: str = "baseline", path: Path = PUBLISHED_JSONBENCH) -> ResultSet:
    """JSONBench's published results as shipped with docbench (every system, machine, scale)."""
    shipped = json.loads(path.read_text())
    commit = str(shipped["commit"])
    result_set = ResultSet(
        label,
        [f"{shipped['source']} at {commit[:12]} ({shipped['commit_date']})"],
        published={k: shipped[k] for k in ("source", "commit", "commit_date", "extracted")},
    )
    for entry in shipped["results"]:
        content = {k: v for k, v in entry.items() if k != "path"}
        _add(result_set, content, f"JSONBench@{commit[:12]}:{entry['path']}")
    return result_set
