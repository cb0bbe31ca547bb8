"""`docbench run updates`: for each system with an updates module, each variant,
each bulk update style:

create + load (timed) -> key index (timed) -> sizes before -> bulk add field11 (timed, rows
changed) -> sizes after -> the system's maintenance (timed) -> sizes maintained -> correctness
(count unchanged, every document has field11 by the system's own count, 100 documents read
back through a session equal the expected document).

After the last style of a variant: point reads then point updates by key, ``ops`` of each per
distribution, one client, each op timed with perf_counter_ns into an HdrHistogram (1 µs ..
60 s, 3 significant digits); the updated documents are read back afterwards.

Each style starts from a fresh table (``create()`` drops and recreates it, then the same
documents are loaded again), so every style updates the same freshly loaded data.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import random
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from docbench import results
from docbench.contracts import ycsb
from docbench.contracts.updates import UpdatesTarget
from docbench.core import paths
from docbench.core.jsontypes import JsonArray, JsonMapping, JsonObject, as_array, as_object
from docbench.core.units import count_label, parse_count
from docbench.servers.managed import clear_work_directory
from docbench.systems import REGISTERED, adapter_module, engine_class, open_engine, required_adapter_class
from docbench.workloads import runloop

log = logging.getLogger(__name__)

WORKLOAD = "updates"
HIST_LOWEST_NS = 1_000
HIST_HIGHEST_NS = 60_000_000_000
HIST_DIGITS = 3
SAMPLE_SIZE = 100
DISTRIBUTIONS = ("uniform", "zipfian")

T = TypeVar("T")


def _histogram():
    from hdrh.histogram import HdrHistogram

    return HdrHistogram(HIST_LOWEST_NS, HIST_HIGHEST_NS, HIST_DIGITS)


def summarize(hist, seconds: float, ops: int, errors: int) -> JsonObject:
    us = 1000.0
    return {
        "ops": ops,
        "errors": errors,
        "seconds": seconds,
        "ops_per_second": ops / seconds if seconds > 0 else None,
        "mean_us": hist.get_mean_value() / us,
        "p50_us": hist.get_value_at_percentile(50) / us,
        "p95_us": hist.get_value_at_percentile(95) / us,
        "p99_us": hist.get_value_at_percentile(99) / us,
        "p999_us": hist.get_value_at_percentile(99.9) / us,
        "max_us": hist.get_max_value() / us,
        "histogram": hist.encode().decode("ascii"),
        "histogram_unit": "ns",
    }


def _sizes(target: UpdatesTarget) -> JsonObject:
    try:
        return dataclasses.asdict(target.sizes())
    except Exception as error:  # noqa: BLE001 - a size figure is not worth the run
        return {"error": f"{type(error).__name__}: {error}"}


def _stats(target: UpdatesTarget) -> JsonObject:
    try:
        return target.extra_stats()
    except Exception as error:  # noqa: BLE001
        return {"error": f"{type(error).__name__}: {error}"}


def _timed(fn: Callable[..., T], *args: object) -> tuple[T, float]:
    started = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - started


def _same(got: JsonMapping | None, expected: JsonMapping) -> bool:
    if got is None:
        return False
    return {k: v for k, v in got.items() if k != "_id"} == expected


def check_bulk(target: UpdatesTarget, docs: int, seed: int, rng: random.Random) -> JsonObject:
    count = target.count()
    with_field = target.count_field(ycsb.NEW_FIELD, ycsb.NEW_FIELD_VALUE)
    sample = rng.sample(range(docs), min(SAMPLE_SIZE, docs))
    mismatches: JsonArray = []
    session = target.open_session(target.session_spec())
    try:
        for i in sample:
            expected = ycsb.document(i, seed)
            expected[ycsb.NEW_FIELD] = ycsb.NEW_FIELD_VALUE
            got = session.read(expected["ycsb_key"])
            if not _same(got, expected):
                mismatches.append(
                    {"key": expected["ycsb_key"], "got": None if got is None else [*sorted(got)]}
                )
    finally:
        session.close()
    verdict = "ok"
    if count < docs:
        verdict = "lost documents"
    elif count > docs:
        verdict = "duplicated documents"
    elif with_field != docs or mismatches:
        verdict = "wrong"
    return {
        "verdict": verdict,
        "count": count,
        "expected_count": docs,
        "with_new_field": with_field,
        "sample": len(sample),
        "sample_mismatches": len(mismatches),
        "mismatch_examples": mismatches[:3],
    }


def point_operations(
    target: UpdatesTarget, docs: int, seed: int, ops: int, distributions: list[str]
) -> JsonObject:
    """Point reads then point updates of one random field, per distribution, one client."""
    out: JsonObject = {}
    session = target.open_session(target.session_spec())
    written: dict[str, tuple[str, str]] = {}
    try:
        for distribution in distributions:
            per: JsonObject = {}
            for operation in ("read", "update"):
                pick = ycsb.chooser(distribution, docs, seed=seed * 31 + len(operation))
                rng = random.Random(seed * 17 + len(distribution) + len(operation))
                hist = _histogram()
                errors = missing = 0
                first_error = None
                started = time.perf_counter()
                for _ in range(ops):
                    key = ycsb.key_of(pick.next_index(), seed)
                    if operation == "update":
                        field = ycsb.FIELDS[rng.randrange(ycsb.FIELD_COUNT)]
                        value = ycsb.random_text(rng, ycsb.FIELD_LENGTH)
                    t0 = time.perf_counter_ns()
                    try:
                        if operation == "read":
                            found = session.read(key) is not None
                        else:
                            found = session.update_field(key, field, value) >= 1
                    except Exception as error:  # noqa: BLE001 - counted, the run goes on
                        errors += 1
                        first_error = first_error or f"{type(error).__name__}: {error}"
                        continue
                    hist.record_value(max(HIST_LOWEST_NS, time.perf_counter_ns() - t0))
                    if not found:
                        missing += 1
                    elif operation == "update":
                        written[key] = (field, value)
                seconds = time.perf_counter() - started
                summary = summarize(hist, seconds, ops - errors, errors)
                summary["not_found"] = missing
                if first_error:
                    summary["first_error"] = first_error
                per[operation] = summary
            out[distribution] = per
        # Read back what the point updates wrote (a sample of the keys).
        rng = random.Random(seed + 99)
        keys = rng.sample(sorted(written), min(SAMPLE_SIZE, len(written)))
        wrong: JsonArray = [k for k in keys if (session.read(k) or {}).get(written[k][0]) != written[k][1]]
        out["verify"] = {
            "keys_updated": len(written),
            "checked": len(keys),
            "wrong": len(wrong),
            "wrong_examples": wrong[:3],
            "verdict": "ok" if not wrong else "wrong",
        }
    finally:
        session.close()
    return out


def run_variant(
    name: str,
    target: UpdatesTarget,
    docs: int,
    seed: int,
    ops: int,
    distributions: list[str],
    lines: list[bytes],
) -> JsonObject:
    variant = target.variant
    rng = random.Random(seed)
    styles: JsonArray = []
    errors: JsonArray = []
    document: JsonObject = {"styles": styles, "errors": errors}
    # the work directory is the caller's to clear (--keep-workdir)
    with runloop.engine_running(target.engine, document, keep_workdir=lambda: True):
        try:
            style_names = target.bulk_update_styles()
            for number, style in enumerate(style_names):
                entry: JsonObject = {"style": style}
                styles.append(entry)
                log.info("%s/%s: load %d documents (style %s)", name, variant.name, docs, style)
                try:
                    _, entry["create_seconds"] = _timed(target.create)
                    _, entry["load_seconds"] = _timed(target.load, lines)
                    _, entry["index_seconds"] = _timed(target.create_key_index)
                    entry["count_before"] = target.count()
                    entry["sizes_before"] = _sizes(target)
                    entry["stats_before"] = _stats(target)
                    rows, entry["update_seconds"] = _timed(
                        target.bulk_add_field, style, ycsb.NEW_FIELD, ycsb.NEW_FIELD_VALUE
                    )
                    entry["rows_changed"] = rows
                    entry["sizes_after"] = _sizes(target)
                    entry["stats_after"] = _stats(target)
                    what, entry["maintain_seconds"] = _timed(target.maintain)
                    entry["maintenance"] = what
                    entry["sizes_maintained"] = _sizes(target)
                    entry["check"] = check = check_bulk(target, docs, seed, rng)
                    log.info(
                        "%s/%s/%s: update %.2f s, check %s",
                        name,
                        variant.name,
                        style,
                        entry["update_seconds"],
                        check["verdict"],
                    )
                except Exception as error:  # noqa: BLE001 - next style
                    entry["error"] = f"{type(error).__name__}: {error}"
                    entry["traceback"] = traceback.format_exc(limit=6)
                    log.error("%s/%s/%s failed: %s", name, variant.name, style, entry["error"])
                    if number == len(style_names) - 1:
                        raise
            stats_before = _stats(target)
            document["point"] = point_operations(target, docs, seed, ops, distributions)
            document["point_stats_before"] = stats_before
            document["point_stats_after"] = _stats(target)
            document["point_sizes_after"] = _sizes(target)
        except Exception as error:  # noqa: BLE001 - recorded (this result's list); the next system runs
            errors.append(
                {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc(limit=8)}
            )
        finally:
            with contextlib.suppress(Exception):
                document["engine"] = target.engine_info()
    document["complete"] = not errors and all("error" not in as_object(s, "a style") for s in styles)
    return document


def _finish(
    document: JsonObject,
    body: JsonObject,
    engine: Any,
    url: str | None,
    path: Path,
    docs: int,
    seed: int,
    ops: int,
    distributions: list[str],
    started: float,
) -> Path | None:
    """The variant's result, written."""
    ending: JsonObject = {
        "dataset": {
            "kind": "ycsb",
            "docs": docs,
            "seed": seed,
            "fields": ycsb.FIELD_COUNT,
            "field_length": ycsb.FIELD_LENGTH,
            "new_field": ycsb.NEW_FIELD,
            "new_field_length": len(ycsb.NEW_FIELD_VALUE),
        },
        "ops": ops,
        "distributions": [*distributions],
        "zipfian": {"theta": ycsb.ZIPFIAN_THETA, "scrambled": True},
        "wall_seconds": time.perf_counter() - started,
        **body,
        "finished_at": results.now_iso(),
    }
    document.update(ending)
    with contextlib.suppress(Exception):
        document["versions"] = engine.versions()
    return runloop.save(path, document, url)


