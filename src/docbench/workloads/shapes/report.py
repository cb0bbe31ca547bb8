"""The shapes workload in the report: per sweep (preset, knob, documents), a row per system and
variant with each value's bytes per document, load time and hot query time, and the break
point: the first value where the engine refuses documents, fails, answers wrong, or loads or
queries more than 10x slower than at the sweep's first value."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from rich.console import Console
from rich.table import Table

from docbench.core.jsontypes import (
    JsonMapping,
    JsonObject,
    JsonValue,
    as_array,
    as_int,
    as_object,
    as_str,
    object_or_empty,
    optional_float,
)
from docbench.results.files import trimmed_document

# Slower than the first value of the sweep by more than this: the engine broke.
SLOWDOWN = 10.0
# A hot query faster than this counts as this long: 1 ms growing to 11 ms is noise, not a
# cliff.
TIME_FLOOR = 0.005
# A load faster than this counts as this long: 20 ms growing to 200 ms (a busy machine's
# stall while 2,000 documents load) is noise, not a cliff.
LOAD_FLOOR = 0.5

Sweep = tuple[str, str, int, str]  # (preset, knob, documents, the other knobs' values)


class Series(TypedDict):
    """A chart's line: a system/variant's (knob value, figure) points and its break point."""

    key: str
    points: list[list[float]]
    breaks: list[JsonValue]  # the knob's value where it breaks (none: it holds)
    break_reason: str


class Chart(TypedDict):
    title: str
    metric: str
    unit: str
    log_y: bool
    x_label: str
    series: list[Series]


class Section(TypedDict):
    """The dashboard's shapes view: a table, the documents of its rows, the charts."""

    label: str
    columns: list[str]
    rows: list[list[JsonValue]]
    docs: list[JsonObject]
    charts: list[Chart]


@dataclass
class Point:
    value: Any
    document: JsonObject
    reasons: list[str] = field(default_factory=list)


def _name(document: JsonMapping) -> str:
    return f"{document.get('system')}/{document.get('variant')}"


def _number(value: JsonValue, what: str) -> int | float | None:
    """A JSON number as it is (an integer stays one), None for null; a TypeError naming
    ``what`` for anything else."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return value
    raise TypeError(f"{what}: expected a number, got {type(value).__name__}")


def _queries(document: JsonMapping) -> dict[str, JsonObject]:
    """The document's queries by name ({} when it has none)."""
    queries = object_or_empty(document.get("queries") or None)
    return {name: as_object(query, f"query {name}") for name, query in queries.items()}


def hot_seconds(query: JsonMapping) -> float | None:
    """The best of the hot tries (the cold one when it ran alone)."""
    tries = [_number(t, "a try's seconds") for t in as_array(query.get("result") or [], "result")]
    times = [t for t in tries if t is not None]
    hot = times[1:] or times
    return min(hot) if hot else None


def sweeps(documents: list[JsonObject]) -> dict[Sweep, dict[str, list[Point]]]:
    """The documents by sweep, then by system/variant, in the knob's order."""
    found: dict[Sweep, dict[str, list[Point]]] = defaultdict(lambda: defaultdict(list))
    for document in documents:
        shape = object_or_empty(document.get("shape") or None)
        if "knob" not in shape:
            continue
        knobs = object_or_empty(shape.get("knobs") or None)
        others = ", ".join(f"{k}={knobs[k]}" for k in sorted(knobs) if k != shape["knob"])
        docs = as_int(shape.get("docs") or 0, "docs")
        sweep = (str(shape.get("preset")), str(shape["knob"]), docs, others)
        found[sweep][_name(document)].append(Point(shape.get("value"), document))
    for systems in found.values():
        for name, points in systems.items():
            points.sort(key=lambda p: p.value)
            systems[name] = mark_breaks(points)
    return found


def mark_breaks(points: list[Point]) -> list[Point]:
    """Each point's reasons to count as broken, against the first point."""
    base: JsonObject = points[0].document if points else {}
    for point in points:
        point.reasons = breaking_reasons(point.document, base)
    return points


