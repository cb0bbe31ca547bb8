"""The result file of each workload as a model (pydantic): the one description of what a
result holds. The JSON Schemas in ``results/schema/`` are generated from these models
(`scripts/results-schema.py`; a test checks the committed ones are current)."""

from __future__ import annotations

from docbench.core.jsontypes import JsonObject
from docbench.results.models.analytics import AnalyticsResult
from docbench.results.models.fidelity import FidelityResult
from docbench.results.models.header import Cluster, EngineMode, Model, RunHeader
from docbench.results.models.shapes import ShapesResult
from docbench.results.models.storage import StorageResult
from docbench.results.models.throughput import ThroughputResult
from docbench.results.models.updates import UpdatesResult

RESULT_MODELS: dict[str, type[RunHeader]] = {
    "analytics": AnalyticsResult,
    "fidelity": FidelityResult,
    "shapes": ShapesResult,
    "storage": StorageResult,
    "throughput": ThroughputResult,
    "updates": UpdatesResult,
}


def model_schema(workload: str) -> JsonObject:
    """The JSON Schema of a workload's result file, from its model."""
    model = RESULT_MODELS[workload]
    schema = model.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


__all__ = [
    "RESULT_MODELS",
    "AnalyticsResult",
    "Cluster",
    "EngineMode",
    "FidelityResult",
    "Model",
    "RunHeader",
    "ShapesResult",
    "StorageResult",
    "ThroughputResult",
    "UpdatesResult",
    "model_schema",
]
