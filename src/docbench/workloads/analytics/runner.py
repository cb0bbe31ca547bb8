"""The analytics workload (JSONBench): load, measure storage, run Q1-Q5 cold and hot, check.

For every (system, variant) the runner:
1. starts the system (managed server or embedded engine) in a work directory it owns;
2. loads the dataset through the generic load driver (refused documents isolated and logged);
3. runs the system's post-load step (indexes, VACUUM ANALYZE, merges) -- part of load time;
4. records the system's own document count and sizes;
5. runs each query `tries` times in a fresh worker process: before the first try the engine is
   restarted (servers) and the OS page cache dropped (when root), so try 1 is cold and the
   others hot; each try records wall time, engine time, peak memory and bytes read;
6. checks each answer against the oracle and writes the result file atomically.
A failure anywhere is recorded in the result and the run goes on with the next system.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from docbench import results
from docbench.contracts.analytics import AnalyticsAdapter
from docbench.contracts.capabilities import BlueskyQueries, capability
from docbench.contracts.cluster import cluster_record, phase_ended, phase_started
from docbench.contracts.common import NotSupported, Variant
from docbench.contracts.engine import Engine
from docbench.core import paths, procstats
from docbench.core.answers import AnswerCheck, check_answer
from docbench.core.jsontypes import JsonObject, as_array, as_int, as_object, as_str
from docbench.core.ownership import protect_directory
from docbench.core.redact import redact_text
from docbench.core.units import parse_count
from docbench.dataset.baselines import dataset_baselines
from docbench.dataset.manifest import read_manifest
from docbench.dataset.oracle import ComputeLog, load_or_compute_answers
from docbench.dataset.reader import dataset_files, read_error_message
from docbench.dataset.verify import DamagedDataset, verify_dataset
from docbench.queries.oracle import answers_for, evaluate_set
from docbench.queries.spec import JSONBENCH_SET, QuerySet, QuerySpecError
from docbench.systems import REGISTERED, adapter_variants, engine_class, open_engine, required_adapter_class
from docbench.workloads import runloop
from docbench.workloads.analytics.checkpoint import CHECKPOINT_NAME, LoadCheckpoint, TeeLog
from docbench.workloads.analytics.concurrency import ConcurrencyRequest, run_concurrency
from docbench.workloads.analytics.expected import answers_without
from docbench.workloads.analytics.ingest import IngestNotSupported, IngestRecord, IngestRequest, run_ingest
from docbench.workloads.analytics.portable import compiled_queries, run_portable_queries
from docbench.workloads.analytics.result import (
    AlternativeRecord,
    AnalyticsDocument,
    AnswerRecord,
    PerQueryRecords,
    header_part,
)
from docbench.workloads.load import LoadReport, end_load, load_files, offered_lines
from docbench.workloads.query_worker import QueryRun, run_query_in_worker

log = logging.getLogger(__name__)
console = Console(stderr=True)

QUERY_COUNT = 5
WORKLOAD = "analytics"


@dataclass
class RunRequest:
    system_names: list[str] | None = None
    scale: str | None = None
    data_dir: Path | None = None
    results_dir: Path = field(default_factory=paths.results_dir)
    tries: int = 3
    timeout: float = 600.0
    variants: list[str] | None = None
    # Also each system's representation variants (role "representation": json/jsonb,
    # JSON/VARIANT, String, typed columns...); --variants may name them one by one.
    representations: bool = False
    # Only each system's out-of-the-box variant (role "default") of the non-representations
    # (--default-variants: `make demo`'s one run per system).
    defaults_only: bool = False
    resume: bool = False
    urls: dict[str, str] = field(default_factory=dict)
    quiet: bool = False
    # Restart servers before each query's first try (a true cold run). Off = quicker runs,
    # tagged `no-restart-cold-run` like runs against a user's server.
    restart_for_cold: bool = True
    # Keep each variant's database after its result is written (default: removed, so that a
    # large scale needs the room of one database at a time).
    keep_databases: bool = False
    # Read every data file before use, even those known unchanged since their check
    # (--verify full); by default only files without a matching verification stamp are read.
    verify_full: bool = False
    # Q1-Q5 from many clients at once after the cold/hot queries (--clients); None: not run.
    concurrency: ConcurrencyRequest | None = None
    # Documents arriving while query clients run, after the queries (--ingest-rates).
    ingest: IngestRequest | None = None
    # The user's own queries (--queries FILE): run instead of Q1-Q5.
    query_set: QuerySet | None = None


@dataclass
class Dataset:
    path: Path
    label: str
    files: list[Path]
    answers: JsonObject  # the oracle's answer document
    baselines: dict[str, int]
    manifest: JsonObject | None
    # The portable query set's whole answers (before limits), by query name.
    portable_answers: dict[str, list[list[Any]]] | None = None

    @property
    def bluesky_shaped(self) -> bool:
        """Whether JSONBench's queries find anything here (Q1 counts Bluesky's commit events
        by collection): on other documents they would all be empty."""
        rows = [as_array(row, "a row of the oracle's q1") for row in as_array(self.answers.get("q1") or [])]
        return any(row and row[0] is not None for row in rows)

    @property
    def fingerprint(self) -> str:
        """The data's identity (its files' names and SHA-256, from the oracle): a result is
        reused by --resume only for exactly these files, whatever the directory is called."""
        import hashlib

        entries = sorted(file_hashes(self.answers))
        return hashlib.sha256(repr(entries).encode()).hexdigest()[:16]


def file_hashes(answers: JsonObject) -> list[tuple[str, str]]:
    """The data files the oracle read: (name, SHA-256) each, as its answer document lists them."""
    entries = [as_object(f, "a file of the oracle's answers") for f in as_array(answers.get("files", []))]
    return [(as_str(f.get("name", "")), as_str(f.get("sha256", ""))) for f in entries]


def run_analytics(request: RunRequest) -> int:
    """Run every planned (system, variant); the exit status is 0 only when every run the user
    asked for completed (an unavailable system that was named explicitly counts as failed)."""
    results.check_writable(request.results_dir)
    for kept in (request.results_dir, request.data_dir):  # never cleared, wherever they are
        if kept is not None:
            protect_directory(kept)
    runs, failures = plan_runs(request)
    if not runs:
        console.print(
            "[red]Nothing to run: no requested system can run here (see above and `docbench systems`).[/red]"
        )
        return 2
    refused = disk_refusal(request, runs)
    if refused:
        console.print(f"[red]Not started: {refused}[/red]\n(see `docbench plan --scale {request.scale}`)")
        return 2
    dataset = prepare_dataset(request)
    protect_directory(dataset.path)
    if request.query_set is None and not dataset.bluesky_shaped:
        request = dataclasses.replace(request, query_set=proposed_queries(dataset, request))
        attach_portable_answers(dataset, request)
    written = []
    for name, variant in runs:
        document = run_or_skip(name, variant, dataset, request)
        written.append(Path(as_str(document["_path"], "the result's path")))
        # A result kept elsewhere (the results directory failed: said on stderr) is a failure.
        failures += 0 if document.get("complete") and written[-1].parent == request.results_dir else 1
    from docbench.workloads.analytics.report import print_analytics_report

    print_analytics_report(written, only=written)  # the files, wherever they were kept
    return 1 if failures else 0


def run_or_skip(name: str, variant: Variant, dataset: Dataset, request: RunRequest) -> JsonObject:
    """With --resume, the latest complete run on the same data is reused (its file is
    reported, nothing runs); otherwise a new run writes a new file."""
    if request.resume:
        latest = results.latest_run(
            request.results_dir, WORKLOAD, name, variant.name, dataset.label, dataset.fingerprint
        )
        if latest and latest[1].get("complete"):
            console.print(f"[dim]skip {name}/{variant.name}: {latest[0].name} is complete[/dim]")
            return {**latest[1], "_path": str(latest[0])}
    with runloop.result_slot(request.results_dir, WORKLOAD, name, variant.name, dataset.label) as path:
        document: JsonObject = results.scrub(
            run_system(name, variant, dataset, request, path), request.urls.get(name)
        )
        kept = runloop.save(path, document, request.urls.get(name))
    if kept is None:  # printed on stderr (runloop.save says why)
        document["complete"] = False
    elif kept == path:
        console.print(f"[green]wrote[/green] {path}")
    document["_path"] = str(kept or path)
    return document


# ----- dataset ----------------------------------------------------------------------------


def prepare_dataset(request: RunRequest) -> Dataset:
    if request.data_dir:
        path = request.data_dir.resolve()
        label = path.name if path.is_dir() else path.stem
    else:
        label = request.scale or "1m"
        path = paths.datasets_dir() / f"bluesky-{label}"
        if not (path / "dataset.json").exists():
            from docbench.dataset.generate import generate_dataset

            console.print(f"Generating the {label} dataset into {path}")
            generate_dataset(parse_count(label), path, jobs=max(1, (_cpu_count())))
    try:
        files = dataset_files(path)
        if not files:
            raise SystemExit(f"no ndjson files in {path}")
        verify_before_use(path, files, full=request.verify_full)
        console.print(f"Dataset {path} ({len(files)} files): computing/reading the oracle's answers")
        oracle_log = ComputeLog()
        answers = load_or_compute_answers(path, jobs=_cpu_count(), log=oracle_log)
        for note in oracle_log.messages():  # a damaged or foreign cache, recomputed: say so
            console.print(note, style="yellow", markup=False, highlight=False)
        if not answers.get("documents"):
            # nothing any system could load: "5/5 correct" on no data would be a false verdict
            raise SystemExit(
                f"{path}: no documents: the oracle found no line that is a JSON object in "
                f"{len(files)} file(s) ({answers.get('invalid_lines', 0):,} invalid lines, "
                f"{answers.get('empty_lines', 0):,} empty lines); nothing to benchmark"
            )
        baselines = dataset_baselines(path, jobs=_cpu_count())
    except OSError as error:  # an unreadable file: say which, not a traceback
        raise SystemExit(read_error_message(error)) from None
    manifest = read_manifest(path) if path.is_dir() else None
    dataset = Dataset(
        path, label, files, answers, baselines, _manifest_summary(manifest) if manifest else None
    )
    attach_portable_answers(dataset, request)
    return dataset


def attach_portable_answers(dataset: Dataset, request: RunRequest) -> None:
    """The query set's answers (the oracle's, cached), when the run has a set."""
    if request.query_set is None:
        return
    console.print(f"Query set {request.query_set.name}: computing/reading the oracle's answers")
    hashes = file_hashes(dataset.answers)
    cache = paths.cache_dir_for(dataset.path)
    portable = answers_for(request.query_set, dataset.files, hashes, cache, jobs=_cpu_count())
    dataset.portable_answers = portable["queries"]


def proposed_queries(dataset: Dataset, request: RunRequest) -> QuerySet:
    """Documents that are not Bluesky events and no --queries: the set `docbench profile`
    proposes for them, written beside the results (to edit and give back with --queries)."""
    from docbench.queries.profile import profile_files, propose_queries, write_query_set
    from docbench.queries.spec import load_query_set

    proposal = propose_queries(profile_files(dataset.files, 200_000), dataset.label)
    target = request.results_dir / f"{dataset.label}.proposed-queries.yaml"
    if not target.exists():  # a proposal written before (perhaps edited since) is the user's
        write_query_set(proposal, target)
    console.print(
        f"[bold yellow]{NOT_BLUESKY_SHORT} Running the queries `docbench profile` proposes for them: "
        f"{target} (edit it and give it back with --queries).[/bold yellow]"
    )
    try:
        return load_query_set(target)
    except QuerySpecError as error:
        raise SystemExit(str(error)) from None


def verify_before_use(path: Path, files: list[Path], full: bool = False) -> None:
    """Every file is checked before the oracle or any engine trusts it (read when it has
    changed since its last check, or every file when ``full``): a damaged one (cut short,
    trailing garbage, not what dataset.json records) stops the run, named."""
    try:
        verified = verify_dataset(path, files, jobs=_cpu_count(), full=full)
    except DamagedDataset as damaged:
        raise SystemExit(str(damaged)) from None
    for note in verified.notes:  # a stamp file not used or not written, and why
        console.print(note, style="yellow", markup=False, highlight=False)
    console.print(verified.summary(path), style="dim", markup=False, highlight=False)


def _manifest_summary(manifest: Any) -> JsonObject:
    """The manifest's provenance fields (seed, generator version...) for the result file."""
    data = manifest if isinstance(manifest, dict) else getattr(manifest, "__dict__", {})
    keep: JsonObject = {k: v for k, v in data.items() if k not in ("files", "hard_documents", "dirty_lines")}
    for key in ("hard_documents", "dirty_lines"):
        if key in data and isinstance(data[key], list):
            keep[f"{key}_count"] = len(data[key])
    return keep


