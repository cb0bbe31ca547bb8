"""The throughput table: system x scenario x mix x clients -> TPS, p50, p99 (and the driver's
ceiling, the native tool's ratio, the count check) from ``throughput.*.json`` result files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from rich.console import Console

from rich.table import Table

from docbench.core.console import report_console
from docbench.core.jsontypes import (
    JsonObject,
    JsonValue,
    as_array,
    as_float,
    as_int,
    as_object,
    as_str,
    object_or_empty,
)
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


class DashboardTable(TypedDict):
    """The dashboard's throughput view: the report's rows, and each result's details."""

    columns: list[str]
    rows: list[list[str]]
    docs: list[JsonObject]


def _ms(value: JsonValue) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "-"


def _object(value: JsonValue) -> JsonObject:
    """An optional part of a result: ``{}`` when absent (or empty, null, false, 0)."""
    return object_or_empty(value or None)


def run_row(document: JsonObject, run: JsonObject) -> list[str]:
    head = [
        run_name(document),
        as_str(run["scenario"], "scenario"),
        as_str(run["mix"], "mix"),
        str(run["clients"]),
        str(run.get("processes", "-")),
    ]
    if "error" in run:
        return [*head, "error", "-", "-", "-", "-", "-", as_str(run["error"], "error")[:60]]
    summary = as_object(run["summary"], "summary")
    latency = as_object(summary["latency"], "summary.latency")
    ceiling = _object(run.get("ceiling"))
    native = _object(run.get("native_reference"))
    notes = []
    if run.get("ceiling_warning"):
        notes.append("near driver ceiling")
    if run.get("memory_cap"):
        paged_in = as_object(run["memory_cap"], "memory_cap").get("pages_in_bytes")
        if paged_in is not None:
            notes.append(f"paged in {as_float(paged_in, 'pages_in_bytes') / 1e6:,.0f} MB")
    if document.get("io_limit"):
        notes.append(f"io-limit {as_object(document['io_limit'], 'io_limit')['asked']}")
    if summary.get("schedule_lag"):
        notes.append(f"lag p99 {_ms(as_object(summary['schedule_lag'], 'schedule_lag')['p99_ms'])} ms")
    ratio = native.get("ratio")
    return [
        *head,
        f"{summary['tps']:,.0f}",
        _ms(latency["p50_ms"]),
        _ms(latency["p99_ms"]),
        str(summary["failed"]),
        f"{ceiling['tps']:,.0f}" if ceiling.get("tps") else "-",
        f"{ratio:.2f}" if isinstance(ratio, (int, float)) else "-",
        f"{as_object(run['check'], 'check')['verdict']}{'; ' + '; '.join(notes) if notes else ''}",
    ]


def print_throughput_report(sources: list[Path], console: Console | None = None) -> None:
    documents = [d for d in load_results(sources) if d.get("workload") == "throughput"]
    print_report(documents, console or report_console(), documents)


def print_report(
    documents: Sequence[JsonObject], console: Console, _all_documents: Sequence[JsonObject]
) -> None:
    if not documents:
        return
    table = Table(title="Throughput (latency in ms: response time under --rate, else service time)")
    for column in COLUMNS:
        table.add_column(
            column,
            justify="right" if column in {"clients", "procs", "TPS", "p50", "p99", "failed"} else "left",
        )
    for document in sorted(documents, key=lambda d: (as_str(d["system"]), as_str(d["variant"]))):
        for run in as_array(document.get("runs", []), "runs"):
            table.add_row(*run_row(document, as_object(run, "a run")))
        for item in as_array(document.get("skipped", []), "skipped"):
            skipped = as_object(item, "a skipped scenario")
            table.add_row(
                run_name(document),
                as_str(skipped["scenario"], "scenario"),
                "-",
                "-",
                "-",
                "not run",
                "-",
                "-",
                "-",
                "-",
                "-",
                as_str(skipped["reason"], "reason")[:80],
            )
    console.print(table)
    for document in documents:
        if document.get("max_client_processes"):
            console.print(f"{document['system']}: {document.get('concurrency')}")


def _latency_line(label: str, figures: JsonValue) -> str:
    latency = as_object(figures, label)
    return (
        f"{label} = avg {_ms(latency['avg_ms'])} ms, stddev {_ms(latency['stddev_ms'])}, "
        f"p50 {_ms(latency['p50_ms'])}, p95 {_ms(latency['p95_ms'])}, p99 {_ms(latency['p99_ms'])}, "
        f"p99.9 {_ms(latency['p999_ms'])}, max {_ms(latency['max_ms'])}"
    )


