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
from typing import Any

from rich.console import Console
from rich.table import Table

from docbench.core.console import report_console
from docbench.results import load_results

MiB = 1 << 20


def _order(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from docbench.systems import REGISTERED

    def key(d: dict[str, Any]) -> tuple:
        system = d.get("system", "")
        rank = REGISTERED.index(system) if system in REGISTERED else len(REGISTERED)
        return (rank, system, d.get("rows", 0), d.get("variant", ""))

    return sorted(documents, key=key)


def _mib(value: int | None) -> str:
    return "-" if value is None else f"{value / MiB:,.1f}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def _cell_text(cell: dict[str, Any] | None) -> tuple[str, str]:
    if cell is None:
        return "", ""
    failure = cell.get("failure")
    if failure and not cell.get("rows_loaded"):
        message = failure.get("message", "")
        short = message.split("|")[0].split(":")[0][:30]
        return "[red]FAILED[/red]", f"[red]{short}[/red]"
    size = _mib(cell.get("total_size"))
    seconds = _seconds(cell.get("insert_seconds"))
    if failure:
        size += f" [red]({cell['rows_loaded']}/{cell['rows']} rows)[/red]"
    return seconds, size


def experiment_tables(documents: list[dict[str, Any]]) -> list[Table]:
    """The original experiment's table, one per (system, row count)."""
    tables = []
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for document in _order(documents):
        groups.setdefault((document["system"], document.get("rows", 0)), []).append(document)
    for (system, rows), docs in groups.items():
        entropies: list[str] = []
        for document in docs:
            for cell in document["cells"]:
                if cell["entropy"] not in entropies:
                    entropies.append(cell["entropy"])
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
            cells = {(c["size"], c["entropy"]): c for c in document["cells"]}
            sizes = sorted({c["size"] for c in document["cells"]})
            for index, size in enumerate(sizes):
                row = [document["variant"] if index == 0 else "", f"{size:,}"]
                for entropy in entropies:
                    row.extend(_cell_text(cells.get((size, entropy))))
                table.add_row(*row, end_section=index == len(sizes) - 1)
        tables.append(table)
    return tables


def _ratio(cells: list[dict[str, Any]]) -> float | None:
    stored = sum(c["total_size"] for c in cells if c.get("total_size") and c.get("input_bytes"))
    offered = sum(c["input_bytes"] for c in cells if c.get("total_size") and c.get("input_bytes"))
    return stored / offered if offered else None


def cross_system_table(documents: list[dict[str, Any]]) -> Table:
    """Bytes stored per byte of input (JSON documents), by entropy."""
    entropies: list[str] = []
    for document in documents:
        for cell in document["cells"]:
            if cell["entropy"] not in entropies:
                entropies.append(cell["entropy"])
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
        cells = document["cells"]
        largest = max((c["size"] for c in cells), default=None)
        row = [
            document["system"] if document["system"] != previous else "",
            document["variant"],
            f"{document.get('rows', 0):,}",
        ]
        previous = document["system"]
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


def bluesky_table(analytics: list[dict[str, Any]]) -> Table | None:
    """Default vs best compression of each system on the Bluesky documents, next to the
    dataset's file baselines (raw ndjson, gzip, zstd, lz4)."""
    rows = []
    for document in analytics:
        if document.get("variant_role") not in {"default", "best"}:
            continue
        if not document.get("total_size"):
            continue
        dataset = document.get("dataset") or {}
        rows.append((dataset.get("label", "?"), document.get("system_name") or document["system"], document))
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
    by_dataset: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    baselines: dict[str, dict[str, int]] = {}
    for label, system, document in rows:
        by_dataset.setdefault(label, {}).setdefault(system, {})[document["variant_role"]] = document
        found = (document.get("dataset") or {}).get("baselines")
        if found and label not in baselines:
            baselines[label] = found
    for label in sorted(by_dataset):
        raw = (baselines.get(label) or {}).get("raw")
        for name in ("raw", "gzip", "zstd", "lz4"):
            size = (baselines.get(label) or {}).get(name)
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
            d_size = default.get("total_size") if default else None
            b_size = best.get("total_size") if best else None
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


def print_report(
    documents: list[dict[str, Any]], console: Console, all_documents: list[dict[str, Any]]
) -> None:
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


def dashboard_section(
    documents: list[dict[str, Any]], all_documents: list[dict[str, Any]] | None = None
) -> dict[str, Any] | None:
    """No view of its own: the dashboard shows the generic table of the documents' fields."""
    return None