def _cpu_count() -> int:
    import os

    return os.cpu_count() or 1


# ----- which runs -------------------------------------------------------------------------


def plan_runs(request: RunRequest) -> tuple[list[tuple[str, Variant]], int]:
    """The (system, variant) runs to do, and how many named systems cannot run (failures)."""
    names = request.system_names or REGISTERED
    runs: list[tuple[str, Variant]] = []
    failures = 0
    for name in names:
        engine = engine_class(name)
        url = request.urls.get(name)
        if not request.system_names and not engine.runs_by_default and not url:
            continue
        availability = engine.availability(url)
        if not availability.ok:
            level = "red" if request.system_names else "yellow"
            failures += 1 if request.system_names else 0
            hint = f" -- install: {availability.install_hint}" if availability.install_hint else ""
            console.print(f"[{level}]{name}: cannot run here: {availability.reason}{hint}[/{level}]")
            continue
        variants = adapter_variants(name, WORKLOAD)
        chosen = [
            v for v in variants if v.chosen(request.variants, request.representations, request.defaults_only)
        ]
        if request.variants and not chosen:
            failures += 1 if request.system_names else 0
            console.print(
                f"[yellow]{name}: none of the variants {', '.join(request.variants)} "
                f"(known: {', '.join(v.name for v in variants)})[/yellow]"
            )
        if url:
            # Not the user's server to reconfigure: such a variant does not apply there.
            for variant in (v for v in chosen if v.own_server_only):
                console.print(
                    f"[yellow]{name}/{variant.name}: not run: it reconfigures the server, "
                    f"which only docbench's own one allows (not a server by URL)[/yellow]"
                )
            chosen = [v for v in chosen if not v.own_server_only]
        runs.extend((name, variant) for variant in chosen)
    return runs, failures


