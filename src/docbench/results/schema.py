"""A JSON Schema per workload: ``schema/<workload>.schema.json`` (tests validate every result).

Documents of format 1 (analytics only had a schema then) are checked against the schema of
their own format, ``analytics.v1.schema.json``: a results directory of an older docbench stays
valid as what it is, and is upgraded when read (compat.py)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).parent / "schema"


@cache
def schema_for(workload: str) -> dict[str, Any]:
    path = SCHEMA_DIR / f"{workload}.schema.json"
    if not path.exists():
        raise KeyError(f"no schema for the {workload} workload ({path})")
    return json.loads(path.read_text())


def validate(document: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError when a result document breaks its workload's schema."""
    import jsonschema

    workload = document.get("workload", "analytics")
    name = f"{workload}.v1" if document.get("format", 1) == 1 else workload
    jsonschema.validate({k: v for k, v in document.items() if not k.startswith("_")}, schema_for(name))
