"""A JSON Schema per workload: ``schema/<workload>.schema.json``, generated from the result
models (``results/models``) by `scripts/results-schema.py`; a test checks that the committed
files are what the models give, and tests validate every result against them.

Documents of format 1 (analytics only had a schema then) are checked against the schema of
their own format, ``analytics.v1.schema.json``, kept as it was written: a results directory of
an older docbench stays valid as what it is, and is upgraded when read (compat.py)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from docbench.core.jsontypes import JsonMapping, JsonObject, as_object

SCHEMA_DIR = Path(__file__).parent / "schema"


def schema_path(name: str) -> Path:
    return SCHEMA_DIR / f"{name}.schema.json"


def schema_text(schema: JsonMapping) -> str:
    """How a schema file is written (so that the check compares text)."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


@cache
def schema_for(workload: str) -> JsonObject:
    path = schema_path(workload)
    if not path.exists():
        raise KeyError(f"no schema for the {workload} workload ({path})")
    return as_object(json.loads(path.read_text()), str(path))


def validate(document: JsonMapping) -> None:
    """Raise ValueError (pydantic's ValidationError) when a result document breaks its
    workload's model, which is its schema (format 1: jsonschema's ValidationError against the
    schema of that format). The model checks in a millisecond what jsonschema takes 60 for."""
    body = {k: v for k, v in document.items() if not k.startswith("_")}
    workload = str(document.get("workload", "analytics"))
    if document.get("format", 1) == 1:
        import jsonschema

        jsonschema.validate(body, schema_for(f"{workload}.v1"))
        return
    from docbench.results.models import RESULT_MODELS

    RESULT_MODELS[workload].model_validate(body)
