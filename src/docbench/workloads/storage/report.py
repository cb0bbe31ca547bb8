"""The storage workload in the report.

1. Per system, the original TOAST experiment's table: one row per (variant, field size), for
   each entropy the insert time and the size on disk (a refused cell shows the refusal).
2. A cross-system view: bytes stored per byte of input, by entropy (all sizes together), and
   at the largest size.
3. The Bluesky figures of the analytics results: each system's default vs best compression
   (total size, bytes per raw ndjson byte) next to the file baselines (raw, gzip, zstd, lz4).
"""

from __future__ import annotations

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
from docbench.results import load_results

MiB = 1 << 20


def _order(documents: list[JsonObject]) -> list[JsonObject]:
    from docbench.systems import REGISTERED

    def key(d: JsonObject) -> tuple[int, str, int, str]:
        system = as_str(d.get("system", ""), "system")
        rank = REGISTERED.index(system) if system in REGISTERED else len(REGISTERED)
        return (rank, system, as_int(d.get("rows", 0), "rows"), as_str(d.get("variant", ""), "variant"))

    return sorted(documents, key=key)


def _number(value: JsonValue, what: str) -> int | float | None:
    """A JSON number as it is (an integer stays one), None for null; a TypeError naming
    ``what`` for anything else."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return value
    raise TypeError(f"{what}: expected a number, got {type(value).__name__}")


def _cells(document: JsonMapping) -> list[JsonObject]:
    return [as_object(cell, "cell") for cell in as_array(document["cells"], "cells")]


def _mib(value: int | float | None) -> str:
    return "-" if value is None else f"{value / MiB:,.1f}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def _cell_text(cell: JsonMapping | None) -> tuple[str, str]:
    if cell is None:
        return "", ""
    failure = cell.get("failure")
    if failure and not cell.get("rows_loaded"):
        message = as_str(as_object(failure, "failure").get("message", ""), "failure message")
        short = message.split("|")[0].split(":")[0][:30]
        return "[red]FAILED[/red]", f"[red]{short}[/red]"
    size = _mib(_number(cell.get("total_size"), "total_size"))
    seconds = _seconds(_number(cell.get("insert_seconds"), "insert_seconds"))
    if failure:
        size += f" [red]({cell['rows_loaded']}/{cell['rows']} rows)[/red]"
    return seconds, size


def _entropies(documents: list[JsonObject]) -> list[str]:
    """The cells' entropies, in the order they first come."""
    entropies: list[str] = []
    for document in documents:
        for cell in _cells(document):
            entropy = as_str(cell["entropy"], "entropy")
            if entropy not in entropies:
                entropies.append(entropy)
    return entropies


def experiment_tables(documents: list[JsonObject]) -> list[Table]:
    """The original experiment's table, one per (system, row count)."""
    tables = []
    groups: dict[tuple[str, int], list[JsonObject]] = {}
    for document in _order(documents):
        key = (as_str(document["system"], "system"), as_int(document.get("rows", 0), "rows"))
        groups.setdefault(key, []).append(document)
    for (system, rows), docs in groups.items():
        entropies = _entropies(docs)
        version = docs[0].get("version") or ""
        table = Table(
            title=f"Storage: {docs[0].get('display_name', system)} {version} -- "
            f"{rows:,} rows per cell (insert s, size MiB)",
            title_justify="left",
        )
        table.add_column("variant")
        table.add_column("field B", justify="right")
        for entropy in entropies:
            table.add_column(f"{entropy} s", justify="right")
            table.add_column(f"{entropy} MiB", justify="right")
        for document in docs:
            cells = {
                (as_int(c["size"], "size"), as_str(c["entropy"], "entropy")): c for c in _cells(document)
            }
            sizes = sorted({size for size, _entropy in cells})
            for index, size in enumerate(sizes):
                row = [as_str(document["variant"], "variant") if index == 0 else "", f"{size:,}"]
                for entropy in entropies:
                    row.extend(_cell_text(cells.get((size, entropy))))
                table.add_row(*row, end_section=index == len(sizes) - 1)
        tables.append(table)
    return tables


def _ratio(cells: list[JsonObject]) -> float | None:
    measured = [
        (_number(c.get("total_size"), "total_size"), _number(c.get("input_bytes"), "input_bytes"))
        for c in cells
    ]
    stored = sum(size for size, given in measured if size and given)
    offered = sum(given for size, given in measured if size and given)
    return stored / offered if offered else None