# ----- one system -------------------------------------------------------------------------


def run_system(
    name: str, variant: Variant, dataset: Dataset, request: RunRequest, path: Path
) -> AnalyticsDocument:
    engine = open_engine(name, paths.work_dir() / f"{name}-{variant.name}", request.urls.get(name))
    system: AnalyticsAdapter = required_adapter_class(name, WORKLOAD)(engine, variant)
    document = base_document(system, dataset, request)
    console.rule(f"{engine.display_name} / {variant.name}")

    def keep_for_resume_or_asked() -> bool:
        if keep_for_resume(engine, document):
            console.print(
                f"[yellow]the load did not finish: its database and checkpoint are "
                f"kept in {engine.workdir} for `docbench run --resume`[/yellow]"
            )
            return True
        return request.keep_databases

    with runloop.engine_running(
        engine,
        document,
        release=system.release,
        keep_workdir=keep_for_resume_or_asked,
        say=lambda message: console.print(f"[red]{name}/{variant.name} failed: {message}[/red]"),
    ):
        try:
            document["version"] = engine.version() or "unknown"
            versions: JsonObject = {**engine.versions()}
            document["environment"]["versions"] = versions
            refused: dict[str, set[int]] = {}
            expected = load_phase(system, dataset, document, request, path, refused)
            phase_ended(engine, "load")
            phase_started(engine, "queries")
            if dataset.bluesky_shaped and hand_written_too(request):
                query_phase(system, expected, document, request)
            if request.query_set is not None:
                portable_phase(system, portable_expected(dataset, request, refused), document, request)
            elif not dataset.bluesky_shaped:
                document.setdefault("warnings", []).append(NOT_BLUESKY)
                console.print(f"[bold yellow]{NOT_BLUESKY}[/bold yellow]")
            phase_ended(engine, "queries")
            if request.concurrency and request.query_set is None:
                phase_started(engine, "concurrency")
                wanted = dataclasses.replace(request.concurrency, progress=not request.quiet)
                document["concurrency"] = run_concurrency(system, expected, wanted, console.print)
                phase_ended(engine, "concurrency")
            if request.ingest:
                phase_started(engine, "ingest")
                document["ingest"] = ingest_phase(system, request.ingest)
                phase_ended(engine, "ingest")
            crashed = [f"Q{a['query']}" for a in document.get("answers", []) if a.get("crashed")]
            portable = document.get("portable")
            crashed += [q["name"] for q in (portable["queries"] if portable else []) if q.get("crashed")]
            document["complete"] = not crashed
            if crashed:
                document.setdefault("warnings", []).append(
                    f"the server crashed during {', '.join(crashed)}: the run is not complete "
                    "(--resume runs it again)"
                )
        finally:
            with contextlib.suppress(Exception):  # the running cluster's own word, faults included
                document["cluster"] = cluster_record(engine)
            lost = (document.get("cluster") or {}).get("lost")
            if lost:
                note = as_object(lost, "the cluster's lost data")["note"]
                document.setdefault("warnings", []).append(f"lost data: {note}")
    document["docbench_peak_rss_bytes"] = procstats.own_peak_rss()
    return document


