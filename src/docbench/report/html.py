"""The static HTML dashboard: one self-contained file with every figure, script and style inline.

``docbench report --html FILE`` writes a page in the spirit of JSONBench's. Each registered
workload contributes its section (``Workload.dashboard_section``): the analytics workload the
main view (selectors, score, detail table, scaling), the others a table of their runs; a
workload without a view of its own gets the generic table of its documents' scalar fields. The
environment of every result is one click away. Nothing is fetched when the page is viewed, so
it works offline, attached to a mail or published as is. ``docbench compare --html`` writes
the same page with a Compare view (two result sets, ratio per figure, flags and warnings).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from docbench import __version__
from docbench.core.jsontypes import as_object
from docbench.results import load_results, now_iso
from docbench.results.files import latest_documents, trimmed_document
from docbench.workloads import all_workloads

TEMPLATE_DIR = Path(__file__).parent / "dashboard"
# What the main view shows when no workload provides one (an empty results directory).
EMPTY_MAIN: dict[str, Any] = {"shift": 0.01, "trusted": [], "queries": [], "datasets": [], "runs": []}


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def generic_table(workload: str, docs: list[dict[str, Any]]) -> dict[str, Any]:
    """A table of the documents' top-level scalar fields (the fallback view of a workload)."""
    first_columns = ["display_name", "system", "variant", "dataset_label", "date", "version"]
    found: list[str] = []
    for d in docs:
        for key, value in d.items():
            if key.startswith("_") or key in ("workload", "format") or not _scalar(value):
                continue
            if key not in found:
                found.append(key)
    columns = [c for c in first_columns if c in found]
    columns += [c for c in found if c not in columns]
    rows = []
    for d in docs:
        row = []
        for column in columns:
            value = d.get(column)
            row.append(value if _scalar(value) else None)
        rows.append(row)
    return {
        "workload": workload,
        "columns": columns,
        "rows": rows,
        "docs": [trimmed_document(d) | {"_path": d.get("_path")} for d in docs],
    }


# ----- the page ---------------------------------------------------------------------------


def build_payload(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """The page's data: the main view's keys at the top, the other workloads' tables in
    ``workloads`` (one each, in registry order)."""
    payload: dict[str, Any] = {
        "generated_at": now_iso(),
        "docbench_version": __version__,
        **EMPTY_MAIN,
        "workloads": [],
    }
    for workload in all_workloads():
        docs = [d for d in documents if d.get("workload") == workload.name]
        if not docs:
            continue
        section = workload.dashboard_section(docs, documents) or generic_table(workload.name, docs)
        if "main" in section:
            payload.update(as_object(section["main"], "the dashboard's main view"))
            payload["workloads"].extend(section.get("extra", []))
        else:
            payload["workloads"].append(
                {"workload": workload.name, "label": workload.summary.split(":")[0], **section}
            )
    return payload


def _template(name: str) -> str:
    return (TEMPLATE_DIR / name).read_text(encoding="utf-8")


def _finite(value: Any) -> Any:
    """NaN and infinities (which JSON cannot carry) become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _json_for_script(payload: dict[str, Any]) -> str:
    """JSON that is safe inside <script>: no '</script>', no '<!--', no U+2028/2029 surprises."""
    text = json.dumps(
        _finite(payload), ensure_ascii=False, allow_nan=False, default=str, separators=(",", ":")
    )
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def render_dashboard(payload: dict[str, Any]) -> str:
    page = _template("dashboard.html")
    parts = {
        "/*DOCBENCH_STYLE*/": _template("dashboard.css"),
        "/*DOCBENCH_SCRIPT*/": _template("dashboard.js"),
        "/*DOCBENCH_DATA*/": _json_for_script(payload),
    }
    for placeholder, text in parts.items():
        before, found, after = page.partition(placeholder)
        if not found:
            raise ValueError(f"dashboard template lacks {placeholder}")
        page = before + text.replace("</script", "<\\/script") + after
    return page


def _write_page(payload: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(render_dashboard(payload), encoding="utf-8")
    tmp.replace(out)


def write_dashboard(results_dirs: list[Path], out: Path) -> tuple[Path, dict[str, int]]:
    """Write the dashboard of every result under ``results_dirs``; returns the path and the
    number of results shown per workload."""
    payload = build_payload(latest_documents(load_results(results_dirs)))
    _write_page(payload, out)
    shown = {"analytics": len(payload["runs"])} if payload["runs"] else {}
    shown.update({w["workload"]: len(w.get("docs", [])) for w in payload["workloads"]})
    return out, shown


def write_comparison(comparison: dict[str, Any], out: Path) -> Path:
    """``docbench compare --html``: the dashboard page with its Compare view only; the data is
    ``docbench compare --json``'s document (``payload["comparison"]``)."""
    _write_page({**build_payload([]), "comparison": comparison}, out)
    return out
