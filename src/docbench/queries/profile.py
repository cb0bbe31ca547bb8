"""`docbench profile DATA`: what the documents hold, path by path, and a proposed query set.

Per path (keys through objects; ``a[]`` for the elements of an array at ``a``): its JSON types
with their shares, how many documents have it, its distinct values, whether it is an array,
its depth, and whether it looks like a time. Read from a sample: the first documents of every
file, an equal share each (``sample`` in all), so a 100m dataset is profiled in seconds; the
distinct counts are exact within the sample and say so.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import yaml

from docbench.core.jsontypes import JsonObject
from docbench.dataset.reader import iter_line_batches
from docbench.queries.oracle import parse_document
from docbench.queries.semantics import is_number

DISTINCT_CAP = 100_000  # distinct values kept per path (beyond it: "at least")
ISO_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
EPOCH_RANGES = {"epoch_s": (1e9, 4.2e9), "epoch_ms": (1e12, 4.2e12), "epoch_us": (1e15, 4.2e15)}


class PathSummary(TypedDict):
    """A path's profile as `docbench profile` shows it: shares of the sampled documents."""

    path: str
    depth: int
    present: float
    types: dict[str, float]
    distinct: int
    distinct_at_least: bool
    array: bool
    time: str | None


class ProposedQuerySet(TypedDict):
    """A query file as `docbench profile` proposes it (``queries/spec.py`` reads it back)."""

    name: str
    description: str
    queries: list[JsonObject]


@dataclass
class PathProfile:
    path: str
    depth: int
    present: int = 0
    types: Counter[str] = field(default_factory=Counter)
    distinct: set[Any] = field(default_factory=set)
    capped: bool = False
    numbers: list[float] = field(default_factory=list)
    time_formats: Counter[str] = field(default_factory=Counter)
    sample_value: Any = None
    # False when a key on the way holds a dot: the dotted text would name another path, so
    # such a path is profiled but never proposed.
    plain: bool = True

    def add(self, value: Any) -> None:
        self.present += 1
        kind = _type(value)
        self.types[kind] += 1
        if kind in ("string", "number", "boolean"):
            if self.sample_value is None:
                self.sample_value = value
            if len(self.distinct) < DISTINCT_CAP:
                self.distinct.add((kind, value))
            else:
                self.capped = True
        if kind == "number" and len(self.numbers) < 10_000:
            self.numbers.append(float(value))
        time_format = _time_format(value)
        if time_format:
            self.time_formats[time_format] += 1

    def summary(self, documents: int) -> PathSummary:
        return {
            "path": self.path,
            "depth": self.depth,
            "present": round(self.present / documents, 4) if documents else 0,
            "types": {k: round(v / self.present, 4) for k, v in self.types.most_common()},
            "distinct": len(self.distinct),
            "distinct_at_least": self.capped,
            "array": self.types.get("array", 0) > self.present / 2,
            "time": self.time_formats.most_common(1)[0][0] if self.time_formats else None,
        }


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if is_number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _time_format(value: Any) -> str | None:
    if is_number(value) and not isinstance(value, bool):
        for name, (low, high) in EPOCH_RANGES.items():
            if low <= value < high:
                return name
    elif isinstance(value, str) and ISO_TIME.match(value):
        return "iso8601"
    return None


@dataclass
class Profile:
    documents: int
    files: int
    sampled: bool
    paths: dict[str, PathProfile]

    def rows(self) -> list[PathSummary]:
        return [p.summary(self.documents) for p in sorted(self.paths.values(), key=lambda p: p.path)]


