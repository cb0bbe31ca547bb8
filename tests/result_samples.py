"""Result documents for tests: a complete header (every field a result model requires), then
the fields the test is about."""

from __future__ import annotations

from typing import Any

from docbench.results.models import AnalyticsResult


def header(workload: str, system: str, variant: str, **fields: Any) -> dict[str, Any]:
    """A result document of ``workload`` that reads through its model, with ``fields``."""
    document = {
        "format": 2,
        "workload": workload,
        "system": system,
        "display_name": system,
        "variant": variant,
        "variant_role": "default",
        "variant_description": f"{variant} storage",
        "variant_settings": {},
        "dataset_label": "1m",
        "version": "1.2.3",
        "engine_mode": "embedded",
        "os": "Debian GNU/Linux 12 (bookworm)",
        "date": "2026-01-15",
        "machine": "2 cores, 8 GiB",
        "machine_slug": "test",
        "environment": {},
        "started_at": "2026-01-15T10:00:00+00:00",
        "finished_at": "2026-01-15T10:05:00+00:00",
        "complete": True,
    }
    return document | fields


def analytics_result(system: str, variant: str, **fields: Any) -> AnalyticsResult:
    """An analytics result of nothing measured but ``fields``."""
    document = header("analytics", system, variant) | {
        "retains_structure": "yes",
        "tags": [],
        "dataset_size": None,
        "num_loaded_documents": None,
        "total_size": None,
        "data_size": None,
        "index_size": None,
        "result": [],
        "load_time": None,
        "comment": "",
        "tries": 3,
        "dataset": {"label": "1m", "baselines": {}},
        "dataset_fingerprint": None,
    }
    return AnalyticsResult.model_validate(document | fields)