def ingest_phase(system: AnalyticsAdapter, request: IngestRequest) -> IngestRecord | IngestNotSupported:
    """The live-ingest levels, or why the system has none (recorded, the run goes on)."""
    try:
        return run_ingest(system, request, console.print)
    except NotSupported as reason:
        console.print(f"[yellow]{reason}[/yellow]")
        return {"not_supported": str(reason)}


def generated_documents(dataset: Dataset) -> dict[str, int]:
    """Files exactly as docbench's generator wrote them (its manifest's SHA-256 is the one the
    oracle found) with no dirty line: their line count, each line a document starting with
    '{'. The load driver then needs no scan to hand them whole to an engine's reader -- a
    scan that, for a compressed file, is a whole decompression."""
    return generated_line_counts(dataset.path, dataset.answers)


def generated_line_counts(data_dir: Path, answers: JsonObject) -> dict[str, int]:
    """:func:`generated_documents` for a directory and its oracle answers."""
    manifest = read_manifest(data_dir) if data_dir.is_dir() else None
    if manifest is None:
        return {}
    files = [as_object(f, "a file of the oracle's answers") for f in as_array(answers.get("files", []))]
    found = {f.get("name"): f.get("sha256") for f in files}
    dirty = {line.file for line in manifest.dirty_lines}
    return {
        entry.name: entry.lines
        for entry in manifest.files
        if entry.name not in dirty
        and entry.lines == entry.docs
        and entry.sha256
        and found.get(entry.name) == entry.sha256
    }


