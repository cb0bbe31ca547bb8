"""The result models are the one description of a result file: the committed JSON Schemas are
generated from them, and every published result file reads back through its model."""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pydantic
import pytest
from conftest import QUICK

from docbench.results import load_results, load_typed, result_model, result_models
from docbench.results.models import RESULT_MODELS, AnalyticsResult
from docbench.results.schema import schema_for, validate

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = [d for d in load_results([ROOT / "docs" / "results"]) if d.get("format", 1) == 2]


def body(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if not k.startswith("_")}


def test_the_committed_schemas_are_the_models() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "results-schema.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_published_result_reads_through_its_model() -> None:
    workloads = {str(d.get("workload", "analytics")) for d in PUBLISHED}
    assert {"analytics", "fidelity", "shapes"} <= workloads
    for document in PUBLISHED:
        model = RESULT_MODELS[str(document.get("workload", "analytics"))]
        parsed = model.model_validate(body(document))
        assert parsed.system == document["system"] and parsed.variant == document["variant"]
        validate(document)
    for workload in workloads:  # the generated schema says the same (jsonschema is slow: one each)
        first = next(d for d in PUBLISHED if d.get("workload", "analytics") == workload)
        jsonschema.validate(body(first), schema_for(workload))


def test_a_broken_result_is_refused_by_model_and_schema() -> None:
    analytics = next(d for d in PUBLISHED if d.get("workload", "analytics") == "analytics")
    for breakage in ("format", "system", "tries"):
        broken = copy.deepcopy(body(analytics))
        if breakage == "format":
            broken["format"] = 3
        elif breakage == "system":
            del broken["system"]
        else:
            broken["tries"] = 0  # at least one try
        with pytest.raises(pydantic.ValidationError):
            AnalyticsResult.model_validate(broken)
        with pytest.raises(pydantic.ValidationError):
            validate(broken)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema_for("analytics"))


def test_a_field_of_a_later_version_is_kept() -> None:
    """Results are read by later docbench versions and by tools that add fields: a field the
    model does not name is kept, not dropped."""
    analytics = next(d for d in PUBLISHED if d.get("workload", "analytics") == "analytics")
    extended = {**body(analytics), "added_later": {"x": 1}}
    parsed = AnalyticsResult.model_validate(extended)
    assert parsed.model_dump(mode="json")["added_later"] == {"x": 1}
    validate(extended)


def test_results_load_as_their_models_with_their_file(tmp_path: Path) -> None:
    """load_typed: every result as its workload's model, which remembers its file and the
    document as read; a result of format 1 (before the redesign) reads as the current one."""
    shutil.copytree(ROOT / "tests" / "fixtures" / "format1", tmp_path / "results")
    (old,) = load_typed([tmp_path / "results"], "analytics")
    assert isinstance(old, AnalyticsResult)
    # The fixture is a result of the QUICK role's system and variant.
    assert (old.system, old.display_name, old.variant) == (
        QUICK.system,
        f"{QUICK.display_name} (JSONB)",
        QUICK.variant,
    )
    assert old.path == str(tmp_path / "results" / f"{QUICK.system}.{QUICK.variant}.1m.json")
    assert old.as_read["format"] == 1 and (old.model_extra or {})["format_read_from"] == 1
    published = load_typed([ROOT / "docs" / "results" / "concurrency"])
    assert published and all(isinstance(r, AnalyticsResult) for r in published)
    assert all(r.as_read["_path"] == r.path for r in published)


def test_a_result_that_does_not_read_is_left_out_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    analytics = next(d for d in PUBLISHED if d.get("workload", "analytics") == "analytics")
    broken = {**body(analytics), "tries": 0, "_path": str(tmp_path / "broken.json")}
    assert result_models([broken, analytics]) == [result_model(analytics)]
    assert f"left out {tmp_path / 'broken.json'}, which does not read: tries:" in capsys.readouterr().err
    assert result_models([broken], quiet=True) == [] and capsys.readouterr().err == ""


def test_a_shape_query_the_representation_cannot_express_is_a_valid_not_run() -> None:
    """The shapes runner writes {"status": "not_run", "detail": why} for a query its compiler
    refuses (NotSupported): the model and the schema take it, and nothing else without a status."""
    shapes = next(d for d in PUBLISHED if d.get("workload") == "shapes")
    document = copy.deepcopy(body(shapes))
    name = next(iter(document["queries"]))
    document["queries"][name] = {"status": "not_run", "detail": "victorialogs: no field holds it"}
    parsed = RESULT_MODELS["shapes"].model_validate(document)
    assert parsed.queries[name].status.value == "not_run"
    jsonschema.validate(document, schema_for("shapes"))
    document["queries"][name] = {"detail": "no status"}
    with pytest.raises(pydantic.ValidationError):
        RESULT_MODELS["shapes"].model_validate(document)
