"""The updates report, in the form of the original comparison: system / type / index /
update style -> seconds, ops/s, p50/p99, size before / after / maintained.

``print_report(documents, console, all_documents)`` prints the updates documents it is given;
``print_updates_report(paths)`` reads them first (the runner's closing report).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from docbench.core.console import report_console
from docbench.results import load_results, run_name


def _mb(value: Any) -> str:
    return f"{value / 1e6:,.1f}" if isinstance(value, (int, float)) else "-"


def _size(sizes: dict[str, Any] | None) -> Any:
    if not sizes or "error" in sizes:
        return None
    return sizes.get("total") if sizes.get("total") is not None else sizes.get("on_disk")


def _seconds(value: Any) -> str:
    return f"{value:,.2f}" if isinstance(value, (int, float)) else "-"


def _us(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return "-"
    return f"{value / 1000:,.2f} ms" if value >= 1000 else f"{value:,.0f} µs"


def _type_index(document: dict[str, Any]) -> tuple[str, str]:
    settings = document.get("variant_settings") or {}
    return str(settings.get("type", "-")), str(settings.get("index", "-"))


def bulk_rows(documents: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for doc in documents:
        kind, index = _type_index(doc)
        for style in doc.get("styles", []):
            check = style.get("check") or {}
            stats = style.get("stats_after") or {}
            hot = stats.get("hot_share")
            verdict = style.get("error") and "error" or check.get("verdict", "-")
            rows.append(
                [
                    doc.get("display_name", doc["system"]),
                    kind,
                    index,
                    style["style"],
                    _seconds(style.get("update_seconds")),
                    f"{style['rows_changed']:,}"
                    if isinstance(style.get("rows_changed"), int) and style["rows_changed"] >= 0
                    else "-",
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


def point_rows(documents: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for doc in documents:
        kind, index = _type_index(doc)
        point = doc.get("point") or {}
        for distribution in doc.get("distributions", []):
            per = point.get(distribution) or {}
            for operation in ("read", "update"):
                s = per.get(operation)
                if not s:
                    continue
                ops = s.get("ops_per_second")
                rows.append(
                    [
                        doc.get("display_name", doc["system"]),
                        doc["variant"],
                        distribution,
                        operation,
                        f"{ops:,.0f}" if ops else "-",
                        _us(s.get("p50_us")),
                        _us(s.get("p99_us")),
                        _us(s.get("p999_us")),
                        _us(s.get("max_us")),
                        str(s.get("errors", 0) + s.get("not_found", 0)),
                    ]
                )
        verify = point.get("verify") or {}
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
    documents: list[dict[str, Any]], console: Console, _all_documents: list[dict[str, Any]]
) -> None:
    if not documents:
        console.print("no updates results")
        return
    docs = sorted({d["dataset"]["docs"] for d in documents})
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
    ops = sorted({ops for d in documents if (ops := d.get("ops"))})
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
        for error in doc.get("errors", []):
            console.print(f"[red]{run_name(doc)}: {error['error']}[/red]")


def dashboard_section(
    documents: list[dict[str, Any]], all_documents: list[dict[str, Any]] | None = None
) -> dict[str, Any] | None:
    """No view of its own: the dashboard shows the generic table of the documents' fields."""
    return None
