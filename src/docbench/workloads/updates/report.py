"""The updates report, in the form of the original comparison: system / type / index /
update style -> seconds, ops/s, p50/p99, size before / after / maintained.

``print_report(documents, console, all_documents)`` prints the updates documents it is given;
``print_updates_report(paths)`` reads them first (the runner's closing report).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from docbench.core.console import report_console
from docbench.core.jsontypes import (
    JsonMapping,
    JsonObject,
    JsonValue,
    as_array,
    as_int,
    as_object,
    as_str,
    object_or_empty,
)
from docbench.results import load_results, run_name


def _mb(value: JsonValue) -> str:
    return f"{value / 1e6:,.1f}" if isinstance(value, (int, float)) else "-"


def _object(value: JsonValue) -> JsonObject:
    """An optional part of a result: ``{}`` when absent (or empty, null, false, 0)."""
    return object_or_empty(value or None)


def _size(sizes: JsonValue) -> JsonValue:
    """The total bytes of a sizes record (None: none, or its measurement failed)."""
    if not sizes:
        return None
    figures = as_object(sizes, "sizes")
    if "error" in figures:
        return None
    return figures.get("total") if figures.get("total") is not None else figures.get("on_disk")


def _seconds(value: JsonValue) -> str:
    return f"{value:,.2f}" if isinstance(value, (int, float)) else "-"


def _us(value: JsonValue) -> str:
    if not isinstance(value, (int, float)):
        return "-"
    return f"{value / 1000:,.2f} ms" if value >= 1000 else f"{value:,.0f} µs"


def _type_index(document: JsonMapping) -> tuple[str, str]:
    settings = _object(document.get("variant_settings"))
    return str(settings.get("type", "-")), str(settings.get("index", "-"))


def _display_name(document: JsonMapping) -> str:
    return as_str(document.get("display_name", document["system"]), "display_name")


def bulk_rows(documents: Sequence[JsonObject]) -> list[list[str]]:
    rows = []
    for doc in documents:
        kind, index = _type_index(doc)
        for item in as_array(doc.get("styles", []), "styles"):
            style = as_object(item, "a style")
            check = _object(style.get("check"))
            stats = _object(style.get("stats_after"))
            hot = stats.get("hot_share")
            verdict = style.get("error") and "error" or check.get("verdict", "-")
            rows_changed = style.get("rows_changed")
            rows.append(
                [
                    _display_name(doc),
                    kind,
                    index,
                    as_str(style["style"], "style"),
                    _seconds(style.get("update_seconds")),
                    f"{rows_changed:,}" if isinstance(rows_changed, int) and rows_changed >= 0 else "-",
                    _seconds(style.get("load_seconds")),
                    _mb(_size(style.get("sizes_before"))),
                    _mb(_size(style.get("sizes_after"))),
                    _mb(_size(style.get("sizes_maintained"))),
                    _seconds(style.get("maintain_seconds")),
                    f"{hot:.0%}" if isinstance(hot, (int, float)) else "-",
                    str(verdict),
                ]
            )
    return rows


def point_rows(documents: Sequence[JsonObject]) -> list[list[str]]:
    rows = []
    for doc in documents:
        kind, index = _type_index(doc)
        point = _object(doc.get("point"))
        for name in as_array(doc.get("distributions", []), "distributions"):
            distribution = as_str(name, "a distribution")
            per = _object(point.get(distribution))
            for operation in ("read", "update"):
                s = _object(per.get(operation))
                if not s:
                    continue
                ops = s.get("ops_per_second")
                rows.append(
                    [
                        _display_name(doc),
                        as_str(doc["variant"], "variant"),
                        distribution,
                        operation,
                        f"{ops:,.0f}" if ops else "-",
                        _us(s.get("p50_us")),
                        _us(s.get("p99_us")),
                        _us(s.get("p999_us")),
                        _us(s.get("max_us")),
                        str(
                            as_int(s.get("errors", 0), "errors") + as_int(s.get("not_found", 0), "not_found")
                        ),
                    ]
                )
        verify = _object(point.get("verify"))
        if verify and rows:
            rows[-1][-1] += f" ({verify.get('verdict')})"
    return rows


def print_updates_report(results_dirs: list[Path], console: Console | None = None) -> None:
    documents = [d for d in load_results(results_dirs) if d.get("workload") == "updates"]
    if console is None:
        console = report_console()
        if console.is_terminal:  # the table needs 172 columns; a narrower terminal scrolls
            console = Console(width=max(console.width, 172))
    print_report(documents, console, documents)


def print_report(
    documents: Sequence[JsonObject], console: Console, _all_documents: Sequence[JsonObject]
) -> None:
    if not documents:
        console.print("no updates results")
        return
    docs = sorted({as_int(as_object(d["dataset"], "dataset")["docs"], "docs") for d in documents})
    table = Table(
        title=f"Bulk partial update: add field11 (32 chars) to every document "
        f"({', '.join(f'{n:,}' for n in docs)} YCSB documents)"
    )
    for column in (
        "system",
        "type",
        "index",
        "style",
        "update s",
        "rows",
        "load s",
        "MB before",
        "MB after",
        "MB maintained",
        "maint. s",
        "HOT",
        "check",
    ):
        table.add_column(
            column, justify="right" if column not in ("system", "type", "index", "style", "check") else "left"
        )
    for row in bulk_rows(documents):
        table.add_row(*row)
    console.print(table)
    ops = sorted({as_int(ops, "ops") for d in documents if (ops := d.get("ops"))})
    table = Table(
        title=f"Point operations by key, one client ({', '.join(map(str, ops))} ops "
        "per distribution; zipfian theta 0.99, scrambled)"
    )
    for column in (
        "system",
        "variant",
        "distribution",
        "op",
        "ops/s",
        "p50",
        "p99",
        "p99.9",
        "max",
        "errors",
    ):
        table.add_column(
            column, justify="left" if column in ("system", "variant", "distribution", "op") else "right"
        )
    for row in point_rows(documents):
        table.add_row(*row)
    console.print(table)
    incomplete = [d for d in documents if not d.get("complete")]
    for doc in incomplete:
        for error in as_array(doc.get("errors", []), "errors"):
            console.print(f"[red]{run_name(doc)}: {as_object(error, 'an error')['error']}[/red]")


def dashboard_section(
    documents: Sequence[JsonObject], all_documents: Sequence[JsonObject] | None = None
) -> None:
    """No view of its own: the dashboard shows the generic table of the documents' fields."""
    return None
