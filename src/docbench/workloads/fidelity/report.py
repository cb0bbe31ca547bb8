"""The fidelity workload in the report: per system and representation, how many corpus
documents came back identical, as the same value, changed, refused or missing (each
document's own verdict, alone in a fresh table); then, per document, what each representation
did with it; then the interactions: documents that came out otherwise when loaded together
with the others, and which other document decided it (the dashboard shows both)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
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
            table.add_row(name, *(escape(cell[:160]) for cell in cells))  # the engine's "[b]" is text
    return table


def interactions_table(documents: list[dict[str, Any]]) -> Table | None:
    """Each outcome that differs, loaded together, from the document's own verdict."""
    rows = [(document, i) for document in documents for i in document.get("interactions") or []]
    if not rows:
        return None
    table = Table(title="Fidelity: documents that came out otherwise loaded together (interactions)")
    for column in ("system/variant", "document", "alone", "together", "after", "paths", "engine's reason"):
        table.add_column(column, overflow="fold")
    for document, found in rows:
        table.add_row(
            _name(document),
            found["document"],
            found["own"],
            found["together"],
            interaction_after(found),
            escape(", ".join(found.get("paths") or [])),
            escape("; ".join(found.get("notes") or [])[:200]),
        )
    return table


def interaction_after(found: dict[str, Any]) -> str:
    after = found.get("after")
    if after is None:
        return "the documents together"
    return after if found.get("pairwise") else f"the documents up to {after}"


def print_report(
    documents: list[dict[str, Any]], console: Console, all_documents: list[dict[str, Any]]
) -> None:
    documents = [d for d in documents if isinstance(d.get("documents"), list)]
    if not documents:
        return
    console.print(summary_table(documents))
    console.print(detail_table(documents))
    interactions = interactions_table(documents)
    if interactions is not None:
        console.print(interactions)
        console.print(
            "[dim]Each document's verdict above is its own (alone in a fresh table); these are "
            "what a stream of varied documents meets: an earlier document's path decided it.[/dim]"
        )


def dashboard_section(
    documents: list[dict[str, Any]], all_documents: list[dict[str, Any]] | None = None
) -> dict[str, Any] | None:
    """The fidelity matrix: a row per system/variant, a column per outcome and the labels."""
    documents = [d for d in documents if isinstance(d.get("documents"), list)]
    if not documents:
        return None
    outcomes = [o.replace("_", " ") for o in OUTCOMES]
    columns = ["system/variant", "representation", *outcomes, "lossless", "not identical", "interactions"]
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
                "; ".join(
                    f"{i['document']} {i['own']} -> {i['together']} after {interaction_after(i)}"
                    f" ({', '.join(i.get('paths') or [])})"
                    for i in document.get("interactions") or []
                ),
            ]
        )
    # The rows' documents, for the details the page opens under a row.
    docs = [trimmed_document(d) | {"_path": d.get("_path")} for d in documents]
    return {"label": "Fidelity", "columns": columns, "rows": rows, "docs": docs}
