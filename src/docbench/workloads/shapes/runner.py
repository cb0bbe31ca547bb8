"""``docbench run shapes``: one knob of the document shape swept at a fixed document count.

For each value of the knob, the generator writes the documents (``docbench-gen shapes``: the
preset's knobs with this one set) and their shape queries' answers; then, for every system and
variant, as the analytics workload does for Bluesky events: a fresh table through the system's
analytics adapter, the documents loaded by the generic load driver (a refused document is
isolated, counted and logged with the engine's reason), the post-load steps, the engine's count
and sizes, then each shape query ``tries`` times in a fresh worker process (the server
restarted and the page cache dropped before the first try, when possible: cold, then hot), its
answer checked against the oracle's. One result file per (system, variant, knob value):
``shapes.<system>.<variant>.<preset>-<knob><value>-<docs>.<machine>.<time>.json``. Where each
engine breaks is read from these files by the report (report.py, break points).
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docbench import results
from docbench.contracts.analytics import AnalyticsAdapter
from docbench.contracts.common import NotSupported, Variant
from docbench.core import paths, procstats
from docbench.core.jsontypes import (
    JsonArray,
    JsonMapping,
    JsonObject,
    as_array,
    as_object,
    as_str,
    object_or_empty,
    optional_str,
)
from docbench.core.units import count_label
from docbench.dataset.shapes import DATA_NAME, Shape, generate_shapes, preset_knobs
from docbench.queries.shapes import shape_queries
from docbench.systems import (
    REGISTERED,
    adapter_class,
    adapter_variants,
    engine_class,
    open_engine,
    required_adapter_class,
)
from docbench.workloads import runloop
from docbench.workloads.load import LoadReport, end_load, load_files
from docbench.workloads.query_worker import QueryRun, run_query_in_worker
from docbench.workloads.shapes.expected import answers_without, check_rows, targets_from

WORKLOAD = "shapes"
ADAPTER_MODULE = "analytics"
# The knobs a sweep can vary (Shape's fields but the preset) and how a value is read.
KNOBS: dict[str, Callable[[str], int | float]] = {
    "paths": int,
    "per_doc": int,
    "depth": int,
    "array_share": float,
    "varying_share": float,
    "zipf": float,
    "string_len": int,
}


@dataclass
class ShapesRequest:
    knob: str
    values: list[Any]
    base: Shape = field(default_factory=Shape)
    docs: int = 100_000
    seed: int = 1
    system_names: list[str] | None = None
    variants: list[str] | None = None
    results_dir: Path = field(default_factory=paths.results_dir)
    tries: int = 3
    timeout: float = 600.0
    urls: dict[str, str] = field(default_factory=dict)
    restart_for_cold: bool = True
    # Skip a (system, variant, value) whose latest run on the same data is complete.
    resume: bool = False
    # A point's load stopped after this long (seconds; None: no bound) is recorded as failed:
    # an engine past its cliff (a mapping update per new field...) would hold the sweep for hours.
    load_limit_s: float | None = 1800.0
    quiet: bool = False


@dataclass(frozen=True)
class ShapePoint:
    """One value of the sweep: its shape, its data file and the generator's summary."""

    knob: str
    value: Any
    shape: Shape
    docs: int
    seed: int
    data_file: Path
    # The generator's summary (shapes.json): its knobs, the data's sha256, the queries' answers.
    summary: JsonObject

    @property
    def label(self) -> str:
        value = str(self.value).replace(".", "p")
        return f"{self.shape.preset}-{self.knob.replace('_', '')}{value}-{count_label(self.docs)}"

    def record(self) -> JsonObject:
        return {
            "preset": self.shape.preset,
            "knob": self.knob,
            "value": self.value,
            "knobs": self.summary.get("knobs"),
            "docs": self.docs,
            "seed": self.seed,
            "data_file": str(self.data_file),
            "data_sha256": self.summary.get("sha256"),
            "data_bytes": self.data_file.stat().st_size,
            "generator": self.summary.get("generator"),
        }