def offered_counter(dataset: Dataset) -> Callable[[Path], int]:
    """The lines the load offers from a file, as a resumed load checks its checkpoint: from
    the generator's manifest when it wrote the file, else counted in the file."""
    known = generated_documents(dataset)
    return lambda path: known[path.name] if path.name in known else offered_lines(path)


def keep_for_resume(engine: Engine, document: AnalyticsDocument) -> bool:
    """A load that was interrupted after committing files keeps its database, so that
    --resume continues it (a multi-hour load is not started over for one kill)."""
    return document.get("load_time") is None and (engine.workdir / CHECKPOINT_NAME).exists()


def disk_refusal(request: RunRequest, runs: list[tuple[str, Variant]]) -> str | None:
    """Why the disk cannot hold this scale (the dataset still to generate and the databases,
    extrapolated from earlier results here), or None; --data directories exist already."""
    if not request.scale:
        return None
    from docbench.workloads.analytics.plan import make_plan, refusal

    # Databases on a server given by URL take no room here.
    names = sorted({name for name, _ in runs if not request.urls.get(name)})
    if not names:
        return None
    chosen = sorted({variant.name for _, variant in runs})
    return refusal(
        make_plan(request.scale, names, chosen, [request.results_dir], keep_databases=request.keep_databases)
    )


def results_text(engine: Engine, text: str) -> str:
    """Error text as it may be stored: never the password of a --<system>-url."""
    return redact_text(text, engine.url)


def base_document(system: AnalyticsAdapter, dataset: Dataset, request: RunRequest) -> AnalyticsDocument:
    engine = system.engine
    header = results.result_header(WORKLOAD, engine, system.variant, dataset.label)
    return {
        **header_part(header),
        # JSONBench's keys (its `system` is docbench's `display_name`)
        "retains_structure": "yes" if system.keeps_structure() else "no",
        "representation": system.representation_labels(),
        "tags": [engine.mode],
        "dataset_size": None,
        "num_loaded_documents": None,
        "total_size": None,
        "data_size": None,
        "index_size": None,
        "result": [[None] * request.tries for _ in range(QUERY_COUNT)],
        "memory_usage": [[None] * request.tries for _ in range(QUERY_COUNT)],
        "load_time": None,
        "comment": engine.notes,
        # docbench's additions
        "dataset_fingerprint": dataset.fingerprint,
        "dataset": {
            # what the data are: Bluesky events (generated or real: Q1-Q5 find them) or other
            # documents; `docbench compare` matches Bluesky runs on this and the count
            "kind": "bluesky" if dataset.bluesky_shaped else "documents",
            "label": dataset.label,
            "path": str(dataset.path),
            "files": [p.name for p in dataset.files],
            "fingerprint": dataset.fingerprint,
            "documents_by_oracle": dataset.answers.get("documents"),
            "invalid_lines_by_oracle": dataset.answers.get("invalid_lines"),
            "manifest": dataset.manifest,
            "baselines": dataset.baselines,
        },
        "tries": request.tries,
        "timeout_seconds": request.timeout,
    }