def cross_system_table(documents: list[JsonObject]) -> Table:
    """Bytes stored per byte of input (JSON documents), by entropy."""
    entropies = _entropies(documents)
    table = Table(
        title="Storage: bytes on disk per byte of input, by entropy "
        "(all sizes together / at the largest size; failed cells left out)",
        title_justify="left",
    )
    table.add_column("system")
    table.add_column("variant")
    table.add_column("rows", justify="right")
    for entropy in entropies:
        table.add_column(f"{entropy}", justify="right")
    table.add_column("failed cells", justify="right")
    previous = None
    for document in _order(documents):
        cells = _cells(document)
        largest = max((as_int(c["size"], "size") for c in cells), default=None)
        system = as_str(document["system"], "system")
        row = [
            system if system != previous else "",
            as_str(document["variant"], "variant"),
            f"{document.get('rows', 0):,}",
        ]
        previous = system
        for entropy in entropies:
            mine = [c for c in cells if c["entropy"] == entropy]
            overall = _ratio(mine)
            at_largest = _ratio([c for c in mine if c["size"] == largest])
            if overall is None:
                row.append("-")
            else:
                row.append(f"{overall:.3f} / " + (f"{at_largest:.3f}" if at_largest is not None else "-"))
        failed = sum(1 for c in cells if c.get("failure"))
        row.append(f"[red]{failed}[/red]" if failed else "0")
        table.add_row(*row)
    return table


def bluesky_table(analytics: list[JsonObject]) -> Table | None:
    """Default vs best compression of each system on the Bluesky documents, next to the
    dataset's file baselines (raw ndjson, gzip, zstd, lz4)."""
    rows: list[tuple[str, str, JsonObject]] = []
    for document in analytics:
        if document.get("variant_role") not in {"default", "best"}:
            continue
        if not document.get("total_size"):
            continue
        dataset = object_or_empty(document.get("dataset") or None)
        label = as_str(dataset.get("label", "?"), "dataset label")
        rows.append((label, as_str(document.get("system_name") or document["system"], "system"), document))
    if not rows:
        return None
    table = Table(
        title="Storage of the Bluesky documents (analytics results): default vs best "
        "compression, and the file baselines",
        title_justify="left",
    )
    table.add_column("dataset")
    table.add_column("system / file")
    table.add_column("default MiB", justify="right")
    table.add_column("B/raw B", justify="right")
    table.add_column("best MiB", justify="right")
    table.add_column("B/raw B", justify="right")
    table.add_column("best/default", justify="right")
    by_dataset: dict[str, dict[str, dict[str, JsonObject]]] = {}
    baselines: dict[str, JsonObject] = {}
    for label, system, document in rows:
        role = as_str(document["variant_role"], "variant_role")
        by_dataset.setdefault(label, {}).setdefault(system, {})[role] = document
        found = object_or_empty(document.get("dataset") or None).get("baselines")
        if found and label not in baselines:
            baselines[label] = as_object(found, "baselines")
    for label in sorted(by_dataset):
        raw = _number((baselines.get(label) or {}).get("raw"), "raw bytes")
        for name in ("raw", "gzip", "zstd", "lz4"):
            size = _number((baselines.get(label) or {}).get(name), f"{name} bytes")
            if size is None:
                continue
            table.add_row(
                label, f"[dim]file: {name}[/dim]", _mib(size), f"{size / raw:.3f}" if raw else "-", "", "", ""
            )
        systems = by_dataset[label]
        names = list(systems)
        for index, system in enumerate(names):
            default = systems[system].get("default")
            best = systems[system].get("best")
            d_size = _number(default.get("total_size"), "total_size") if default else None
            b_size = _number(best.get("total_size"), "total_size") if best else None
            table.add_row(
                "",
                system,
                _mib(d_size),
                f"{d_size / raw:.3f}" if d_size and raw else "-",
                _mib(b_size),
                f"{b_size / raw:.3f}" if b_size and raw else "-",
                f"{b_size / d_size:.2f}" if b_size and d_size else "-",
                end_section=index == len(names) - 1,
            )
    return table


def unsupported_systems() -> list[str]:
    from docbench.systems import REGISTERED, adapter_module

    return [name for name in REGISTERED if adapter_module(name, "storage") is None]


def print_storage_report(results_dirs: list[Path], console: Console | None = None) -> bool:
    """Print the storage tables when storage results exist; returns whether it printed any."""
    documents = load_results(results_dirs)
    storage = [d for d in documents if d.get("workload") == "storage"]
    if storage:
        print_report(storage, console or report_console(), documents)
    return bool(storage)


def print_report(documents: list[JsonObject], console: Console, all_documents: list[JsonObject]) -> None:
    """The storage tables; the Bluesky default-vs-best table too when analytics results exist."""
    documents = [d for d in documents if isinstance(d.get("cells"), list)]
    if not documents:
        return
    for table in experiment_tables(documents):
        console.print(table)
    console.print(cross_system_table(documents))
    bluesky = bluesky_table([d for d in all_documents if d.get("workload") == "analytics"])
    if bluesky is not None:
        console.print(bluesky)
    missing = unsupported_systems()
    if missing:
        console.print(f"Not supported by the storage workload yet: {', '.join(missing)}.")


def dashboard_section(documents: list[JsonObject], all_documents: list[JsonObject] | None = None) -> None:
    """No view of its own: the dashboard shows the generic table of the documents' fields."""
    return None
