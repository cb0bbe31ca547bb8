"""The figures of an analytics result, as ``docbench compare`` compares them.

Documents loaded; total, data and index bytes, as totals and per loaded document (sizes do not
depend on the machine); load time; per query the cold time (try 1) and the hot time (the best
of tries 2..n, as every report shows it) with the hot tries as its noise. JSONBench's published
results have the same keys, so they give the same figures. ``docbench compare`` hands over the
documents as read (results of other tools too), so the figures are taken from the document's
rows with the report's rules (``cold_of``, ``hot_of``).

``data(document)``: a result is matched on its data's kind and size where they are known (the
result's ``dataset.kind``, else inferred; a Bluesky dataset of 1,000,000 documents is
JSONBench's ``1m``, whatever its seed or directory), else on its dataset label.
"""

from __future__ import annotations

from docbench.core.jsontypes import JsonMapping, JsonObject, JsonValue, as_array
from docbench.core.units import count_label
from docbench.workloads.analytics.report import TRUSTED, cold_of, hot_of, per_query_row
from docbench.workloads.measures import ComparedData, Measure

QUERY_COUNT = 5
SIZES = (("total", "total_size"), ("data", "data_size"), ("index", "index_size"))


# The generator of Bluesky events (docbench-gen's shapes write no dataset.json manifest).
BLUESKY_GENERATOR = "docbench-gen"


def _count(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _number(value: JsonValue) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def storage_measures(document: JsonMapping) -> list[Measure]:
    loaded = _number(document.get("num_loaded_documents"))
    measures = [
        Measure("documents_loaded", "documents loaded", "documents", loaded, (), True, False),
    ]
    for name, key in SIZES:
        size = _number(document.get(key))
        measures.append(Measure(f"storage.{name}_bytes", f"{name} bytes", "bytes", size, (), False, False))
    for name, key in SIZES:
        size = _number(document.get(key))
        per_document = size / loaded if size is not None and loaded else None
        measures.append(
            Measure(
                f"storage.{name}_bytes_per_document",
                f"{name} bytes / document",
                "bytes/document",
                per_document,
                (),
                False,
                False,
            )
        )
    return measures


def _answer_note(document: JsonMapping, q: int) -> str:
    """The note of a query whose time is not a result ("answer wrong", "answer error")."""
    answers = document.get("answers")
    answer = answers[q] if isinstance(answers, list) and q < len(answers) else None
    if not isinstance(answer, dict):
        return ""  # unchecked (imported results): nothing known against it
    status = str(answer.get("status", "error"))
    return "" if status in TRUSTED else f"answer {status}"


def _per_query(value: JsonValue) -> list[list[float | None] | None] | None:
    """A per-query table (a row of figures per query, one per try) with its figures as
    numbers (anything else: none)."""
    if not isinstance(value, list):
        return None
    return [[_number(v) for v in row] if isinstance(row, list) else None for row in value]


def query_measures(document: JsonMapping, q: int) -> list[Measure]:
    row = per_query_row(_per_query(document.get("result")), q)
    hot_tries = tuple(n for v in row[1:] if (n := _number(v)) is not None)
    cold = _number(cold_of(row))
    note = _answer_note(document, q)
    return [
        Measure(
            f"q{q + 1}.cold",
            f"Q{q + 1} cold",
            "s",
            cold,
            (cold,) if cold is not None else (),
            required=True,
            note=note,
        ),
        Measure(
            f"q{q + 1}.hot",
            f"Q{q + 1} hot",
            "s",
            _number(hot_of(row)),
            hot_tries,
            required=True,
            note=note,
        ),
    ]


def measures(document: JsonMapping) -> list[Measure]:
    found = storage_measures(document)
    found.append(Measure("load_time", "load time", "s", _number(document.get("load_time"))))
    for q in range(QUERY_COUNT):
        found.extend(query_measures(document, q))
    return found


def _ran_bluesky_queries(document: JsonMapping) -> bool:
    """Q1-Q5 ran on the data (the runner runs them only on Bluesky events; data() has left out
    a portable query set's result already)."""
    if any("not Bluesky events" in str(w) for w in as_array(document.get("warnings") or [], "warnings")):
        return False
    answers = document.get("answers")
    return isinstance(answers, list) and bool(answers)


def data(document: JsonMapping) -> ComparedData:
    """The data an analytics result is matched on: Bluesky events of N documents are the scale
    count_label(N), whatever their seed or directory; any other data keeps its dataset label.

    The result says what its data are (``dataset.kind``: ``bluesky``, generated or real, or
    ``documents``; recorded since 2026-12-05). A result without it (an earlier one, JSONBench's)
    is on Bluesky events when they are JSONBench's published data, docbench-gen's, or a
    directory Q1-Q5 ran on. A portable query set (``portable``) is another set of figures: its
    label is the identity."""
    label = str(document.get("dataset_label"))
    found = document.get("dataset") or {}
    dataset: JsonObject = found if isinstance(found, dict) else {}
    kind = str(dataset["kind"]) if dataset.get("kind") else None
    if document.get("portable") is not None or kind not in (None, "bluesky"):
        return ComparedData(scale=label, kind=kind)
    given = dataset.get("manifest") or {}
    manifest: JsonObject = given if isinstance(given, dict) else {}
    provenance: tuple[tuple[str, str], ...] = ()
    directory = str(dataset.get("label") or label)
    documents = (
        _count(document.get("dataset_size"))
        or _count(manifest.get("docs"))
        or _count(dataset.get("documents_by_oracle"))
    )
    source_text = str(dataset.get("source") or "")
    if "Bluesky" in source_text and (document.get("engine_mode") == "imported" or not manifest):
        source = source_text.split(" (", 1)[0]  # JSONBench's Bluesky dataset
    elif manifest.get("generator") == BLUESKY_GENERATOR:
        seed = manifest.get("seed")
        source = f"generated, seed {seed}"
        if len(as_array(dataset.get("files") or [], "dataset.files")) == manifest.get(
            "files_total"
        ):  # every file: its count
            documents = _count(manifest.get("docs")) or documents
        provenance = (("seed", str(seed)), ("directory", directory))
    elif kind == "bluesky" or _ran_bluesky_queries(document):
        source, provenance = "", (("directory", directory),)
    else:
        source, documents = "", None
    if documents is None:
        return ComparedData(scale=label, kind=kind)
    return ComparedData(
        scale=count_label(documents),
        kind="bluesky",
        documents=documents,
        source=source,
        provenance=provenance,
    )