def load_phase(
    system: AnalyticsAdapter,
    dataset: Dataset,
    document: AnalyticsDocument,
    request: RunRequest,
    result_path: Path,
    refused: dict[str, set[int]] | None = None,
) -> JsonObject:
    """Load, finish, count and size; return the oracle answers for what was loaded (and fill
    ``refused`` with the refused documents' lines, by file).

    The load is resumable: each committed file is checkpointed (see checkpoint.py), and with
    --resume a load that was killed continues at the first file not committed."""
    checkpoint = LoadCheckpoint(system.engine.workdir, dataset.fingerprint, system.name, system.variant.name)
    resumed = None
    if request.resume:
        resumed, why = checkpoint.resume(system.count, dataset.files, offered_counter(dataset), system.name)
        console.print(f"[dim]{system.name}/{system.variant.name}: {why}[/dim]")
    if resumed is None:
        system.create()
        checkpoint.clear()
    phase_started(system.engine, "load")
    files = [f for f in dataset.files if resumed is None or f.name not in resumed.committed]
    lines_offered = as_int(dataset.answers.get("documents") or 0, "the oracle's documents") + as_int(
        dataset.answers.get("invalid_lines") or 0, "the oracle's invalid lines"
    )
    log_path = result_path.with_suffix(".refused.tsv")
    checkpoint.refusals_path.parent.mkdir(parents=True, exist_ok=True)
    with (
        _progress(request) as progress,
        RefusalLog(log_path) as refusal_log,
        open(checkpoint.refusals_path, "w", encoding="utf-8") as work_log,
    ):
        task = progress.add_task(f"load {system.name}/{system.variant.name}", total=lines_offered or None)
        label = f"load {system.name}/{system.variant.name}"
        done_before = len(dataset.files) - len(files)
        if resumed is not None:
            progress.advance(task, resumed.report.offered)
            for line in resumed.refusals:
                refusal_log.write(line)
                work_log.write(line)

        def on_file(done: int, total: int, path: Path) -> None:
            progress.update(
                task, description=f"{label} file {done_before + done + 1}/{done_before + total} ({path.name})"
            )

        def on_committed(paths: list[Path], report: LoadReport) -> None:
            work_log.flush()
            checkpoint.record(paths, report)

        report: LoadReport = load_files(
            system.loader(),
            files,
            type(system).load_batch_size,
            on_file=on_file,
            on_progress=lambda n: progress.advance(task, n),
            refusal_log=TeeLog(refusal_log, work_log),
            report=resumed.report if resumed else None,
            on_committed=on_committed,
            known_documents=generated_documents(dataset),
        )
    end = end_load(system, report)
    count, storage, finish_seconds = end.count, end.storage, end.finish_seconds
    load_time = report.seconds + finish_seconds
    document.update(
        {
            "dataset_size": report.offered,
            "num_loaded_documents": count,
            "total_size": storage.total,
            "data_size": storage.data,
            "index_size": storage.index,
            "load_time": round(load_time, 3),
            "load": {
                "insert_seconds": round(report.seconds, 3),
                "finish_seconds": round(finish_seconds, 3),
                "finish_steps": system.finish_steps,
                "documents_per_second": round(report.offered / load_time, 1) if load_time else None,
                "offered": report.offered,
                "empty_lines": report.empty_lines,
                "batches": report.batches,
                "retried_batches": report.retried_batches,
                "batch_size": type(system).load_batch_size,
                "resumed_after_files": done_before,
            },
            "load_errors": {
                "count": report.refused_count,
                "not_objects": report.not_objects,
                "first": [vars(r) for r in report.refused],
                "log": log_path.name if report.refused_count else None,
            },
            "storage": {
                "total": storage.total,
                "data": storage.data,
                "index": storage.index,
                "on_disk": storage.on_disk,
                "detail": storage.detail,
            },
        }
    )
    if end.warning:
        document.setdefault("warnings", []).append(end.warning)
    console.print(
        f"loaded {count:,} of {report.offered:,} documents in {load_time:.1f} s "
        f"({report.refused_count} refused); total size {_mb(storage.total)}"
    )
    # Lines that are not JSON objects are no documents for the oracle either: refusing them
    # changes no answer, so the oracle need not run again.
    if refused is not None:
        refused.update(report.refused_lines)
    if report.refused_count == report.not_objects:
        return dataset.answers
    document["answers_basis"] = (
        f"oracle re-run without the {report.refused_count} refused "
        "documents: answers judge the queries on what was loaded"
    )
    return answers_without(dataset.files, report.refused_lines, dataset.answers)


