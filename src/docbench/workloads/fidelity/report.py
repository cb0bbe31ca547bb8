"""The fidelity workload in the report: per system and representation, how many corpus
documents came back identical, as the same value, changed, refused or missing; then, per
document, what each representation did with it (the dashboard's table)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from docbench.results.files import trimmed_document
from docbench.workloads.fidelity.classify import OUTCOMES

SHORT = {
    "identical": "=",
    "same_value": "~",
    "changed": "CHANGED",
    "refused": "refused",
    "missing": "MISSING",
    "unreadable": "-",
}


def _name(document: dict[str, Any]) -> str:
    return f"{document.get('system')}/{document.get('variant')}"


def _lossless(document: dict[str, Any]) -> str:
    return {True: "yes", False: "NO", None: "cannot read back"}[document.get("lossless")]


def summary_table(documents: list[dict[str, Any]]) -> Table:
    table = Table(title="Fidelity: the corpus read back (= identical, ~ same value)")
    table.add_column("system/variant")
    table.add_column("representation")
    for outcome in (*OUTCOMES, "unreadable"):
        table.add_column(outcome.replace("_", " "), justify="right")
    table.add_column("lossless")
    for document in documents:
        counts = document.get("summary") or {}
        table.add_row(
            _name(document),
            (document.get("representation") or {}).get("name", ""),
            *(str(counts.get(o, 0)) for o in (*OUTCOMES, "unreadable")),
            _lossless(document),
        )
    return table


def detail_table(documents: list[dict[str, Any]]) -> Table:
    """One row per corpus document that some representation did not return identical."""
    table = Table(title="Fidelity: what each representation did with each document")
    table.add_column("document")
    names = [_name(d) for d in documents]
    for name in names:
        table.add_column(name, overflow="fold")
    rows: dict[str, list[str]] = {}
    for column, document in enumerate(documents):
        for row in document.get("documents", []):
            cells = rows.setdefault(row["name"], [""] * len(documents))
            note = "; ".join(row.get("notes") or [])
            cells[column] = SHORT.get(row["outcome"], row["outcome"]) + (f": {note}" if note else "")
    for name, cells in rows.items():
        if any(not cell.startswith("=") for cell in cells):
            table.add_row(name, *(cell[:160] for cell in cells))
    return table


def print_report(
    documents: list[dict[str, Any]], console: Console, all_documents: list[dict[str, Any]]
) -> None:
    documents = [d for d in documents if isinstance(d.get("documents"), list)]
    if not documents:
        return
    console.print(summary_table(documents))
    console.print(detail_table(documents))


def dashboard_section(
    documents: list[dict[str, Any]], all_documents: list[dict[str, Any]] | None = None
) -> dict[str, Any] | None:
    """The fidelity matrix: a row per system/variant, a column per outcome and the labels."""
    documents = [d for d in documents if isinstance(d.get("documents"), list)]
    if not documents:
        return None
    outcomes = [o.replace("_", " ") for o in OUTCOMES]
    columns = ["system/variant", "representation", *outcomes, "lossless", "not identical"]
    rows = []
    for document in documents:
        counts = document.get("summary") or {}
        changed = [
            f"{r['name']} ({r['outcome']}: {'; '.join(r.get('notes') or [])[:120]})"
            for r in document["documents"]
            if r["outcome"] not in ("identical",)
        ]
        rows.append(
            [
                _name(document),
                (document.get("representation") or {}).get("name", ""),
                *(counts.get(o, 0) for o in OUTCOMES),
                _lossless(document),
                "; ".join(changed),
            ]
        )
    # The rows' documents, for the details the page opens under a row.
    docs = [trimmed_document(d) | {"_path": d.get("_path")} for d in documents]
    return {"label": "Fidelity", "columns": columns, "rows": rows, "docs": docs}
