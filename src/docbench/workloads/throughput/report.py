"""The throughput table: system x scenario x mix x clients -> TPS, p50, p99 (and the driver's
ceiling, the native tool's ratio, the count check) from ``throughput.*.json`` result files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

from rich.table import Table

from docbench.core.console import report_console
from docbench.results import load_results, run_name

COLUMNS = (
    "system/variant",
    "scenario",
    "mix",
    "clients",
    "procs",
    "TPS",
    "p50",
    "p99",
    "failed",
    "driver ceiling",
    "docbench/native",
    "counts, notes",
)


def _ms(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "-"


def run_row(document: dict[str, Any], run: dict[str, Any]) -> list[str]:
    head = [
        run_name(document),
        run["scenario"],
        run["mix"],
        str(run["clients"]),
        str(run.get("processes", "-")),
    ]
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
    if document.get("io_limit"):
        notes.append(f"io-limit {document['io_limit']['asked']}")
    if summary.get("schedule_lag"):
        notes.append(f"lag p99 {_ms(summary['schedule_lag']['p99_ms'])} ms")
    ratio = native.get("ratio")
    return [
        *head,
        f"{summary['tps']:,.0f}",
        _ms(latency["p50_ms"]),
        _ms(latency["p99_ms"]),
        str(summary["failed"]),
        f"{ceiling['tps']:,.0f}" if ceiling.get("tps") else "-",
        f"{ratio:.2f}" if isinstance(ratio, (int, float)) else "-",
        f"{run['check']['verdict']}{'; ' + '; '.join(notes) if notes else ''}",
    ]


def print_throughput_report(sources: list[Path], console: Console | None = None) -> None:
    documents = [d for d in load_results(sources) if d.get("workload") == "throughput"]
    print_report(documents, console or report_console(), documents)


def print_report(
    documents: list[dict[str, Any]], console: Console, _all_documents: list[dict[str, Any]]
) -> None:
    if not documents:
        return
    table = Table(title="Throughput (latency in ms: response time under --rate, else service time)")
    for column in COLUMNS:
        table.add_column(
            column,
            justify="right" if column in {"clients", "procs", "TPS", "p50", "p99", "failed"} else "left",
        )
    for document in sorted(documents, key=lambda d: (d["system"], d["variant"])):
        for run in document.get("runs", []):
            table.add_row(*run_row(document, run))
        for skipped in document.get("skipped", []):
            table.add_row(
                run_name(document),
                skipped["scenario"],
                "-",
                "-",
                "-",
                "not run",
                "-",
                "-",
                "-",
                "-",
                "-",
                skipped["reason"][:80],
            )
    console.print(table)
    for document in documents:
        if document.get("max_client_processes"):
            console.print(f"{document['system']}: {document.get('concurrency')}")


def _latency_line(label: str, latency: dict[str, Any]) -> str:
    return (
        f"{label} = avg {_ms(latency['avg_ms'])} ms, stddev {_ms(latency['stddev_ms'])}, "
        f"p50 {_ms(latency['p50_ms'])}, p95 {_ms(latency['p95_ms'])}, p99 {_ms(latency['p99_ms'])}, "
        f"p99.9 {_ms(latency['p999_ms'])}, max {_ms(latency['max_ms'])}"
    )


def final_report(document: dict[str, Any], entry: dict[str, Any]) -> list[str]:
    """pgbench's closing block for one run, plus what pgbench does not say."""
    if "error" in entry:
        return [f"run {entry['run_id']} failed: {entry['error'][:300]}"]
    summary = entry["summary"]
    total = summary["transactions"] + summary["failed"]
    lines = [
        f"transaction type: {entry['mix']} ({entry.get('mix_description', '')})",
        f"documents: {document['dataset']['docs']:,}, keys {entry['distribution']}; "
        f"scenario {entry['scenario']}",
        f"number of clients: {entry['clients']}, worker processes: {entry['processes']}",
        f"duration: {entry['duration_s']:g} s (after {entry['warmup_s']:g} s of warm-up)",
        f"number of transactions actually processed: {summary['transactions']:,}",
        f"number of failed transactions: {summary['failed']:,} "
        f"({100 * summary['failed'] / total if total else 0:.3f}%)",
    ]
    if entry.get("rate"):
        lines.append(f"rate: {entry['rate']:g} ops/s scheduled (Poisson)")
        lines.append(_latency_line("response time (from intended start)", summary["response"]))
        lines.append(_latency_line("service time", summary["service"]))
        lines.append(_latency_line("schedule lag", summary["schedule_lag"]))
    else:
        lines.append(_latency_line("latency", summary["latency"]))
    if summary.get("aborted_clients"):
        lines.append(f"clients aborted (connection gone): {summary['aborted_clients']}")
    lines.append(f"initial connection time = {_ms(summary['connection_ms']['avg'])} ms (avg)")
    driver = summary.get("driver") or {}
    if driver.get("cpu_us_per_op"):
        lines.append(
            f"driver: {driver['loop']} client loop, {driver['cpu_us_per_op']:.1f} µs of CPU per operation"
        )
    lines.append(f"tps = {summary['tps']:.6f} (without initial connection time)")
    for name, op in summary["operations"].items():
        lines.append(
            f"  {name}: {op['ok']:,} ok, {op['failed']:,} failed, {op['tps']:,.1f} tps, "
            f"p50 {_ms(op['response']['p50_ms'])} ms, "
            f"p99 {_ms(op['response']['p99_ms'])} ms"
            + (f"; first error: {op['first_error'][:120]}" if op.get("first_error") else "")
        )
    check = entry["check"]
    lines.append(
        f"counts: {check['verdict']} ({check['operations']:,} operations = "
        f"{check['histogram_values']:,} histogram values; {check['rows_changed']:,} rows "
        f"changed by {check['updates']:,} updates; {check['count_before']:,} + "
        f"{check['inserts']:,} inserts = {check['count_after']:,} documents)"
        + ("".join(f"; {p}" for p in check["problems"]))
    )
    ceiling = entry.get("ceiling")
    if ceiling:
        lines.append(
            f"driver ceiling (no-op target, same clients and processes): {ceiling['tps']:,.0f} ops/s"
            + (f" -- WARNING: {entry['ceiling_warning']}" if entry.get("ceiling_warning") else "")
        )
    if entry.get("memory_cap"):
        cap = entry["memory_cap"]
        lines.append(
            f"io: cgroup limit {cap['limit_bytes'] / 1e6:,.0f} MB, paged in "
            f"{cap['pages_in_bytes'] / 1e6:,.0f} MB, machine disk reads "
            f"{cap['machine_disk_read_bytes'] / 1e6:,.0f} MB"
        )
    limit = document.get("io_limit")
    if limit:
        served = entry.get("io_served") or {}
        seconds = entry.get("wall_seconds") or 0
        rates = (
            f"; the engine issued {served.get('read_ios', 0) / seconds:,.0f} reads/s, "
            f"{served.get('write_ios', 0) / seconds:,.0f} writes/s over warm-up and run"
            if served and seconds
            else ""
        )
        lines.append(
            f"io limit: {limit['asked']} on {limit.get('device_name')} ({limit.get('device')}, "
            f"cgroup {limit.get('cgroup')}){rates}"
        )
    native = entry.get("native_reference") or {}
    if native.get("tps"):
        custom = native.get("custom") or {}
        cpu = (
            f"; its CPU {custom['cpu_us_per_op']:.1f} µs per operation" if custom.get("cpu_us_per_op") else ""
        )
        order = f" (run {'before' if native.get('order') == 'native first' else 'after'} docbench's)"
        lines.append(
            f"{native['tool']} with the same statements{order}: tps = {native['tps']:,.1f}; "
            f"docbench / {native['tool']} = {native['ratio']:.2f}{cpu}"
        )
    builtin = native.get("builtin") or {}
    if builtin.get("tps"):
        lines.append(f"{native['tool']} built-in {builtin['script']}: tps = {builtin['tps']:,.1f}")
    return lines


def dashboard_section(
    documents: list[dict[str, Any]], all_documents: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The throughput runs, one row each, as the terminal report prints them."""
    from docbench.results.files import trimmed_document

    rows = [run_row(d, run) for d in documents for run in d.get("runs", [])]
    return {
        "columns": list(COLUMNS),
        "rows": rows,
        "docs": [trimmed_document(d) | {"_path": d.get("_path")} for d in documents],
    }