def run_updates(
    system_names: list[str] | None = None,
    docs: int | str = 100_000,
    ops: int = 10_000,
    distributions: list[str] | None = None,
    results_dir: Path | None = None,
    work_dir: Path | None = None,
    seed: int = 1,
    variants: list[str] | None = None,
    urls: dict[str, str] | None = None,
    keep_workdir: bool = False,
    resume: bool = False,
) -> int:
    """Run the workload; returns the exit code (0 = every run complete)."""
    from rich.console import Console

    console = Console(stderr=True)
    docs = parse_count(docs)
    distributions = list(distributions or DISTRIBUTIONS)
    results_dir = results_dir or paths.results_dir()
    results.check_writable(results_dir)
    work_dir = work_dir or paths.work_dir() / WORKLOAD
    urls = urls or {}
    lines: list[bytes] | None = None
    failures = 0
    written: list[Path] = []
    for name in system_names or REGISTERED:
        module = adapter_module(name, WORKLOAD)
        if module is None:
            console.print(f"[yellow]{name}: updates workload not supported yet[/yellow]")
            continue
        url = urls.get(name)
        engine_cls = engine_class(name)
        availability = engine_cls.availability(url)
        if not availability.ok:
            console.print(f"[yellow]{name}: skipped ({availability.reason})[/yellow]")
            failures += 1 if system_names else 0
            continue
        if lines is None:
            started = time.perf_counter()
            lines = ycsb.document_lines(docs, seed)
            console.print(f"generated {docs:,} YCSB documents in {time.perf_counter() - started:.1f} s")
        for variant in module.VARIANTS:
            if variants and variant.name not in variants:
                continue
            label = count_label(docs)
            if resume:
                latest = results.latest_run(results_dir, WORKLOAD, name, variant.name, label)
                if latest and latest[1].get("complete"):
                    console.print(f"[dim]skip {name}/{variant.name}: {latest[0].name} is complete[/dim]")
                    written.append(latest[0])
                    continue
            console.print(
                f"[bold]{name}/{variant.name}[/bold]: {docs:,} documents, {ops:,} ops per distribution"
            )
            started = time.perf_counter()
            workdir = runloop.claim_workdir(work_dir / f"{name}-{variant.name}", fresh=True)
            engine = open_engine(name, workdir, url)
            target = required_adapter_class(name, WORKLOAD)(engine, variant)
            document = results.result_header(WORKLOAD, engine, variant, label, availability.version)
            with runloop.result_slot(results_dir, WORKLOAD, name, variant.name, label) as path:
                body = run_variant(name, target, docs, seed, ops, distributions, lines)
                kept = _finish(document, body, engine, url, path, docs, seed, ops, distributions, started)
            if not keep_workdir:
                clear_work_directory(workdir)
            if kept is None:
                document["complete"] = False
            else:
                written.append(kept)
            # A result kept elsewhere (the results directory failed: said on stderr) is a failure.
            failures += 0 if kept == path or not document["complete"] else 1
            state = "complete" if document["complete"] else "[red]incomplete[/red]"
            console.print(f"  {state}: {kept or 'stderr'} ({document['wall_seconds']:.0f} s)")
            if not document["complete"]:
                failures += 1
                for error in as_array(document["errors"], "errors"):
                    console.print(f"  [red]{as_object(error, 'error')['error']}[/red]")
    if written:
        from docbench.workloads.updates.report import print_updates_report

        print_updates_report(written)
    return 1 if failures else 0