def final_report(document: JsonObject, entry: JsonObject) -> list[str]:
    """pgbench's closing block for one run, plus what pgbench does not say."""
    if "error" in entry:
        return [f"run {entry['run_id']} failed: {as_str(entry['error'], 'error')[:300]}"]
    summary = as_object(entry["summary"], "summary")
    transactions = as_int(summary["transactions"], "transactions")
    failed = as_int(summary["failed"], "failed")
    total = transactions + failed
    lines = [
        f"transaction type: {entry['mix']} ({entry.get('mix_description', '')})",
        f"documents: {as_object(document['dataset'], 'dataset')['docs']:,}, keys {entry['distribution']}; "
        f"scenario {entry['scenario']}",
        f"number of clients: {entry['clients']}, worker processes: {entry['processes']}",
        f"duration: {entry['duration_s']:g} s (after {entry['warmup_s']:g} s of warm-up)",
        f"number of transactions actually processed: {transactions:,}",
        f"number of failed transactions: {failed:,} ({100 * failed / total if total else 0:.3f}%)",
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
    connection = as_object(summary["connection_ms"], "connection_ms")
    lines.append(f"initial connection time = {_ms(connection['avg'])} ms (avg)")
    driver = _object(summary.get("driver"))
    if driver.get("cpu_us_per_op"):
        lines.append(
            f"driver: {driver['loop']} client loop, {driver['cpu_us_per_op']:.1f} µs of CPU per operation"
        )
    lines.append(f"tps = {summary['tps']:.6f} (without initial connection time)")
    for name, figures in as_object(summary["operations"], "operations").items():
        op = as_object(figures, name)
        response = as_object(op["response"], f"{name}.response")
        lines.append(
            f"  {name}: {op['ok']:,} ok, {op['failed']:,} failed, {op['tps']:,.1f} tps, "
            f"p50 {_ms(response['p50_ms'])} ms, "
            f"p99 {_ms(response['p99_ms'])} ms"
            + (
                f"; first error: {as_str(op['first_error'], 'first_error')[:120]}"
                if op.get("first_error")
                else ""
            )
        )
    check = as_object(entry["check"], "check")
    lines.append(
        f"counts: {check['verdict']} ({check['operations']:,} operations = "
        f"{check['histogram_values']:,} histogram values; {check['rows_changed']:,} rows "
        f"changed by {check['updates']:,} updates; {check['count_before']:,} + "
        f"{check['inserts']:,} inserts = {check['count_after']:,} documents)"
        + ("".join(f"; {p}" for p in as_array(check["problems"], "problems")))
    )
    if entry.get("ceiling"):
        ceiling = as_object(entry["ceiling"], "ceiling")
        lines.append(
            f"driver ceiling (no-op target, same clients and processes): {ceiling['tps']:,.0f} ops/s"
            + (f" -- WARNING: {entry['ceiling_warning']}" if entry.get("ceiling_warning") else "")
        )
    if entry.get("memory_cap"):
        cap = as_object(entry["memory_cap"], "memory_cap")
        lines.append(
            f"io: cgroup limit {_mb(cap['limit_bytes'])} MB, paged in "
            f"{_mb(cap['pages_in_bytes'])} MB, machine disk reads "
            f"{_mb(cap['machine_disk_read_bytes'])} MB"
        )
    if document.get("io_limit"):
        limit = as_object(document["io_limit"], "io_limit")
        served = _object(entry.get("io_served"))
        seconds = entry.get("wall_seconds") or 0
        rates = (
            f"; the engine issued {as_float(served.get('read_ios', 0)) / as_float(seconds):,.0f} reads/s, "
            f"{as_float(served.get('write_ios', 0)) / as_float(seconds):,.0f} writes/s over warm-up and run"
            if served and seconds
            else ""
        )
        lines.append(
            f"io limit: {limit['asked']} on {limit.get('device_name')} ({limit.get('device')}, "
            f"cgroup {limit.get('cgroup')}){rates}"
        )
    native = _object(entry.get("native_reference"))
    if native.get("tps"):
        custom = _object(native.get("custom"))
        cpu = (
            f"; its CPU {custom['cpu_us_per_op']:.1f} µs per operation" if custom.get("cpu_us_per_op") else ""
        )
        order = f" (run {'before' if native.get('order') == 'native first' else 'after'} docbench's)"
        lines.append(
            f"{native['tool']} with the same statements{order}: tps = {native['tps']:,.1f}; "
            f"docbench / {native['tool']} = {native['ratio']:.2f}{cpu}"
        )
    builtin = _object(native.get("builtin"))
    if builtin.get("tps"):
        lines.append(f"{native['tool']} built-in {builtin['script']}: tps = {builtin['tps']:,.1f}")
    return lines


def _mb(value: JsonValue) -> str:
    return f"{as_float(value, 'a byte count') / 1e6:,.0f}"


def dashboard_section(
    documents: Sequence[JsonObject], all_documents: Sequence[JsonObject] | None = None
) -> DashboardTable:
    """The throughput runs, one row each, as the terminal report prints them."""
    from docbench.results.files import trimmed_document

    rows = [
        run_row(d, as_object(run, "a run")) for d in documents for run in as_array(d.get("runs", []), "runs")
    ]
    return {
        "columns": list(COLUMNS),
        "rows": rows,
        "docs": [trimmed_document(d) | {"_path": d.get("_path")} for d in documents],
    }