def profile_files(files: list[Path], sample: int) -> Profile:
    """Profile the first ``sample`` documents (an equal share from each file)."""
    share = max(1, sample // max(1, len(files)))
    paths: dict[str, PathProfile] = {}
    documents = 0
    sampled = False
    for path in files:
        taken = 0
        for batch in iter_line_batches(path):
            for line in batch:
                document = parse_document(line)
                if document is None:
                    continue
                if taken >= share:
                    sampled = True
                    break
                taken += 1
                documents += 1
                _walk(document, "", 0, paths, True)
            if taken >= share:
                sampled = sampled or taken >= share
                break
    return Profile(documents, len(files), sampled, paths)


def _walk(value: Any, prefix: str, depth: int, paths: dict[str, PathProfile], plain: bool) -> None:
    if isinstance(value, dict):
        for key, child in value.items():
            path = f"{prefix}.{key}" if prefix else key
            child_plain = plain and "." not in key and bool(key)
            if path not in paths:
                paths[path] = PathProfile(path, depth + 1, plain=child_plain)
            paths[path].add(child)
            _walk(child, path, depth + 1, paths, child_plain)
    elif isinstance(value, list) and prefix:
        element_path = prefix + "[]"
        for item in value:
            if element_path not in paths:
                paths[element_path] = PathProfile(element_path, depth + 1, plain=plain)
            paths[element_path].add(item)
            if isinstance(item, dict):
                _walk(item, element_path, depth + 1, paths, plain)


# ----- the proposed query set ---------------------------------------------------------------


def propose_queries(profile: Profile, name: str) -> ProposedQuerySet:
    """A query set to edit: a point lookup, a group-by on a low-cardinality path, a distinct
    count, a numeric range with aggregates, a time bucket, an unnest and an exists count, each
    where the documents have a path that fits."""
    n = profile.documents
    plain = [p for p in profile.paths.values() if "[]" not in p.path and p.plain]
    scalars = [
        p for p in plain if p.types and p.types.most_common(1)[0][0] in ("string", "number", "boolean")
    ]
    queries: list[JsonObject] = []

    def share(p: PathProfile) -> float:
        return p.present / n if n else 0

    high = sorted(
        (p for p in scalars if share(p) > 0.9 and len(p.distinct) > 0.5 * p.present),
        key=lambda p: (-len(p.distinct), p.depth, p.path),
    )
    low = sorted(
        (p for p in scalars if share(p) > 0.1 and 2 <= len(p.distinct) <= min(50, p.present / 2)),
        key=lambda p: (p.depth, -share(p), p.path),
    )
    if high:
        key = high[0]
        others = [p.path for p in scalars if p is not key and share(p) > 0.5][:3]
        queries.append(
            {
                "name": "point_lookup",
                "description": f"the documents whose {key.path} is one value (high cardinality)",
                "where": {"path": key.path, "eq": key.sample_value},
                "select": [key.path, *others],
            }
        )
    if low:
        key = low[0]
        queries.append(
            {
                "name": f"count_by_{_name(key.path)}",
                "description": f"documents per {key.path} ({len(key.distinct)} values in the sample)",
                "group_by": [key.path],
                "aggregates": [{"fn": "count", "as": "documents"}],
                "order_by": ["documents desc", key.path],
            }
        )
    if high and low:
        queries.append(
            {
                "name": f"distinct_{_name(high[0].path)}_by_{_name(low[0].path)}",
                "group_by": [low[0].path],
                "aggregates": [{"fn": "count_distinct", "path": high[0].path, "as": "distinct_values"}],
                "order_by": ["distinct_values desc", low[0].path],
                "limit": 10,
            }
        )
    numeric = [
        p
        for p in scalars
        if p.types["number"] > 0.9 * p.present
        and len(p.distinct) > 10
        and not p.time_formats
        and not (high and p is high[0])  # not the point lookup's key (an id)
    ]
    if numeric:
        key = max(numeric, key=lambda p: (share(p), -p.depth))
        middle = sorted(key.numbers)[len(key.numbers) // 2]
        literal = int(middle) if middle.is_integer() else middle
        queries.append(
            {
                "name": f"range_{_name(key.path)}",
                "description": f"{key.path} above its sample median",
                "where": {"path": key.path, "gt": literal},
                "aggregates": [
                    {"fn": "count", "as": "documents"},
                    {"fn": "sum", "path": key.path, "as": "total"},
                    {"fn": "avg", "path": key.path, "as": "mean"},
                    {"fn": "max", "path": key.path, "as": "largest"},
                ],
            }
        )
    times = [p for p in scalars if p.time_formats and p.time_formats.most_common(1)[0][1] >= 0.9 * p.present]
    if times:
        key = max(times, key=lambda p: share(p))
        time_format = key.time_formats.most_common(1)[0][0]
        queries.append(
            {
                "name": f"per_hour_{_name(key.path)}",
                "group_by": [{"bucket": key.path, "unit": "hour", "format": time_format, "as": "hour"}],
                "aggregates": [{"fn": "count", "as": "documents"}],
                "order_by": ["hour"],
                "limit": 48,
            }
        )
    arrays = [
        p
        for p in profile.paths.values()
        if p.path.endswith("[]")
        and "[]" not in p.path[:-2]
        and p.plain
        and p.types
        and p.types.most_common(1)[0][0] in ("string", "number")
    ]
    if arrays:
        key = max(arrays, key=lambda p: p.present)
        array_path = key.path[:-2]
        queries.append(
            {
                "name": f"top_{_name(array_path)}_elements",
                "unnest": {"path": array_path, "as": "item"},
                "group_by": [{"path": "item", "as": "element"}],
                "aggregates": [{"fn": "count", "as": "times"}],
                "order_by": ["times desc", "element"],
                "limit": 10,
            }
        )
    sparse = [p for p in plain if 0.01 <= share(p) <= 0.5]
    if sparse:
        key = min(sparse, key=lambda p: (p.depth, p.path))
        queries.append(
            {
                "name": f"having_{_name(key.path)}",
                "description": f"documents with {key.path} ({share(key):.0%} of the sample)",
                "where": {"path": key.path, "exists": True},
                "aggregates": [{"fn": "count", "as": "documents"}],
            }
        )
    return {"name": name, "description": "proposed by docbench profile: edit freely", "queries": queries}


def _name(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", path).strip("_").lower() or "path"


def write_query_set(query_set: ProposedQuerySet, out: Path) -> None:
    out.write_text(yaml.safe_dump(query_set, sort_keys=False, allow_unicode=True, width=100))
