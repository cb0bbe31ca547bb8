"""The header every workload's result document starts from: one meaning per key."""

from __future__ import annotations

from docbench.contracts.cluster import cluster_record
from docbench.contracts.common import Variant
from docbench.contracts.engine import Engine
from docbench.core.jsontypes import JsonObject
from docbench.results.environment import environment, machine_label, machine_slug, now_iso, today


def result_header(
    workload: str, engine: Engine, variant: Variant, dataset_label: str, version: str | None = None
) -> JsonObject:
    """Keys shared by every workload's result. ``system`` is the registry name, ``display_name``
    what people read; ``complete`` turns true only when the run did all it set out to do."""
    env = environment()
    from docbench.results.files import RESULT_FORMAT

    return {
        "format": RESULT_FORMAT,
        "workload": workload,
        "system": engine.name,
        "display_name": engine.display_name,
        "variant": variant.name,
        "variant_role": variant.role,
        "variant_description": variant.description,
        "variant_settings": variant.settings,
        "dataset_label": dataset_label,
        "version": version or "unknown",
        "engine_mode": engine.mode,
        "managed": engine.mode == "managed-server",
        "url": engine.display_url(),
        # Nodes, shards, replicas of a distributed engine (None for the others); the workload
        # replaces it at the end of the run by what the running cluster said.
        "cluster": cluster_record(engine),
        "os": env["os"],
        "date": today(),
        "machine": machine_label(),
        "machine_slug": machine_slug(),
        "environment": {**env},
        "started_at": now_iso(),
        "finished_at": None,
        "complete": False,
    }
