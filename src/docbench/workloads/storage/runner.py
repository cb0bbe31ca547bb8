"""``docbench run storage``: the TOAST experiment on every system that has a
``storage`` module (its adapter on the storage contract).

A *cell* is (system, variant, field size, entropy): create the empty table, insert ``rows``
documents in batches (only the insert calls are timed; the documents are generated before
each batch), ``finish()`` (VACUUM / merge / checkpoint, timed separately), measure the sizes.
A refused batch ends the cell: its failure and the system's message are recorded with the
number of rows that went in, and the run goes on with the next cell. Any other error of the
system is recorded the same way (kind "error") and the target is restarted.

One result file per (system, variant): ``storage.<system>.<variant>.r<rows>.json``, rewritten
after every cell (``complete`` false until the last one), so ``--resume`` skips complete files
and the cells already measured in an interrupted one.
"""

from __future__ import annotations

import contextlib
import logging
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from docbench import results
from docbench.contracts import storage_documents as documents
from docbench.contracts.common import BatchRejected, Variant
from docbench.contracts.storage import StorageMatrixTarget
from docbench.core import paths
from docbench.core.jsontypes import JsonMapping, JsonObject, as_array, as_int, as_object, as_str, is_object
from docbench.core.ownership import remove_owned_tree
from docbench.core.redact import redact_text
from docbench.systems import REGISTERED, adapter_module, engine_class, open_engine, required_adapter_class
from docbench.workloads import runloop

log = logging.getLogger(__name__)

WORKLOAD = "storage"
# A batch holds at most this many bytes of documents (and at most MAX_BATCH_ROWS rows).
BATCH_BYTES = 16 << 20
MAX_BATCH_ROWS = 5_000


@dataclass
class StorageRequest:
    system_names: list[str] | None = None
    results_dir: Path = field(default_factory=paths.results_dir)
    rows: int = 50_000
    sizes: list[int] = field(default_factory=lambda: list(documents.DEFAULT_SIZES))
    entropies: list[str] = field(default_factory=lambda: list(documents.ENTROPIES))
    variants: list[str] | None = None
    resume: bool = False
    seed: int = documents.DEFAULT_SEED
    work_dir: Path | None = None
    keep_workdir: bool = False
    # --<system>-url: the user's server (the target then touches only its own table/index).
    urls: dict[str, str] = field(default_factory=dict)


def supported_systems() -> dict[str, ModuleType | None]:
    return {name: adapter_module(name, WORKLOAD) for name in REGISTERED}


