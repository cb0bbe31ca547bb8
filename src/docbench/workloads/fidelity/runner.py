"""``docbench run fidelity``: the round trip of the fidelity corpus through every system and
representation (the systems' analytics variants).

For each (system, variant):
- each corpus document's own verdict: the document alone in a fresh table (or index,
  collection: whatever makes the engine's per-path state new), the post-load steps, then read
  back through the engine's own API (``read_back``) and classified against what was sent
  (classify.py): identical, same value, changed (how) or refused (the engine's reason);
- then the documents together, as a stream of varied documents arrives: one fresh table, each
  document in a batch of its own, in the corpus's order (for a schema inferred from the data:
  grown one document at a time, then loaded as one file), read back and classified;
- each outcome in the stream that differs from the document's own is an interaction: the
  earlier document after which it differs (a binary search over the stream's prefixes,
  confirmed with that document alone before it) and the paths both hold.
One result file per (system, variant): ``fidelity.<system>.<variant>.corpus.<machine>.<time>.json``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from docbench import results
from docbench.contracts.analytics import AnalyticsAdapter
from docbench.contracts.capabilities import ReadBack, capability
from docbench.contracts.common import BatchRejected, NotSupported, Variant
from docbench.core import paths
from docbench.core.jsontypes import JsonArray, JsonMapping, JsonObject, JsonValue, object_or_empty
from docbench.core.redact import redact_text
from docbench.systems import REGISTERED, adapter_variants, engine_class, open_engine, required_adapter_class
from docbench.workloads import runloop
from docbench.workloads.fidelity.classify import OUTCOMES, Members, Verdict, classify, parse_exact
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
    # Corpus documents by name (None: the whole corpus), in the corpus's order.
    documents: list[str] | None = None

    def corpus(self) -> list[CorpusDocument]:
        every = corpus()
        if self.documents is None:
            return every
        unknown = set(self.documents) - {doc.name for doc in every}
        if unknown:
            raise ValueError(f"no corpus document named {', '.join(sorted(unknown))}")
        return [doc for doc in every if doc.name in self.documents]


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


def run_variant(name: str, variant: Variant, request: FidelityRequest, version: str | None) -> JsonObject:
    url = request.urls.get(name)
    workdir = runloop.claim_workdir(paths.work_dir() / f"fidelity-{name}-{variant.name}", fresh=True)
    system: AnalyticsAdapter = required_adapter_class(name, ADAPTER_MODULE)(
        open_engine(name, workdir, url), variant
    )
    document: JsonObject = {
        **results.result_header(WORKLOAD, system.engine, variant, LABEL, version),
        "representation": system.representation_labels(),
        "documents": [],
    }
    with runloop.result_slot(request.results_dir, WORKLOAD, name, variant.name, LABEL) as path:
        with runloop.engine_running(system.engine, document, release=system.release, record=False):
            with contextlib.suppress(Exception):  # the installed version stands
                document["version"] = system.engine.running_version() or version
            document.update(round_trip(system, request.corpus()))
        document["complete"] = True
        runloop.save(path, document, url)
    _say(request, f"{name}/{variant.name}: {summary_line(document)}")
    return document


def _verdict_record(verdict: Verdict) -> JsonObject:
    """A verdict as a result holds it."""
    notes: JsonArray = list(verdict.notes)
    return {"outcome": verdict.outcome, "notes": notes}


def round_trip(system: AnalyticsAdapter, documents: list[CorpusDocument]) -> JsonObject:
    """Each document's own verdict (alone in a fresh table), then the documents together as a
    stream into one table, and each outcome that differs from the document's own as an
    interaction, with the earlier document that decided it."""
    verdicts: list[Verdict] = []
    readable = True
    for doc in documents:
        verdict, returned = verdict_after(system, [], doc)
        verdicts.append(verdict)
        # a document refused alone leaves nothing to read back: that says nothing of reading
        readable = readable and (returned or verdict.outcome == "refused")
    together, loaded_together = stream(system, documents)
    interactions: JsonArray = []
    for index, (own, row) in enumerate(zip(verdicts, together, strict=True)):
        if row.outcome != own.outcome:
            interactions.append(interaction(system, documents, index, own, row))
    counts: JsonObject = {o: sum(1 for v in verdicts if v.outcome == o) for o in (*OUTCOMES, "unreadable")}
    # Lossless: every document the engine took came back as the same JSON value, alone and
    # together (an inferred schema keeps each document alone and changes it among others).
    taken = [v for v in [*verdicts, *together] if v.outcome not in ("refused", "unreadable")]
    kept_value = all(v.outcome in ("identical", "same_value") for v in taken)
    rows: JsonArray = [
        {"name": doc.name, "stress": doc.stress, **_verdict_record(verdict)}
        for doc, verdict in zip(documents, verdicts, strict=True)
    ]
    together_rows: JsonArray = [
        {"name": doc.name, **_verdict_record(verdict)}
        for doc, verdict in zip(documents, together, strict=True)
    ]
    return {
        "documents": rows,
        "loaded_together": loaded_together,
        "together": together_rows,
        "interactions": interactions,
        "summary": counts,
        # (None: the representation cannot give documents back)
        "lossless": kept_value if readable else None,
    }


def verdict_after(
    system: AnalyticsAdapter, before: list[CorpusDocument], doc: CorpusDocument
) -> tuple[Verdict, bool]:
    """The outcome of ``doc`` loaded into a fresh table after ``before`` (each in a batch of
    its own; for a schema inferred from the data, all in one batch, as one file), and whether
    the representation could give documents back."""
    system.create()
    if system.schema_from_data():
        reason = load_together(system, [*before, doc])
        refused = {doc.name: reason} if reason is not None else {}
    else:
        refused = load_alone(system, [*before, doc])
    system.finish_load()
    returned, unreadable = read_back(system)
    return verdict_row(doc, returned, refused, unreadable), returned is not None


def stream(system: AnalyticsAdapter, documents: list[CorpusDocument]) -> tuple[list[Verdict], bool]:
    """The documents together in one fresh table, as a stream of varied documents arrives:
    each in a batch of its own, in order (for a schema inferred from the data: the documents
    that load together, grown one at a time, then loaded as one file). Each document's
    outcome, and whether every document was taken."""
    refused: dict[str, str] = {}
    if system.schema_from_data():
        accepted = grow_together(system, documents, refused)
        system.create()
        reason = load_together(system, accepted)
        if reason is not None:  # (grown one at a time, they loaded together: kept for the record)
            refused.update({doc.name: reason for doc in accepted})
    else:
        system.create()
        refused = load_alone(system, documents)
    system.finish_load()
    returned, unreadable = read_back(system)
    rows = [verdict_row(doc, returned, refused, unreadable) for doc in documents]
    return rows, not refused


# The documents tried one at a time before another to find the one that changes its outcome.
PAIRWISE_TRIES = 8


def interaction(
    system: AnalyticsAdapter,
    documents: list[CorpusDocument],
    index: int,
    own: Verdict,
    together: Verdict,
) -> JsonObject:
    """Which other document made ``documents[index]`` come out otherwise than alone: first
    the earlier documents that share a path with it, then the others, each alone before it
    (the usual cause: a mapping, a typed path or a column made by the earlier one); else the
    shortest run of the documents before it after which its outcome differs (a binary search
    over the stream's prefixes; ``pairwise`` is then False: it takes more than one)."""
    doc = documents[index]

    def differs(before: list[CorpusDocument]) -> bool:
        return verdict_after(system, before, doc)[0].outcome != own.outcome

    # A schema inferred from the data is inferred from every document of the file: a later
    # one can decide it too.
    pool = [d for d in documents if d is not doc] if system.schema_from_data() else documents[:index]
    sharing = [d for d in pool if shared_paths(d.line, doc.line)]
    others = [d for d in pool if d not in sharing]
    decider = next((d for d in [*sharing, *others][:PAIRWISE_TRIES] if differs([d])), None)
    pairwise = decider is not None
    if decider is None and index and not system.schema_from_data():
        low, high = 0, index  # the outcome is its own after no document, not after all of them
        while high - low > 1:
            middle = (low + high) // 2
            if differs(documents[:middle]):
                high = middle
            else:
                low = middle
        decider = documents[high - 1]
    paths: JsonArray = list(shared_paths(decider.line, doc.line)) if decider else []
    notes: JsonArray = list(together.notes)
    return {
        "document": doc.name,
        "own": own.outcome,
        "together": together.outcome,
        "after": decider.name if decider else None,
        # True: that document alone before it does it; False: only with others before it
        "pairwise": pairwise,
        "paths": paths,
        "notes": notes,
    }


def shared_paths(first: bytes, second: bytes) -> list[str]:
    """The paths both documents hold (the id aside), those whose JSON type differs first:
    where an engine's per-path state (a mapping, a typed path, a column) meets both."""
    types: list[dict[str, str]] = []
    for line in (first, second):
        found: dict[str, str] = {}
        with contextlib.suppress(ValueError):
            _walk(json.loads(line), "$", found)
        types.append(found)
    common = [p for p in types[0] if p in types[1] and p != "$.id" and p != "$"]
    return sorted(common, key=lambda p: (types[0][p] == types[1][p], p))[:5]


def _walk(value: JsonValue, path: str, found: dict[str, str]) -> None:
    kind = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )
    found[path] = kind
    if isinstance(value, dict):
        for key, child in value.items():
            _walk(child, f"{path}.{key}", found)