def breaking_reasons(document: JsonMapping, base: JsonMapping) -> list[str]:
    reasons = []
    error = document.get("error")
    if error:
        reasons.append(f"fails: {as_str(error, 'error')[:160]}")
    refusals = object_or_empty(document.get("refused") or None)
    refused = refusals.get("count") or 0
    if refused:
        counts = object_or_empty(refusals.get("reasons") or None) or {"": 0}
        top = max(counts.items(), key=lambda kv: _number(kv[1], "a reason's count") or 0)[0]
        reasons.append(f"refuses {refused:,} of {document.get('offered', 0):,} ({top[:160]})")
    queries, base_queries = _queries(document), _queries(base)
    for query, outcome in queries.items():
        if outcome.get("status") != "ok":
            reasons.append(f"{query}: {outcome.get('status')} ({str(outcome.get('detail'))[:120]})")
    load = _number(document.get("load_time"), "load_time")
    load_base = _number(base.get("load_time"), "load_time")
    if load and load_base and load > SLOWDOWN * max(load_base, LOAD_FLOOR):
        reasons.append(f"load {load / max(load_base, LOAD_FLOOR):.0f}x slower")
    for query, outcome in queries.items():
        now, before = hot_seconds(outcome), hot_seconds(base_queries.get(query) or {})
        if now and before and now > SLOWDOWN * max(before, TIME_FLOOR):
            reasons.append(f"{query} {now / max(before, TIME_FLOOR):.0f}x slower (hot)")
    return reasons


def break_point(points: list[Point]) -> str:
    """The first value where the engine breaks, with every reason; then, for each other way
    of breaking, the first later value where it comes (a search engine answering wrong from
    the first value still refuses past its depth limit: the depth sweep must say both)."""
    broken = next((p for p in points if p.reasons), None)
    if broken is None:
        return f"holds to {points[-1].value}" if points else ""
    text = f"{broken.value}: {'; '.join(broken.reasons)}"
    seen = {breaking_kind(reason) for reason in broken.reasons}
    for point in points[points.index(broken) + 1 :]:
        for reason in point.reasons:
            if breaking_kind(reason) not in seen:
                seen.add(breaking_kind(reason))
                text += f" · then {point.value}: {reason}"
    return text


def breaking_kind(reason: str) -> str:
    """A breaking reason's kind (breaking_reasons' wording): fails, refuses, load slower,
    query slower, or a query's wrong or failed answer."""
    if reason.startswith(("fails", "refuses")):
        return reason.split(" ", 1)[0]
    if reason.startswith("load "):
        return "load slower"
    if reason.endswith("slower (hot)"):
        return "query slower"
    return "answer"


def cell(point: Point) -> str:
    document = point.document
    if document.get("error"):
        return "FAILED"
    per_doc = object_or_empty(document.get("storage") or None).get("bytes_per_document")
    hot = [hot_seconds(q) for q in _queries(document).values()]
    hot_ms = sum(h for h in hot if h is not None) * 1000
    mark = " !" if point.reasons else ""
    return f"{per_doc or '?'} B · {document.get('load_time')} s · {hot_ms:.0f} ms{mark}"


def sweep_table(sweep: Sweep, systems: dict[str, list[Point]]) -> Table:
    preset, knob, docs, others = sweep
    values = sorted({p.value for points in systems.values() for p in points})
    table = Table(
        title=f"Shapes: {knob} swept ({preset} preset, {docs:,} documents; {others}): bytes/doc · "
        f"load · hot queries summed; ! = broken (refusals, failures, wrong answers, "
        f">{SLOWDOWN:.0f}x slower than at the first value)"
    )
    table.add_column("system/variant")
    for value in values:
        table.add_column(f"{knob}={value}", overflow="fold")
    table.add_column("break point", overflow="fold")
    for name, points in sorted(systems.items()):
        by_value = {p.value: p for p in points}
        table.add_row(
            name, *(cell(by_value[v]) if v in by_value else "" for v in values), break_point(points)
        )
    return table


