"""The fidelity workload in the report: per system and representation, how many corpus
documents came back identical, as the same value, changed, refused or missing (each
document's own verdict, alone in a fresh table); then, per document, what each representation
did with it; then the interactions: documents that came out otherwise when loaded together
with the others, and which other document decided it (the dashboard shows both)."""

from __future__ import annotations

from typing import TypedDict

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from docbench.core.jsontypes import (
    JsonMapping,
    JsonObject,
    JsonValue,
    as_array,
    as_object,
    as_str,
    object_or_empty,
)
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


class Section(TypedDict):
    """The dashboard's fidelity view: the matrix and the documents of its rows."""

    label: str
    columns: list[str]
    rows: list[list[JsonValue]]
    docs: list[JsonObject]


def _name(document: JsonMapping) -> str:
    return f"{document.get('system')}/{document.get('variant')}"


def _lossless(document: JsonMapping) -> str:
    lossless = document.get("lossless")
    if not (lossless is None or isinstance(lossless, bool)):
        raise TypeError(f"lossless: expected true, false or null, got {type(lossless).__name__}")
    return {True: "yes", False: "NO", None: "cannot read back"}[lossless]


def _representation(document: JsonMapping) -> str:
    return as_str(object_or_empty(document.get("representation") or None).get("name", ""), "representation")


def _strings(value: JsonValue, what: str) -> list[str]:
    """A list of strings (notes, paths); [] when absent."""
    return [as_str(item, what) for item in as_array(value or [], what)]


def _documents(document: JsonMapping) -> list[JsonObject]:
    """The document's corpus rows (each document's own verdict)."""
    return [as_object(row, "corpus row") for row in as_array(document.get("documents", []), "documents")]


def _interactions(document: JsonMapping) -> list[JsonObject]:
    found = as_array(document.get("interactions") or [], "interactions")
    return [as_object(row, "interaction") for row in found]


def summary_table(documents: list[JsonObject]) -> Table:
    table = Table(title="Fidelity: the corpus read back (= identical, ~ same value)")
    table.add_column("system/variant")
    table.add_column("representation")
    for outcome in (*OUTCOMES, "unreadable"):
        table.add_column(outcome.replace("_", " "), justify="right")
    table.add_column("lossless")
    for document in documents:
        counts = object_or_empty(document.get("summary") or None)
        table.add_row(
            _name(document),
            _representation(document),
            *(str(counts.get(o, 0)) for o in (*OUTCOMES, "unreadable")),
            _lossless(document),
        )
    return table


def detail_table(documents: list[JsonObject]) -> Table:
    """One row per corpus document that some representation did not return identical."""
    table = Table(title="Fidelity: what each representation did with each document")
    table.add_column("document")
    names = [_name(d) for d in documents]
    for name in names:
        table.add_column(name, overflow="fold")
    rows: dict[str, list[str]] = {}
    for column, document in enumerate(documents):
        for row in _documents(document):
            cells = rows.setdefault(as_str(row["name"], "name"), [""] * len(documents))
            note = "; ".join(_strings(row.get("notes"), "notes"))
            outcome = as_str(row["outcome"], "outcome")
            cells[column] = SHORT.get(outcome, outcome) + (f": {note}" if note else "")
    for name, cells in rows.items():
        if any(not cell.startswith("=") for cell in cells):
            table.add_row(name, *(escape(cell[:160]) for cell in cells))  # the engine's "[b]" is text
    return table


def interactions_table(documents: list[JsonObject]) -> Table | None:
    """Each outcome that differs, loaded together, from the document's own verdict."""
    rows = [(document, i) for document in documents for i in _interactions(document)]
    if not rows:
        return None
    table = Table(title="Fidelity: documents that came out otherwise loaded together (interactions)")
    for column in ("system/variant", "document", "alone", "together", "after", "paths", "engine's reason"):
        table.add_column(column, overflow="fold")
    for document, found in rows:
        table.add_row(
            _name(document),
            as_str(found["document"], "document"),
            as_str(found["own"], "own outcome"),
            as_str(found["together"], "outcome together"),
            interaction_after(found),
            escape(", ".join(_strings(found.get("paths"), "paths"))),
            escape("; ".join(_strings(found.get("notes"), "notes"))[:200]),
        )
    return table


def interaction_after(found: JsonMapping) -> str:
    after = found.get("after")
    if after is None:
        return "the documents together"
    return as_str(after, "after") if found.get("pairwise") else f"the documents up to {after}"


def print_report(documents: list[JsonObject], console: Console, all_documents: list[JsonObject]) -> None:
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
    documents: list[JsonObject], all_documents: list[JsonObject] | None = None
) -> Section | None:
    """The fidelity matrix: a row per system/variant, a column per outcome and the labels."""
    documents = [d for d in documents if isinstance(d.get("documents"), list)]
    if not documents:
        return None
    outcomes = [o.replace("_", " ") for o in OUTCOMES]
    columns = ["system/variant", "representation", *outcomes, "lossless", "not identical", "interactions"]
    rows: list[list[JsonValue]] = []
    for document in documents:
        counts = object_or_empty(document.get("summary") or None)
        changed = [
            f"{r['name']} ({r['outcome']}: {'; '.join(_strings(r.get('notes'), 'notes'))[:120]})"
            for r in _documents(document)
            if r["outcome"] not in ("identical",)
        ]
        rows.append(
            [
                _name(document),
                _representation(document),
                *(counts.get(o, 0) for o in OUTCOMES),
                _lossless(document),
                "; ".join(changed),
                "; ".join(
                    f"{i['document']} {i['own']} -> {i['together']} after {interaction_after(i)}"
                    f" ({', '.join(_strings(i.get('paths'), 'paths'))})"
                    for i in _interactions(document)
                ),
            ]
        )
    # The rows' documents, for the details the page opens under a row.
    docs: list[JsonObject] = [trimmed_document(d) | {"_path": d.get("_path")} for d in documents]
    return {"label": "Fidelity", "columns": columns, "rows": rows, "docs": docs}
