"""The figures of an analytics result, as ``docbench compare`` compares them.

Documents loaded; total, data and index bytes, as totals and per loaded document (sizes do not
depend on the machine); load time; per query the cold time (try 1) and the hot time (the best
of tries 2..n, as every report shows it) with the hot tries as its noise. JSONBench's published
results have the same keys, so they give the same figures. ``docbench compare`` hands over the
documents as read (results of other tools too), so the figures are taken from the document's
rows with the report's rules (``cold_of``, ``hot_of``).
"""

from __future__ import annotations

from typing import Any

from docbench.workloads.analytics.report import TRUSTED, cold_of, hot_of, per_query_row
from docbench.workloads.measures import Measure

QUERY_COUNT = 5
SIZES = (("total", "total_size"), ("data", "data_size"), ("index", "index_size"))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def storage_measures(document: dict[str, Any]) -> list[Measure]:
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


def _answer_note(document: dict[str, Any], q: int) -> str:
    """The note of a query whose time is not a result ("answer wrong", "answer error")."""
    answers = document.get("answers")
    if not isinstance(answers, list) or q >= len(answers) or not isinstance(answers[q], dict):
        return ""  # unchecked (imported results): nothing known against it
    status = str(answers[q].get("status", "error"))
    return "" if status in TRUSTED else f"answer {status}"


def query_measures(document: dict[str, Any], q: int) -> list[Measure]:
    row = per_query_row(document.get("result"), q)
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


def measures(document: dict[str, Any]) -> list[Measure]:
    found = storage_measures(document)
    found.append(Measure("load_time", "load time", "s", _number(document.get("load_time"))))
    for q in range(QUERY_COUNT):
        found.extend(query_measures(document, q))
    return found