def print_report(documents: list[JsonObject], console: Console, all_documents: list[JsonObject]) -> None:
    for sweep, systems in sorted(sweeps(documents).items()):
        console.print(sweep_table(sweep, systems))


def dashboard_section(
    documents: list[JsonObject], all_documents: list[JsonObject] | None = None
) -> Section | None:
    """A row per (sweep, system/variant, value), with the break point of the sweep."""
    found = sweeps(documents)
    if not found:
        return None
    columns = [
        "sweep",
        "system/variant",
        "value",
        "loaded",
        "refused",
        "load s",
        "bytes/doc",
        *(f"{q} hot ms" for q in ("point", "rare_aggregate", "varying_filter", "presence")),
        "answers",
        "break point",
    ]
    rows: list[list[JsonValue]] = []
    docs: list[JsonObject] = []
    for (preset, knob, count, _others), systems in sorted(found.items()):
        for name, points in sorted(systems.items()):
            where = break_point(points)
            for point in points:
                document = point.document
                queries = _queries(document)
                hot = [
                    hot_seconds(queries.get(q) or {})
                    for q in ("point", "rare_aggregate", "varying_filter", "presence")
                ]
                rows.append(
                    [
                        f"{knob} ({preset}, {count:,} docs)",
                        name,
                        point.value,
                        document.get("loaded"),
                        object_or_empty(document.get("refused") or None).get("count"),
                        document.get("load_time"),
                        object_or_empty(document.get("storage") or None).get("bytes_per_document"),
                        *(None if h is None else round(h * 1000, 1) for h in hot),
                        " ".join(f"{q}:{v.get('status')}" for q, v in queries.items()),
                        where,
                    ]
                )
                docs.append(trimmed_document(document) | {"_path": document.get("_path")})
    return {"label": "Shapes", "columns": columns, "rows": rows, "docs": docs, "charts": charts(found)}


def charts(found: dict[Sweep, dict[str, list[Point]]]) -> list[Chart]:
    """Per sweep: bytes per document, load time and the hot shape queries' summed time
    against the knob (log axes: values above 0 only), a line per system/variant, its break
    point marked."""
    drawn: list[Chart] = []
    metrics: tuple[tuple[str, str, str, Callable[[JsonMapping], float | None]], ...] = (
        ("bytes per document", "bytes_per_document", "B", _bytes_per_document),
        ("load time", "load_time", "s", lambda d: _number(d.get("load_time"), "load_time")),
        ("shape queries, hot, summed", "hot_seconds", "s", _hot_sum),
    )
    for (preset, knob, count, base), systems in sorted(found.items()):
        for title, metric, unit, value_of in metrics:
            series: list[Series] = []
            for name, points in sorted(systems.items()):
                broken = next((p for p in points if p.reasons), None)
                series.append(
                    {
                        "key": name,
                        "points": [
                            [p.value, v]
                            for p in points
                            if isinstance(p.value, (int, float))
                            and p.value > 0
                            and (v := value_of(p.document)) is not None
                            and v > 0
                        ],
                        "breaks": [broken.value] if broken else [],
                        "break_reason": "; ".join(broken.reasons)[:300] if broken else "",
                    }
                )
            drawn.append(
                {
                    "title": f"{title}: {knob} swept ({preset}, {count:,} documents; {base})",
                    "metric": f"shapes-{knob}-{metric}",
                    "unit": unit,
                    "log_y": True,
                    "x_label": f"{knob} (log scale)",
                    "series": series,
                }
            )
    return drawn


def _bytes_per_document(document: JsonMapping) -> float | None:
    value = object_or_empty(document.get("storage") or None).get("bytes_per_document")
    return optional_float(value, "bytes_per_document")


def _hot_sum(document: JsonMapping) -> float | None:
    hot = [hot_seconds(q) for q in _queries(document).values()]
    known = [h for h in hot if h is not None]
    return sum(known) if known else None
