"""The shapes workload in the report: per sweep (preset, knob, documents), a row per system and
variant with each value's bytes per document, load time and hot query time, and the break
point: the first value where the engine refuses documents, fails, answers wrong, or loads or
queries more than 10x slower than at the sweep's first value."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

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


@dataclass
class Point:
    value: Any
    document: dict[str, Any]
    reasons: list[str] = field(default_factory=list)


def _name(document: dict[str, Any]) -> str:
    return f"{document.get('system')}/{document.get('variant')}"


def hot_seconds(query: dict[str, Any]) -> float | None:
    """The best of the hot tries (the cold one when it ran alone)."""
    times = [t for t in (query.get("result") or []) if t is not None]
    hot = times[1:] or times
    return min(hot) if hot else None


def sweeps(documents: list[dict[str, Any]]) -> dict[Sweep, dict[str, list[Point]]]:
    """The documents by sweep, then by system/variant, in the knob's order."""
    found: dict[Sweep, dict[str, list[Point]]] = defaultdict(lambda: defaultdict(list))
    for document in documents:
        shape = document.get("shape") or {}
        if "knob" not in shape:
            continue
        others = ", ".join(
            f"{k}={v}" for k, v in sorted((shape.get("knobs") or {}).items()) if k != shape["knob"]
        )
        sweep = (str(shape.get("preset")), str(shape["knob"]), int(shape.get("docs") or 0), others)
        found[sweep][_name(document)].append(Point(shape.get("value"), document))
    for systems in found.values():
        for name, points in systems.items():
            points.sort(key=lambda p: p.value)
            systems[name] = mark_breaks(points)
    return found


def mark_breaks(points: list[Point]) -> list[Point]:
    """Each point's reasons to count as broken, against the first point."""
    base = points[0].document if points else {}
    for point in points:
        point.reasons = breaking_reasons(point.document, base)
    return points


def breaking_reasons(document: dict[str, Any], base: dict[str, Any]) -> list[str]:
    reasons = []
    if document.get("error"):
        reasons.append(f"fails: {document['error'][:160]}")
    refused = (document.get("refused") or {}).get("count") or 0
    if refused:
        top = max((document["refused"].get("reasons") or {"": 0}).items(), key=lambda kv: kv[1])[0]
        reasons.append(f"refuses {refused:,} of {document.get('offered', 0):,} ({top[:160]})")
    for query, outcome in (document.get("queries") or {}).items():
        if outcome.get("status") != "ok":
            reasons.append(f"{query}: {outcome.get('status')} ({str(outcome.get('detail'))[:120]})")
    load, load_base = document.get("load_time"), base.get("load_time")
    if load and load_base and load > SLOWDOWN * max(load_base, LOAD_FLOOR):
        reasons.append(f"load {load / max(load_base, LOAD_FLOOR):.0f}x slower")
    for query, outcome in (document.get("queries") or {}).items():
        now, before = hot_seconds(outcome), hot_seconds((base.get("queries") or {}).get(query) or {})
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
    per_doc = (document.get("storage") or {}).get("bytes_per_document")
    hot = [hot_seconds(q) for q in (document.get("queries") or {}).values()]
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


def print_report(
    documents: list[dict[str, Any]], console: Console, all_documents: list[dict[str, Any]]
) -> None:
    for sweep, systems in sorted(sweeps(documents).items()):
        console.print(sweep_table(sweep, systems))


def dashboard_section(
    documents: list[dict[str, Any]], all_documents: list[dict[str, Any]] | None = None
) -> dict[str, Any] | None:
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
    rows, docs = [], []
    for (preset, knob, count, _others), systems in sorted(found.items()):
        for name, points in sorted(systems.items()):
            where = break_point(points)
            for point in points:
                document = point.document
                queries = document.get("queries") or {}
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
                        (document.get("refused") or {}).get("count"),
                        document.get("load_time"),
                        (document.get("storage") or {}).get("bytes_per_document"),
                        *(None if h is None else round(h * 1000, 1) for h in hot),
                        " ".join(f"{q}:{v.get('status')}" for q, v in queries.items()),
                        where,
                    ]
                )
                docs.append(trimmed_document(document) | {"_path": document.get("_path")})
    return {"label": "Shapes", "columns": columns, "rows": rows, "docs": docs, "charts": charts(found)}


def charts(found: dict[Sweep, dict[str, list[Point]]]) -> list[dict[str, Any]]:
    """Per sweep: bytes per document, load time and the hot shape queries' summed time
    against the knob (log axes: values above 0 only), a line per system/variant, its break
    point marked."""
    drawn = []
    metrics = (
        ("bytes per document", "bytes_per_document", "B", _bytes_per_document),
        ("load time", "load_time", "s", lambda d: d.get("load_time")),
        ("shape queries, hot, summed", "hot_seconds", "s", _hot_sum),
    )
    for (preset, knob, count, base), systems in sorted(found.items()):
        for title, metric, unit, value_of in metrics:
            series = []
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


def _bytes_per_document(document: dict[str, Any]) -> float | None:
    value = (document.get("storage") or {}).get("bytes_per_document")
    return float(value) if value is not None else None


def _hot_sum(document: dict[str, Any]) -> float | None:
    hot = [hot_seconds(q) for q in (document.get("queries") or {}).values()]
    known = [h for h in hot if h is not None]
    return sum(known) if known else None