def read_back(system: AnalyticsAdapter) -> tuple[dict[str, str] | None, str | None]:
    """The stored documents by id, or None with the reason they cannot be read back."""
    try:
        return by_id(capability(system, ReadBack).read_back()), None
    except NotSupported as reason:
        return None, str(reason)
    except Exception as error:  # noqa: BLE001 - recorded: the documents could not be read back
        return None, f"reading back failed: {type(error).__name__}: {error}"[:500]


def verdict_row(
    doc: CorpusDocument, returned: dict[str, str] | None, refused: dict[str, str], unreadable: str | None
) -> Verdict:
    if doc.name not in refused and returned is None:
        return Verdict("unreadable", [unreadable or "cannot be read back"])
    return classify(doc.line, (returned or {}).get(doc.name), refused.get(doc.name))


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
    left out: its document then shows as missing). A text that is not strict JSON only for a
    raw control character in a string (Databend writes U+0000 unescaped) is still found by its
    id: its verdict is then "changed", not JSON, rather than missing."""
    found: dict[str, str] = {}
    for text in texts:
        identifier = _id_of(text)
        if identifier is not None:
            found.setdefault(identifier, text)
    return found


def _id_of(text: str) -> str | None:
    for strict in (True, False):
        with contextlib.suppress(ValueError, ArithmeticError):
            value = parse_exact(text) if strict else json.loads(text, strict=False)
            pairs = (
                value.pairs
                if isinstance(value, Members)
                else list(value.items())
                if isinstance(value, dict)
                else []
            )
            ids = [v for k, v in pairs if k == "id" and isinstance(v, str)]
            return ids[0] if ids else None
    return None


def _optional_bool(value: JsonValue, what: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise TypeError(f"{what}: expected true, false or null, got {type(value).__name__}")


def summary_line(document: JsonMapping) -> str:
    counts = object_or_empty(document.get("summary") or None)
    parts = [f"{counts[o]} {o.replace('_', ' ')}" for o in (*OUTCOMES, "unreadable") if counts.get(o)]
    lossless = {True: "lossless", False: "NOT lossless", None: "not readable"}[
        _optional_bool(document.get("lossless"), "lossless")
    ]
    return f"{', '.join(parts)} ({lossless})"