def query_phase(
    system: AnalyticsAdapter, expected: JsonObject, document: AnalyticsDocument, request: RunRequest
) -> None:
    engine = system.engine
    bluesky = capability(system, BlueskyQueries, "JSONBench's queries are not written for it")
    texts = bluesky.queries()
    can_drop = procstats.can_drop_page_cache()
    can_restart = engine.can_restart and request.restart_for_cold
    if not can_drop:
        document["tags"].append("lukewarm-cold-run")
    if not engine.embedded and not can_restart:
        document["tags"].append("no-restart-cold-run")
    document["cold_method"] = _cold_method(engine.embedded, can_restart, can_drop)
    per_query: PerQueryRecords = {
        "answers": [],
        "engine_time": [],
        "bytes_read": [],
        "plans": [],
        "plan_warnings": [],
        "query_errors": [],
        "query_extra": [],
    }
    with _progress(request) as progress:
        task = progress.add_task(f"queries {system.name}/{system.variant.name}", total=QUERY_COUNT)
        for number, text in enumerate(texts, start=1):
            run = run_one_query(system, number, text, request, can_restart, can_drop)
            record_query(document, per_query, system, number, run, expected)
            progress.advance(task)
    document.update(per_query)
    statuses = " ".join(f"Q{i + 1}:{a['status']}" for i, a in enumerate(per_query["answers"]))
    console.print(f"answers {statuses}")


NOT_BLUESKY_SHORT = "These documents are not Bluesky events: JSONBench's Q1-Q5 would match nothing."
NOT_BLUESKY = (
    "Q1-Q5 not run: these documents are not Bluesky events (JSONBench's queries would match "
    "nothing); give your own queries with --queries FILE (`docbench profile DATA` proposes a set)"
)


def hand_written_too(request: RunRequest) -> bool:
    """Q1-Q5 as each system writes them: without --queries, and beside the shipped `jsonbench`
    set (Q1-Q5 in the spec) so each compiled query runs on the same load as its hand-written
    twin, for the parity of answers and times."""
    return request.query_set is None or request.query_set.name == JSONBENCH_SET


def portable_expected(
    dataset: Dataset, request: RunRequest, refused: dict[str, set[int]]
) -> dict[str, list[list[Any]]]:
    """The query set's answers over what the system loaded: the oracle's, evaluated again
    without the documents the system refused (lines that are no JSON object change nothing)."""
    assert request.query_set is not None and dataset.portable_answers is not None
    if not refused:
        return dataset.portable_answers
    return dict(evaluate_set(request.query_set, dataset.files, skip=refused)["queries"])


def portable_phase(
    system: AnalyticsAdapter,
    expected: dict[str, list[list[Any]]],
    document: AnalyticsDocument,
    request: RunRequest,
) -> None:
    """The user's query set instead of Q1-Q5, cold and hot as they are, answers checked."""
    query_set = request.query_set
    assert query_set is not None
    engine = system.engine
    can_drop = procstats.can_drop_page_cache()
    can_restart = engine.can_restart and request.restart_for_cold
    document["cold_method"] = _cold_method(engine.embedded, can_restart, can_drop)
    if not document.get("answers"):  # no hand-written Q1-Q5 ran beside the set
        document["result"], document["memory_usage"] = [], []
    queries = query_set.queries
    with _progress(request) as progress:
        task = progress.add_task(f"queries {system.name}/{system.variant.name}", total=len(queries))
        record = run_portable_queries(
            system,
            query_set,
            expected,
            lambda text: run_one_query(system, 0, text, request, can_restart, can_drop, compiled=True),
            on_done=lambda: progress.advance(task),
        )
    document["portable"] = record
    if request.concurrency:
        # the set's queries from many clients at once (those the system can express)
        mix = [(q, c, expected[q.name]) for q, c in compiled_queries(system, query_set)]
        wanted = dataclasses.replace(request.concurrency, progress=not request.quiet)
        phase_started(engine, "concurrency")
        document["concurrency"] = run_concurrency(system, {}, wanted, console.print, portable=mix)
        phase_ended(engine, "concurrency")
    statuses = " ".join(
        f"{q['name']}:{q['status']}{'(empty)' if q.get('empty') else ''}" for q in record["queries"]
    )
    console.print(f"answers {statuses}")
    if record["all_empty"]:
        warning = (
            "every answer is empty (no row or only zero counts): the queries match nothing in "
            "these documents, so their times compare nothing"
        )
        document.setdefault("warnings", []).append(warning)
        console.print(f"[bold red]{warning}[/bold red]")


def run_one_query(
    system: AnalyticsAdapter,
    number: int,
    text: str,
    request: RunRequest,
    can_restart: bool,
    can_drop: bool,
    compiled: bool = False,
) -> QueryRun:
    engine = system.engine
    if not engine.embedded and can_restart:
        engine.restart()
    if can_drop:
        procstats.drop_page_cache()
    spec = {**system.session_spec(), "timeout": request.timeout}
    run = run_query_in_worker(system.name, spec, number, text, request.tries, request.timeout, compiled)
    if not engine.is_alive():
        run.crashed = True
        run.worker_error = (run.worker_error or "") + " server crashed during the query"
        for attempt in run.tries:
            if attempt.error is None:
                continue
            attempt.error = f"server crashed: {attempt.error}"
        console.print(
            f"[red]{system.name} crashed during {f'Q{number}' if number else 'a query'}; restarting[/red]"
        )
        engine.restart()
    return run