def batch_rows(size: int) -> int:
    return max(1, min(MAX_BATCH_ROWS, BATCH_BYTES // max(1, size + 40)))


def _say(text: str) -> None:
    print(text, flush=True)


def run_storage(request: StorageRequest) -> int:
    """Run the matrix; returns the exit code (1 when a system could not run at all)."""
    for entropy in request.entropies:
        if entropy not in documents.ENTROPIES:
            raise ValueError(f"unknown entropy {entropy!r} (known: {', '.join(documents.ENTROPIES)})")
    modules = supported_systems()
    results.check_writable(request.results_dir)
    if request.system_names:
        chosen = list(request.system_names)
    else:
        chosen = [n for n in REGISTERED if modules[n] is not None and engine_class(n).runs_by_default]
    failed = False
    for name in chosen:
        module = modules[name]
        if module is None:
            _say(f"{name}: not supported by the storage workload yet")
            continue
        availability = engine_class(name).availability(request.urls.get(name))
        if not availability.ok:
            _say(
                f"{name}: cannot run here: {availability.reason}"
                + (f" (install: {availability.install_hint})" if availability.install_hint else "")
            )
            failed = True
            continue
        variants: list[Variant] = list(module.VARIANTS)
        if request.variants:
            variants = [v for v in variants if v.name in request.variants]
        for variant in variants:
            try:
                document = run_variant(name, variant, request, availability.version)
                failed = failed or not document.get("complete")
            except Exception as error:  # noqa: BLE001 - one system's failure never ends the run
                failed = True
                url = request.urls.get(name)
                _say(f"{name}/{variant.name}: FAILED: {redact_text(str(error), url)}")
                log.debug("%s", redact_text(traceback.format_exc(), url))
    _remove_documents(request)
    return 1 if failed else 0


def _header(target: StorageMatrixTarget, request: StorageRequest, version: str | None) -> JsonObject:
    return {
        **results.result_header(WORKLOAD, target.engine, target.variant, f"r{request.rows}", version),
        "tags": ["storage"],
        "rows": request.rows,
        "seed": request.seed,
        "sizes": list(request.sizes),
        "entropies": list(request.entropies),
        "cells": [],
    }


def run_variant(name: str, variant: Variant, request: StorageRequest, version: str | None) -> JsonObject:
    """One variant's matrix; with --resume the latest incomplete run of it is continued (its
    finished cells kept), the latest complete one skipped."""
    label = f"r{request.rows}"
    latest = (
        results.latest_run(request.results_dir, WORKLOAD, name, variant.name, label)
        if request.resume
        else None
    )
    if latest and latest[1].get("complete"):
        _say(f"{name}/{variant.name}: complete result exists, skipped ({latest[0].name})")
        return latest[1]
    done: dict[tuple[int, str], JsonObject] = {}
    if latest:
        for found in as_array(latest[1].get("cells", []), "cells"):
            cell = as_object(found, "cell")
            done[(as_int(cell["size"], "cell size"), as_str(cell["entropy"], "cell entropy"))] = cell
    workdir = runloop.claim_workdir(
        (request.work_dir or paths.work_dir()) / f"storage-{name}-{variant.name}", fresh=True
    )
    target: StorageMatrixTarget = required_adapter_class(name, WORKLOAD)(
        open_engine(name, workdir, request.urls.get(name)), variant
    )
    document = _header(target, request, version)
    _say(f"{name}/{variant.name}: {variant.description}")
    resumed = latest[0] if latest else None
    with runloop.result_slot(request.results_dir, WORKLOAD, name, variant.name, label, resumed) as path:
        return _measure_variant(target, request, version, document, done, path)


def _measure_variant(
    target: StorageMatrixTarget,
    request: StorageRequest,
    version: str | None,
    document: JsonObject,
    done: dict[tuple[int, str], JsonObject],
    path: Path,
) -> JsonObject:
    with runloop.engine_running(
        target.engine,
        document,
        start=target.start,
        release=target.stop,
        keep_workdir=lambda: request.keep_workdir,
        record=False,
    ):
        with contextlib.suppress(Exception):  # the installed version stands
            document["version"] = target.version() or version
        cells = as_array(document["cells"], "cells")
        for size in request.sizes:
            for entropy in request.entropies:
                if (size, entropy) in done:
                    cells.append(done[(size, entropy)])
                    continue
                cell = as_object(results.scrub(run_cell(target, size, entropy, request), target.engine.url))
                cells.append(cell)
                _say("  " + describe_cell(cell))
                path = runloop.save(path, document, target.engine.url) or path
                failure = cell.get("failure")
                if is_object(failure) and failure.get("kind") == "error":
                    _restart(target)
    document["complete"] = True
    saved = runloop.save(path, document, target.engine.url)
    # A result kept elsewhere (the results directory failed: said on stderr) is a failure.
    document["complete"] = saved is not None and saved.parent == request.results_dir
    return document


def _restart(target: StorageMatrixTarget) -> None:
    with contextlib.suppress(Exception):
        target.stop()
    target.start()


def run_cell(target: StorageMatrixTarget, size: int, entropy: str, request: StorageRequest) -> JsonObject:
    cell: JsonObject = {
        "size": size,
        "entropy": entropy,
        "rows": request.rows,
        "rows_loaded": 0,
        "insert_seconds": None,
        "finish_seconds": None,
        "total_size": None,
        "on_disk": None,
        "data_size": None,
        "index_size": None,
        "detail": {},
        "input_bytes": None,
        "payload_bytes": None,
        "bytes_per_input_byte": None,
        "failure": None,
    }
    inserted_seconds = 0.0
    offered = 0
    try:
        target.create()
        for batch in _batches(entropy, size, request):
            started = time.perf_counter()
            try:
                target.insert(batch)
            except BatchRejected as refusal:
                inserted_seconds += time.perf_counter() - started
                cell["failure"] = {
                    "kind": "refused",
                    "message": _short(str(refusal)),
                    "batch_first_row": offered,
                }
                break
            inserted_seconds += time.perf_counter() - started
            offered += len(batch)
        cell["insert_seconds"] = round(inserted_seconds, 4)
        started = time.perf_counter()
        target.finish()
        cell["finish_seconds"] = round(time.perf_counter() - started, 4)
        loaded = int(target.count())
        cell["rows_loaded"] = loaded
        storage = target.sizes()
        cell.update(
            {
                "total_size": storage.total,
                "data_size": storage.data,
                "index_size": storage.index,
                "on_disk": storage.on_disk,
                "detail": storage.detail,
            }
        )
    except Exception as error:  # noqa: BLE001 - recorded, the run goes on
        cell["failure"] = {"kind": "error", "message": _short(f"{type(error).__name__}: {error}")}
        cell["insert_seconds"] = cell["insert_seconds"] or round(inserted_seconds, 4)
        with contextlib.suppress(Exception):
            cell["rows_loaded"] = int(target.count())
    loaded = as_int(cell["rows_loaded"] or 0, "rows_loaded")
    if loaded:
        key = documents.key_of(0)
        input_bytes = loaded * documents.document_bytes(key, "x" * size)
        cell["input_bytes"] = input_bytes
        cell["payload_bytes"] = loaded * size
        total_size = cell["total_size"]
        if total_size:
            cell["bytes_per_input_byte"] = round(_number(total_size, "total_size") / input_bytes, 4)
    return cell


def documents_dir(request: StorageRequest) -> Path:
    return (request.work_dir or paths.work_dir()) / "storage-documents"


def _remove_documents(request: StorageRequest) -> None:
    """The payload files of the run are removed when it is done -- if docbench made their
    directory (its mark) and it holds neither data nor results."""
    refusal = remove_owned_tree(documents_dir(request))
    if refusal:
        _say(f"docbench left {documents_dir(request)} as it is: {refusal}")


def _payload_file(entropy: str, size: int, request: StorageRequest) -> Path:
    """The payloads of a cell, generated once per run and shared by every (system, variant):
    every payload is exactly ``size`` ASCII bytes, so the file is rows x size bytes."""
    path = documents_dir(request) / f"{request.seed}-{entropy}-{size}-{request.rows}.bin"
    if path.exists() and path.stat().st_size == request.rows * size:
        return path
    runloop.claim_workdir(path.parent)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as handle:
        for _key, payload in documents.rows(entropy, size, request.rows, request.seed):
            handle.write(payload.encode("ascii"))
    tmp.replace(path)
    return path


def _batches(entropy: str, size: int, request: StorageRequest):
    step = batch_rows(size)
    with open(_payload_file(entropy, size, request), "rb") as handle:
        for start in range(0, request.rows, step):
            count = min(step, request.rows - start)
            data = handle.read(count * size).decode("ascii")
            yield [(documents.key_of(start + i), data[i * size : (i + 1) * size]) for i in range(count)]


def _short(text: str, limit: int = 600) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _number(value: object, what: str) -> int | float:
    """A JSON number as it is (an integer stays one), or a TypeError naming ``what``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    raise TypeError(f"{what}: expected a number, got {type(value).__name__}")


def describe_cell(cell: JsonMapping) -> str:
    head = f"{cell['size']:>6} B {cell['entropy']:<10}"
    failure = cell.get("failure")
    if failure and not cell.get("total_size"):
        failed = as_object(failure, "failure")
        return f"{head} FAILED ({failed['kind']}): {as_str(failed['message'], 'failure message')[:160]}"
    total_size = cell["total_size"]
    size = _number(total_size, "total_size") / 2**20 if total_size else 0.0
    ratio = cell.get("bytes_per_input_byte")
    text = (
        f"{head} {cell['rows_loaded']:>7} rows  insert {cell['insert_seconds']:8.2f} s  "
        f"size {size:9.1f} MiB  {ratio if ratio is not None else '-'} B/B"
    )
    if failure:
        failed = as_object(failure, "failure")
        message = as_str(failed["message"], "failure message")
        text += f"  [{failed['kind']} after {cell['rows_loaded']} rows: {message[:120]}]"
    return text
