"""The throughput table: system x scenario x mix x clients -> TPS, p50, p99 (and the driver's
ceiling, the native tool's ratio, the count check) from ``throughput.*.json`` result files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

from rich.table import Table


def load_throughput_results(sources: list[Path]) -> list[dict[str, Any]]:
    found = []
    for source in sources:
        source = Path(source)
        candidates = [source] if source.is_file() else sorted(source.rglob("throughput.*.json"))
        for path in candidates:
            if path.name.startswith(".") or path.name.endswith(".intervals.json"):
                continue
            try:
                document = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(document, dict) and document.get("workload") == "throughput":
                found.append(document)
    return found


COLUMNS = ("system/variant", "scenario", "mix", "clients", "procs", "TPS", "p50", "p99", "failed",
           "driver ceiling", "docbench/native", "counts, notes")


def _ms(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "-"


def run_row(document: dict[str, Any], run: dict[str, Any]) -> list[str]:
    head = [f"{document['system']}/{document['variant']}", run["scenario"], run["mix"],
            str(run["clients"]), str(run.get("processes", "-"))]
    if "error" in run:
        return [*head, "error", "-", "-", "-", "-", "-", run["error"][:60]]
    summary = run["summary"]
    latency = summary["latency"]
    ceiling = run.get("ceiling") or {}
    native = run.get("native_reference") or {}
    notes = []
    if run.get("ceiling_warning"):
        notes.append("near driver ceiling")
    if run.get("memory_cap"):
        paged_in = run["memory_cap"].get("pages_in_bytes")
        if paged_in is not None:
            notes.append(f"paged in {paged_in / 1e6:,.0f} MB")
    if summary.get("schedule_lag"):
        notes.append(f"lag p99 {_ms(summary['schedule_lag']['p99_ms'])} ms")
    ratio = native.get("ratio")
    return [*head, f"{summary['tps']:,.0f}", _ms(latency["p50_ms"]), _ms(latency["p99_ms"]),
            str(summary["failed"]), f"{ceiling['tps']:,.0f}" if ceiling.get("tps") else "-",
            f"{ratio:.2f}" if isinstance(ratio, (int, float)) else "-",
            f"{run['check']['verdict']}{'; ' + '; '.join(notes) if notes else ''}"]


def print_throughput_report(sources: list[Path], console: Console | None = None) -> None:
    documents = load_throughput_results(sources)
    if not documents:
        return
    if console is None:
        from docbench.report.terminal import report_console

        console = report_console()
    table = Table(title="Throughput (latency in ms: response time under --rate, else service time)")
    for column in COLUMNS:
        table.add_column(column, justify="right" if column in {"clients", "procs", "TPS", "p50",
                                                               "p99", "failed"} else "left")
    for document in sorted(documents, key=lambda d: (d["system"], d["variant"])):
        for run in document.get("runs", []):
            table.add_row(*run_row(document, run))
        for skipped in document.get("skipped", []):
            table.add_row(f"{document['system']}/{document['variant']}", skipped["scenario"], "-",
                          "-", "-", "not run", "-", "-", "-", "-", "-", skipped["reason"][:80])
    console.print(table)
    for document in documents:
        if document.get("max_client_processes"):
            console.print(f"{document['system']}: {document.get('concurrency')}")