def record_query(
    document: AnalyticsDocument,
    per_query: PerQueryRecords,
    system: AnalyticsAdapter,
    number: int,
    run: QueryRun,
    expected: JsonObject,
) -> None:
    index = number - 1
    document["result"][index] = [_round(t.seconds) for t in run.tries]
    document["memory_usage"][index] = [t.peak_rss for t in run.tries]
    per_query["engine_time"].append([_round(t.engine_seconds) for t in run.tries])
    per_query["bytes_read"].append([t.read_bytes for t in run.tries])
    per_query["plans"].append(run.plan)
    per_query["plan_warnings"].append(
        system.check_plan(number, run.plan) if isinstance(system, BlueskyQueries) else None
    )
    per_query["query_errors"].append([t.error for t in run.tries])
    per_query["query_extra"].append([t.extra for t in run.tries])
    answer = answer_for(system, number, run, expected)
    alternatives = alternatives_for(number, run, expected, system.time_precision_us)
    if alternatives:
        answer["alternatives"] = alternatives
    if run.crashed:
        answer["crashed"] = True
    per_query["answers"].append(answer)


def alternatives_for(
    number: int, run: QueryRun, expected: JsonObject, time_precision_us: int
) -> dict[str, AlternativeRecord]:
    """Each alternative form's times per try and its own answer check."""
    names = {name for t in run.tries for name in t.alternatives}
    report: dict[str, AlternativeRecord] = {}
    for name in sorted(names):
        forms = [t.alternatives.get(name, {}) for t in run.tries]
        answered = [f for f in forms if f.get("rows") is not None]
        if answered:
            check = check_answer(
                number,
                answered[0]["rows"],
                expected,
                time_precision_us=time_precision_us,
                approximate=bool(answered[0].get("approximate")),
            )
        else:
            check = AnswerCheck.error(next((f["error"] for f in forms if f.get("error")), "not run"))
        report[name] = {
            "result": [_round(f.get("seconds")) for f in forms],
            "engine_time": [_round(f.get("engine_seconds")) for f in forms],
            "status": check.status,
            "detail": check.detail,
            "rows": check.rows,
        }
    return report


def answer_for(system: AnalyticsAdapter, number: int, run: QueryRun, expected: JsonObject) -> AnswerRecord:
    answered = [t for t in run.tries if t.rows is not None and t.error is None]
    if not answered:
        errors = [t.error for t in run.tries if t.error] or [run.worker_error or "no result"]
        check = AnswerCheck.error(errors[0])
    else:
        check = check_answer(
            number,
            answered[0].rows,
            expected,
            time_precision_us=system.time_precision_us,  # (the variant's: it may differ)
            approximate=number in system.approximate_queries,
        )
        if any(t.rows != answered[0].rows for t in answered[1:]):
            check.detail = (check.detail + "; " if check.detail else "") + "tries returned different rows"
    return {"query": number, "status": check.status, "detail": check.detail, "rows": check.rows}


def _cold_method(embedded: bool, can_restart: bool, can_drop: bool) -> str:
    engine = (
        "fresh worker process opens the database"
        if embedded
        else "server restarted"
        if can_restart
        else "server NOT restarted (user's server)"
    )
    cache = "OS page cache dropped" if can_drop else "OS page cache NOT dropped (not root)"
    return f"{engine}; {cache}"


class RefusalLog:
    """The refusal log beside the result, created at the first refusal (an interrupted or
    clean load leaves no empty file)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle: Any = None

    def write(self, text: str) -> int:
        if self.handle is None:
            self.handle = open(self.path, "w")  # noqa: SIM115 - closed in __exit__
            os.chmod(self.path, 0o644)
        return self.handle.write(text)

    def flush(self) -> None:
        if self.handle is not None:
            self.handle.flush()

    def __enter__(self) -> RefusalLog:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.handle is not None:
            self.handle.close()


class RateColumn(ProgressColumn):
    """Items per second (documents while loading, queries while querying)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:>10,.0f}/s" if speed else "", style="progress.data.speed")


def _progress(request: RunRequest) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=request.quiet,
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _mb(size: int | None) -> str:
    return "?" if size is None else f"{size / 1e6:,.1f} MB"
