"""``docbench run fidelity``: the round trip of the fidelity corpus through every system and
representation (the systems' analytics variants).

For each (system, variant): a fresh table, each corpus document sent alone through the
system's loader (one batch each, so a refusal is that document's, with the engine's reason);
then a fresh table again and the documents it took sent together (one batch: what the
representation decides from all of them, e.g. an inferred schema, is what one file gives),
or one by one again when it refuses them together; the post-load steps; then every stored
document read back through the engine's own API (``read_back``) and classified against what
was sent (classify.py). One result file per
(system, variant): ``fidelity.<system>.<variant>.corpus.<machine>.<time>.json``.
"""

from __future__ import annotations

import contextlib
import logging
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docbench import paths, results
from docbench.contracts.analytics import AnalyticsAdapter
from docbench.contracts.capabilities import ReadBack, capability
from docbench.contracts.common import BatchRejected, NotSupported, Variant
from docbench.core.redact import redact_text
from docbench.systems import REGISTERED, adapter_variants, engine_class, open_engine, required_adapter_class
from docbench.workloads import runloop
from docbench.workloads.fidelity.classify import OUTCOMES, Members, classify, parse_exact
from docbench.workloads.fidelity.corpus import CorpusDocument, corpus

log = logging.getLogger(__name__)

WORKLOAD = "fidelity"
# The systems' representations are their analytics variants.
ADAPTER_MODULE = "analytics"
LABEL = "corpus"


@dataclass
class FidelityRequest:
    system_names: list[str] | None = None
    variants: list[str] | None = None
    results_dir: Path = field(default_factory=paths.results_dir)
    urls: dict[str, str] = field(default_factory=dict)
    quiet: bool = False


def run_fidelity(request: FidelityRequest) -> int:
    """Every chosen system and variant; the exit code is 1 when one could not run at all."""
    results.check_writable(request.results_dir)
    chosen = request.system_names or [n for n in REGISTERED if engine_class(n).runs_by_default]
    failed = False
    for name in chosen:
        availability = engine_class(name).availability(request.urls.get(name))
        if not availability.ok:
            _say(request, f"{name}: cannot run here: {availability.reason}")
            failed = True
            continue
        for variant in adapter_variants(name, ADAPTER_MODULE):
            if request.variants and variant.name not in request.variants:
                continue
            if variant.own_server_only and request.urls.get(name):
                _say(request, f"{name}/{variant.name}: reconfigures its server: not on a server by URL")
                continue
            try:
                run_variant(name, variant, request, availability.version)
            except Exception as error:  # noqa: BLE001 - one system's failure never ends the run
                failed = True
                url = request.urls.get(name)
                _say(request, f"{name}/{variant.name}: FAILED: {redact_text(str(error), url)}")
                log.debug("%s", redact_text(traceback.format_exc(), url))
    return 1 if failed else 0


def _say(request: FidelityRequest, text: str) -> None:
    if not request.quiet:
        print(text, flush=True)


def run_variant(name: str, variant: Variant, request: FidelityRequest, version: str | None) -> dict[str, Any]:
    url = request.urls.get(name)
    workdir = runloop.claim_workdir(paths.work_dir() / f"fidelity-{name}-{variant.name}", fresh=True)
    system: AnalyticsAdapter = required_adapter_class(name, ADAPTER_MODULE)(
        open_engine(name, workdir, url), variant
    )
    document = {
        **results.result_header(WORKLOAD, system.engine, variant, LABEL, version),
        "representation": system.representation_labels(),
        "documents": [],
    }
    with runloop.result_slot(request.results_dir, WORKLOAD, name, variant.name, LABEL) as path:
        with runloop.engine_running(system.engine, document, release=system.release, record=False):
            with contextlib.suppress(Exception):  # the installed version stands
                document["version"] = system.engine.running_version() or version
            document.update(round_trip(system))
        document["complete"] = True
        runloop.save(path, document, url)
    _say(request, f"{name}/{variant.name}: {summary_line(document)}")
    return document