def run_shapes(request: ShapesRequest) -> int:
    """The sweep; the exit status is 1 when a run could not complete (a refusal or a wrong
    answer is a finding, not a failure)."""
    results.check_writable(request.results_dir)
    runs = plan_runs(request)
    if not runs:
        _say(request, "Nothing to run: no requested system can run here.")
        return 2
    failed = False
    for value in request.values:
        point = prepare_point(request, value)
        for name, variant in runs:
            document = run_or_record(name, variant, point, request)
            failed |= not document.get("complete")
    return 1 if failed else 0


def _say(request: ShapesRequest, text: str) -> None:
    if not request.quiet:
        print(text, flush=True)


def plan_runs(request: ShapesRequest) -> list[tuple[str, Variant]]:
    """Each chosen system (by default: those that run by default) with the variants named by
    --variants, else its first default one."""
    names = request.system_names or [n for n in REGISTERED if engine_class(n).runs_by_default]
    runs: list[tuple[str, Variant]] = []
    for name in names:
        availability = engine_class(name).availability(request.urls.get(name))
        if not availability.ok:
            _say(request, f"{name}: cannot run here: {availability.reason}")
            continue
        variants = adapter_variants(name, ADAPTER_MODULE)
        if request.variants:
            chosen = [v for v in variants if v.name in request.variants]
        else:
            chosen = [v for v in variants if v.chosen(None)][:1]
        if request.urls.get(name):
            chosen = [v for v in chosen if not v.own_server_only]
        runs.extend((name, variant) for variant in chosen)
    return runs


def prepare_point(request: ShapesRequest, value: Any) -> ShapePoint:
    shape = dataclasses.replace(request.base, **{request.knob: value})
    if request.knob == "paths" and shape.per_doc is None:
        # Every point's documents hold the same number of paths, the preset's or, when a
        # point has fewer distinct paths, that number: only the number of distinct paths
        # changes along the sweep.
        per_doc = int(preset_knobs(shape.preset)["per_doc"])
        shape = dataclasses.replace(shape, per_doc=min(per_doc, *request.values))
    directory = paths.datasets_dir() / f"shapes-{shape.label()}-{count_label(request.docs)}-s{request.seed}"
    _say(request, f"shape {shape.label()}: {request.docs:,} documents in {directory}")
    summary = generate_shapes(shape, request.docs, directory, seed=request.seed)
    return ShapePoint(request.knob, value, shape, request.docs, request.seed, directory / DATA_NAME, summary)


def run_or_record(name: str, variant: Variant, point: ShapePoint, request: ShapesRequest) -> JsonObject:
    url = request.urls.get(name)
    if request.resume:
        fingerprint = optional_str(point.summary.get("sha256"), "the data's sha256")
        latest = results.latest_run(
            request.results_dir, WORKLOAD, name, variant.name, point.label, fingerprint
        )
        if latest and latest[1].get("complete"):
            _say(
                request,
                f"skip {name}/{variant.name} {point.knob}={point.value}: {latest[0].name} is complete",
            )
            return latest[1]
    with runloop.result_slot(request.results_dir, WORKLOAD, name, variant.name, point.label) as path:
        document = run_point(name, variant, point, request, path)
        kept = runloop.save(path, document, url)
    if kept is None:
        document["complete"] = False
    _say(request, f"{name}/{variant.name} {point.knob}={point.value}: {summary_line(document)}")
    return document


def run_point(
    name: str, variant: Variant, point: ShapePoint, request: ShapesRequest, result_path: Path
) -> JsonObject:
    url = request.urls.get(name)
    workdir = runloop.claim_workdir(paths.work_dir() / f"shapes-{name}-{variant.name}", fresh=True)
    engine = open_engine(name, workdir, url)
    system: AnalyticsAdapter = required_adapter_class(name, ADAPTER_MODULE)(engine, variant)
    document: JsonObject = {
        **results.result_header(WORKLOAD, engine, variant, point.label),
        "representation": system.representation_labels(),
        "shape": point.record(),
        "dataset_fingerprint": point.summary.get("sha256"),
        "tries": request.tries,
        "timeout_seconds": request.timeout,
        "complete": False,
    }
    with runloop.engine_running(engine, document, release=system.release):
        document["version"] = engine.version() or "unknown"
        expected = load_phase(system, point, document, result_path, request.load_limit_s)
        queries = query_phase(system, expected, document, request)
        document["complete"] = not any(as_object(q, "query").get("crashed") for q in queries.values())
    return document


