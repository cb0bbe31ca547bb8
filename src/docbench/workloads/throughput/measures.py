"""The figures of a throughput result, as ``docbench compare`` compares them.

Per run (scenario, mix, clients: its ``run_id``): TPS and the latency percentiles (p50, p95,
p99, p99.9; response time under --rate, else service time, as the report shows). Their noise is
the spread over the run's progress intervals (``<result>.<run_id>.intervals.json`` beside the
result, warm-up left out); without that file, or with one interval, a figure has no noise.
"""

from __future__ import annotations

import json
from pathlib import Path

from docbench.core.jsontypes import JsonMapping, JsonObject, JsonValue, as_array, object_or_empty
from docbench.workloads.measures import Measure

PERCENTILES = (("p50_ms", "p50"), ("p95_ms", "p95"), ("p99_ms", "p99"), ("p999_ms", "p99.9"))


def _number(value: JsonValue) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def intervals(document: JsonMapping, run_id: str) -> list[JsonObject]:
    """The run's progress intervals after the warm-up ([] when the file is not there)."""
    path = document.get("_path")
    if not path:
        return []
    result = Path(str(path))
    series = result.with_name(f"{result.name.removesuffix('.json')}.{run_id}.intervals.json")
    try:
        loaded: JsonValue = json.loads(series.read_text())
    except (OSError, ValueError):
        return []
    found = loaded.get("intervals") if isinstance(loaded, dict) else None
    return [i for i in as_array(found or [], "intervals") if isinstance(i, dict) and not i.get("warmup")]


def _samples(series: list[JsonObject], key: str) -> tuple[float, ...]:
    values = [_number(i.get(key)) for i in series]
    return tuple(v for v in values if v is not None)


def run_measures(document: JsonMapping, run: JsonMapping) -> list[Measure]:
    """A run in error has its figures, without values (a failure), and the error as note."""
    run_id = str(run.get("run_id"))
    summary = object_or_empty(run.get("summary") or None)
    latency = object_or_empty(summary.get("latency") or None)
    series = intervals(document, run_id)
    note = f"run error: {str(run['error'])[:80]}" if run.get("error") else ""
    found = [
        Measure(
            f"{run_id}.tps",
            f"{run_id} TPS",
            "ops/s",
            _number(summary.get("tps")),
            _samples(series, "tps"),
            higher_is_better=True,
            required=True,
            note=note,
        )
    ]
    for key, label in PERCENTILES:
        found.append(
            Measure(
                f"{run_id}.{key}",
                f"{run_id} {label} latency",
                "ms",
                _number(latency.get(key)),
                _samples(series, key),
                required=True,
                note=note,
            )
        )
    return found


def measures(document: JsonMapping) -> list[Measure]:
    found: list[Measure] = []
    for run in as_array(document.get("runs") or [], "runs"):
        if isinstance(run, dict) and run.get("run_id"):
            found.extend(run_measures(document, run))
    return found