def round_trip(system: AnalyticsAdapter) -> dict[str, Any]:
    """Load the corpus one document at a time, read it back, classify each document."""
    documents = corpus()
    refused: dict[str, str] = {}
    if system.schema_from_data():
        # Each document alone would meet the schema of the first one only: grown together,
        # the schema is inferred from all the documents it takes.
        accepted = grow_together(system, documents, refused)
    else:
        system.create()
        refused = load_alone(system, documents)
        accepted = [doc for doc in documents if doc.name not in refused]
    # Then the documents it took, together in a fresh table: what a representation decides
    # from all of them at once is what a user gets by loading them as one file. Where the
    # engine refuses them together (one document's type against another's), each is taken
    # alone again.
    system.create()
    loaded_together = load_together(system, accepted) is None
    if not loaded_together:
        system.create()
        refused.update(load_alone(system, accepted))
    system.finish_load()
    try:
        returned: dict[str, str] | None = by_id(capability(system, ReadBack).read_back())
        unreadable = None
    except NotSupported as reason:
        returned, unreadable = None, str(reason)
    except Exception as error:  # noqa: BLE001 - recorded: the documents could not be read back
        returned, unreadable = None, f"reading back failed: {type(error).__name__}: {error}"[:500]
    rows = []
    for doc in documents:
        if doc.name not in refused and returned is None:
            row = {"outcome": "unreadable", "notes": [unreadable or "cannot be read back"]}
        else:
            verdict = classify(doc.line, (returned or {}).get(doc.name), refused.get(doc.name))
            row = {"outcome": verdict.outcome, "notes": verdict.notes}
        rows.append({"name": doc.name, "stress": doc.stress, **row})
    counts = {o: sum(1 for r in rows if r["outcome"] == o) for o in (*OUTCOMES, "unreadable")}
    taken = [r for r in rows if r["outcome"] != "refused"]
    kept_value = all(r["outcome"] in ("identical", "same_value") for r in taken)
    return {
        "documents": rows,
        "loaded_together": loaded_together,
        "summary": counts,
        # Every document the engine took came back as the same JSON value (None: the
        # representation cannot give documents back).
        "lossless": None if returned is None else kept_value,
    }


def load_alone(system: AnalyticsAdapter, documents: list[CorpusDocument]) -> dict[str, str]:
    """Each document in a batch of its own: name -> the engine's reason, for those refused."""
    loader = system.loader()
    refused: dict[str, str] = {}
    try:
        for doc in documents:
            loader.begin_file(f"{doc.name}.json")
            try:
                loader.load_batch([doc.line])
            except BatchRejected as error:
                refused[doc.name] = str(error)[:500]
            loader.commit_file()
    finally:
        loader.close()
    return refused


def load_together(system: AnalyticsAdapter, documents: list[CorpusDocument]) -> str | None:
    """All the documents in one batch: None, or the engine's reason when it refuses them
    (nothing kept)."""
    loader = system.loader()
    try:
        loader.begin_file("corpus.json")
        loader.load_batch([doc.line for doc in documents])
        loader.commit_file()
        return None
    except BatchRejected as error:
        return str(error)[:500]
    finally:
        loader.close()


def grow_together(
    system: AnalyticsAdapter, documents: list[CorpusDocument], refused: dict[str, str]
) -> list[CorpusDocument]:
    """For a schema inferred from the data: the documents that load together, each added in
    turn to those before it in a fresh table (one the inference cannot take with the others
    is refused, with the engine's reason)."""
    kept: list[CorpusDocument] = []
    for doc in documents:
        system.create()
        reason = load_together(system, [*kept, doc])
        if reason is None:
            kept.append(doc)
        else:
            refused[doc.name] = reason
    return kept


def by_id(texts: list[str]) -> dict[str, str]:
    """The read-back texts by their document's "id" (a text whose id cannot be found is
    left out: its document then shows as missing)."""
    found: dict[str, str] = {}
    for text in texts:
        with contextlib.suppress(ValueError, ArithmeticError):
            value = parse_exact(text)
            if isinstance(value, Members):
                ids = [v for k, v in value.pairs if k == "id" and isinstance(v, str)]
                if ids:
                    found.setdefault(ids[0], text)
    return found


def summary_line(document: dict[str, Any]) -> str:
    counts = document.get("summary") or {}
    parts = [f"{counts[o]} {o.replace('_', ' ')}" for o in (*OUTCOMES, "unreadable") if counts.get(o)]
    lossless = {True: "lossless", False: "NOT lossless", None: "not readable"}[document.get("lossless")]
    return f"{', '.join(parts)} ({lossless})"