class LoadStopped(RuntimeError):
    """The load ran past the sweep's --load-limit."""


def load_phase(
    system: AnalyticsAdapter,
    point: ShapePoint,
    document: JsonObject,
    result_path: Path,
    limit_s: float | None = None,
) -> JsonObject:
    """Load the point's documents; the oracle's answers for what was loaded. A load that
    runs past ``limit_s`` is stopped between two batches (LoadStopped)."""
    system.create()
    log_path = result_path.with_suffix(".refused.tsv")
    began = time.perf_counter()
    offered = [0]

    def progress(lines: int) -> None:
        offered[0] += lines
        elapsed = time.perf_counter() - began
        if limit_s is not None and elapsed > limit_s and offered[0] < point.docs:
            raise LoadStopped(
                f"load stopped after {elapsed:.0f} s (--load-limit {limit_s:g}) with "
                f"{offered[0]:,} of {point.docs:,} documents sent"
            )

    try:
        with open(log_path, "w", encoding="utf-8") as refusal_log:
            report: LoadReport = load_files(
                system.loader(),
                [point.data_file],
                type(system).load_batch_size,
                on_progress=progress,
                refusal_log=refusal_log,
                known_documents={point.data_file.name: point.docs},
            )
    finally:  # no empty log beside a result (a load that failed or was stopped refused nothing)
        if log_path.exists() and log_path.stat().st_size == 0:
            log_path.unlink()
    end = end_load(system, report)
    count, storage, finish_seconds = end.count, end.storage, end.finish_seconds
    load_time = report.seconds + finish_seconds
    loaded = max(count, 1)
    first_refused: JsonArray = [
        {"file": r.file, "line": r.line, "reason": r.reason} for r in report.refused[:20]
    ]
    reasons: JsonObject = dict(reason_counts(report))
    finish_steps: JsonArray = list(system.finish_steps)
    document.update(
        {
            "offered": report.offered,
            "loaded": count,
            "load_time": round(load_time, 3),
            "load": {
                "insert_seconds": round(report.seconds, 3),
                "finish_seconds": round(finish_seconds, 3),
                "finish_steps": finish_steps,
                "documents_per_second": round(report.offered / load_time, 1) if load_time else None,
            },
            "refused": {
                "count": report.refused_count,
                "first": first_refused,
                "reasons": reasons,
                "log": log_path.name if report.refused_count else None,
            },
            "storage": {
                "total": storage.total,
                "data": storage.data,
                "index": storage.index,
                "bytes_per_document": round(storage.total / loaded, 1) if storage.total is not None else None,
            },
        }
    )
    if end.warning:
        as_array(document.setdefault("warnings", []), "warnings").append(end.warning)
    answers = dict(as_object(point.summary["answers"], "the generator's answers"))
    refused_lines = report.refused_lines.get(point.data_file.name, set())
    if refused_lines:
        answers = answers_without(point.data_file, answers, refused_lines)
        document["answers_basis"] = (
            f"recomputed without the {len(refused_lines)} refused documents: the queries are "
            "judged on what was loaded"
        )
    document["expected"] = answers
    return answers


def reason_counts(report: LoadReport) -> dict[str, int]:
    """The listed refusals' reasons (the first ones LoadReport keeps), with what is
    particular to one document folded (positions, paths, long numbers), and how often each
    came: "Limit of total fields [1000] has been exceeded" once, not 90,000 times."""
    counts: dict[str, int] = {}
    for refused in report.refused:
        reason = re.sub(r"\[\d+:\d+\]", "[…]", refused.reason)  # where in the document
        reason = re.sub(r"(field|path|key) \[[^\]]*\]", r"\1 […]", reason)  # which path
        reason = re.sub(r"\d{4,}", "N", reason)[:200]
        counts[reason] = counts.get(reason, 0) + 1
    return counts


def query_phase(
    system: AnalyticsAdapter, expected: JsonMapping, document: JsonObject, request: ShapesRequest
) -> JsonObject:
    """The shape queries (portable queries, docbench.queries.shapes), each compiled by the
    system's portable compiler and run cold and hot like any query; returns the document's
    ``queries`` (each query's record by its name)."""
    queries: JsonObject = {}
    document["queries"] = queries
    targets = targets_from(expected)
    query_set = shape_queries(targets.paths, targets.point_id, targets.threshold)
    compiler_class = adapter_class(system.name, "portable")
    if compiler_class is None:
        document["queries_not_supported"] = f"{system.name} has no portable-query compiler"
        return queries
    compiler = compiler_class(system.engine, system.variant)
    engine = system.engine
    can_drop = procstats.can_drop_page_cache()
    can_restart = engine.can_restart and request.restart_for_cold and not engine.embedded
    document["cold_method"] = (
        "fresh worker process"
        if engine.embedded
        else "server restarted"
        if can_restart
        else "server NOT restarted"
    ) + ("; OS page cache dropped" if can_drop else "; OS page cache NOT dropped (not root)")
    typed = system.keeps_structure()  # a representation without JSON types gives text
    for query in query_set.queries:
        try:
            compiled = compiler.compile(query)
        except NotSupported as reason:
            queries[query.name] = {"status": "not_run", "detail": str(reason)}
            continue
        if can_restart:
            engine.restart()
        if can_drop:
            procstats.drop_page_cache()
        spec = {**system.session_spec(), "timeout": request.timeout}
        run = run_query_in_worker(
            system.name, spec, 0, compiled.text, request.tries, request.timeout, compiled=True
        )
        crashed = not engine.is_alive()
        if crashed:
            engine.restart()
        for attempt in run.tries:  # the canonical rows the shape checks read
            if attempt.rows is not None:
                attempt.rows = shape_rows(query.name, compiled.decode(attempt.rows), typed)
        queries[query.name] = record_query(query.name, compiled.text, run, expected, crashed, typed)
    return queries


def shape_rows(name: str, rows: list[list[Any]], typed: bool) -> list[list[Any]]:
    """A shape query's rows as its check reads them: the point's value as JSON text (as text
    where the representation keeps no types); a count over nothing (no row) as 0."""
    if name == "point":
        return [
            [
                None
                if v is None
                else v
                if isinstance(v, str) and not typed
                else json.dumps(v, separators=(",", ":"))
            ]
            for v, *_ in rows
        ]
    if not rows:
        return [[0, 0] if name == "rare_aggregate" else [0]]
    return rows


def record_query(
    query: str, text: str, run: QueryRun, expected: JsonMapping, crashed: bool, typed: bool = True
) -> JsonObject:
    answered = [t for t in run.tries if t.rows is not None and t.error is None]
    if answered:
        check = check_rows(query, answered[0].rows, expected, typed)
        status, detail = check.status, check.detail
    else:
        status = "error"
        detail = next((t.error for t in run.tries if t.error), None) or run.worker_error or "no result"
    rows = answered[0].rows if answered else None
    return {
        "text": text,
        "result": [None if t.seconds is None else round(t.seconds, 6) for t in run.tries],
        "engine_time": [None if t.engine_seconds is None else round(t.engine_seconds, 6) for t in run.tries],
        "memory": [t.peak_rss for t in run.tries],
        "errors": [t.error for t in run.tries],
        "status": status,
        "detail": detail,
        "rows": None if rows is None else list(rows),
        "plan": run.plan,
        "crashed": crashed,
    }


def summary_line(document: JsonMapping) -> str:
    error = document.get("error")
    if error:
        return f"FAILED: {as_str(error, 'error')[:200]}"
    refused = object_or_empty(document.get("refused") or None).get("count", 0)
    storage = object_or_empty(document.get("storage") or None)
    queries = object_or_empty(document.get("queries") or None)
    answers = " ".join(f"{q}:{as_object(v, q)['status']}" for q, v in queries.items()) or document.get(
        "queries_not_supported", "no queries"
    )
    return (
        f"loaded {document.get('loaded', 0):,} of {document.get('offered', 0):,} ({refused:,} refused) in "
        f"{document.get('load_time')} s, {storage.get('bytes_per_document')} B/doc; {answers}"
    )
