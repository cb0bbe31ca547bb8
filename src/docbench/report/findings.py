"""What the published results say, as a short list of findings a user would act on.

``findings(results_root)`` reads the result directories under ``results_root`` (docs/results)
and returns one :class:`Finding` per question the files can answer: storage against JSONBench's
published bytes, the spread of hot query times across representations, fidelity, portable
queries, live ingest, and the A/A noise of ``docbench compare``. Every figure is computed from
the files here, through the modules that already summarise them (``report.compare``, the
analytics dashboard's geometric mean, the fidelity and portable records); none is typed. Each
finding names the result files it read and the command that made them, as the directory's
README states it. A finding whose directory is absent (or holds nothing it can use) is left
out, so a results tree of other systems gives the findings it supports.

``scripts/readme-findings.py`` prints them as Markdown; ``docbench site`` gives each its page.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from docbench.core.jsontypes import JsonObject, optional_int
from docbench.results.files import latest_documents, load_results, result_models
from docbench.results.models import AnalyticsResult, FidelityResult, RunHeader
from docbench.results.models.analytics import IngestLevel, Level, QueriesDuring, QueriesIdle
from docbench.results.models.fidelity import Summary
from docbench.systems import REGISTERED, engine_class


@dataclass(frozen=True)
class Finding:
    slug: str
    title: str
    summary: str  # one or two Markdown sentences with the figures
    details: str  # Markdown: a small table
    files: list[str]  # result files read, relative to results_root
    command: list[str]  # the docbench command(s) that made them (the directory's README's words)
    directory: str  # the result directory, relative to results_root


# ----- helpers ----------------------------------------------------------------------------------


def display(system: str) -> str:
    """A system's display name from the registry (the name itself when it is not registered)."""
    return engine_class(system).display_name if system in REGISTERED else system


def run_label(result: RunHeader) -> str:
    return f"{display(result.system)} `{result.variant}`"


def _relative(path: str | Path | None, root: Path) -> str:
    resolved = Path(str(path)).resolve()
    try:
        return resolved.relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(str(path)).as_posix()


def _table(head: list[str], rows: list[list[str]], right: Iterable[int] = ()) -> str:
    aligned = set(right)
    lines = [
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---:" if i in aligned else "---" for i in range(len(head))) + "|",
    ]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _seconds(value: float) -> str:
    return f"{value:.3f} s" if value < 10 else f"{value:,.1f} s"


def _names(labels: list[str]) -> str:
    if len(labels) <= 1:
        return "".join(labels)
    return ", ".join(labels[:-1]) + " and " + labels[-1]


# ----- the commands, as the result directory's README states them -----------------------------

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"`([^`]+)`")


def readme_commands(directory: Path, wanted: Callable[[str], bool]) -> list[str]:
    """The commands in ``directory``'s README.md (inline code or lines of a fenced block, a
    trailing backslash joining lines; three words at least, the last not an option: a command,
    not an option named in the prose) that ``wanted`` accepts, in order, each once."""
    readme = directory / "README.md"
    if not readme.is_file():
        return []
    text = readme.read_text(encoding="utf-8")
    found: list[str] = []
    for block in FENCE.findall(text):
        found += [line for line in block.replace("\\\n", " ").splitlines() if line.strip()]
    found += INLINE.findall(FENCE.sub("", text))
    commands: list[str] = []
    for candidate in found:
        command = " ".join(candidate.split())
        words = command.split()
        if len(words) >= 3 and not words[-1].startswith("-") and wanted(command) and command not in commands:
            commands.append(command)
    return commands


def _starting(*prefixes: str) -> Callable[[str], bool]:
    return lambda command: any(command.startswith(prefix) for prefix in prefixes)


def _option(command: str, name: str) -> list[str] | None:
    """The comma-separated values of ``--name`` in a command; None when absent or a placeholder
    (a single capital letter, as a README's `--systems S`)."""
    words = command.split()
    if f"--{name}" not in words[:-1]:
        return None
    value = words[words.index(f"--{name}") + 1]
    return None if re.fullmatch(r"[A-Z]", value) else value.split(",")


def _names_one_of(command: str, results: list[AnalyticsResult]) -> bool:
    """A README command that names its systems or variants names one of the results' (the
    command of another measurement in the same directory does not)."""
    systems, variants = _option(command, "systems"), _option(command, "variants")
    if systems is not None and not {r.system for r in results} & set(systems):
        return False
    return variants is None or bool({r.variant for r in results} & set(variants))


def _results(directory: Path, latest: bool = True) -> list[RunHeader]:
    """The results under ``directory`` read through their workloads' models (only the latest
    run of each identity when ``latest``), in the order they were read; one that does not read
    is left out of the findings with a note on stderr, never silently."""
    documents = load_results([directory])
    return result_models(latest_documents(documents) if latest else documents)


def _analytics(directory: Path, latest: bool = True) -> list[AnalyticsResult]:
    """The complete analytics results under ``directory`` (the latest of each run identity)."""
    return [r for r in _results(directory, latest) if isinstance(r, AnalyticsResult) and r.complete]


# ----- storage beside JSONBench's published bytes ---------------------------------------------

CLOSE = 0.05  # "within 5%" of the published bytes per document


def jsonbench_storage(root: Path) -> Finding | None:
    from docbench.report.compare import compare, load_set, published_jsonbench
    from docbench.report.compare.sets import NoResults
    from docbench.report.compare.terminal import format_value

    directory = root / "jsonbench"
    if not directory.is_dir():
        return None
    try:
        comparison = compare(published_jsonbench("baseline"), load_set([directory], "contender"), 0.1)
    except NoResults:
        return None
    rows = []
    for pair in comparison.pairs:
        metric = next((m for m in pair.metrics if m.metric == "storage.total_bytes_per_document"), None)
        if metric is None or metric.ratio is None:
            continue
        rows.append((pair, metric, metric.ratio))
    if not rows:
        return None
    published = comparison.baseline.published or {}
    commit = str(published.get("commit"))[:7]
    close = [(p, m) for p, m, ratio in rows if abs(ratio - 1) <= CLOSE]
    far_pair, _, far = max(rows, key=lambda row: abs(row[2] - 1))
    top = max(data_size(p.contender) for p, _, _ in rows)
    largest = [(p, ratio) for p, _, ratio in rows if data_size(p.contender) >= 0.9 * top]
    summary = (
        f"Per document, docbench's generated data takes within {CLOSE * 100:g}% of JSONBench's "
        f"published bytes (its commit {commit}) in {len(close)} of {len(rows)} system/scale pairs; "
        f"at {_names(sorted({p.key[3] for p, _ in largest}))}: "
        + ", ".join(f"{display(p.key[1])} x{ratio:.3f}" for p, ratio in largest)
        + f". The farthest is {display(far_pair.key[1])} at {far_pair.key[3]} (x{far:.3f})"
        + (
            f", where JSONBench's run loaded {data_size(far_pair.baseline):,} documents and "
            f"docbench's {data_size(far_pair.contender):,}."
            if data_size(far_pair.contender) != data_size(far_pair.baseline)
            else "."
        )
    )
    title = (
        f"Storage within {CLOSE * 100:g}% of JSONBench's published bytes in {len(close)} of {len(rows)} pairs"
    )
    details = _table(
        ["JSONBench", "docbench", "scale", "JSONBench per document", "docbench per document", "ratio"],
        [
            [
                f"{p.baseline.get('display_name')} {p.baseline.get('version') or ''}".strip(),
                f"{display(p.key[1])} `{p.key[2]}` {p.contender.get('version') or ''}".strip(),
                p.key[3],
                format_value(m.baseline, m.unit),
                format_value(m.contender, m.unit),
                f"x{ratio:.3f}",
            ]
            for p, m, ratio in rows
        ],
        right=(3, 4, 5),
    )
    files = sorted({_relative(str(p.contender["_path"]), root) for p, _, _ in rows})
    command = readme_commands(directory, _starting("docbench run", "docbench compare --against"))
    return Finding(
        "jsonbench-storage",
        title,
        summary,
        details,
        files,
        command,
        "jsonbench",
    )


def data_size(document: JsonObject) -> int:
    return optional_int(document.get("num_loaded_documents"), "num_loaded_documents") or 0


# ----- hot query times across representations --------------------------------------------------


def hot_spread(root: Path) -> Finding | None:
    from docbench.workloads.analytics.dashboard import scaling_value
    from docbench.workloads.analytics.report import QUERY_COUNT, hot_time

    directory = root / "representations"
    if not directory.is_dir():
        return None
    measured: list[tuple[float, AnalyticsResult]] = []
    left_out: list[AnalyticsResult] = []
    per_query: list[tuple[int, float, AnalyticsResult]] = []  # (query, hot time, run)
    for run in _analytics(directory):
        try:
            value = scaling_value(run, "hot")
        except ValueError:
            value = None
        if value is None:
            left_out.append(run)
            continue
        measured.append((value, run))
        for q in range(QUERY_COUNT):
            time_ = hot_time(run, q)
            if time_ is not None and time_ > 0:
                per_query.append((q, time_, run))
    if len(measured) < 2:
        return None
    measured.sort(key=lambda row: (row[0], run_label(row[1])))
    (fast, fastest), (slow, slowest) = measured[0], measured[-1]
    defaults = [(v, d) for v, d in measured if d.variant_role == "default"]
    sizes = sorted({d.dataset_size or 0 for _, d in measured})
    summary = (
        f"On the same data ({_names([f'{n:,}' for n in sizes])} documents), the geometric mean "
        "of the hot query times runs from "
        f"{_seconds(fast)} ({run_label(fastest)}) to {_seconds(slow)} ({run_label(slowest)}): "
        f"{slow / fast:,.0f}x across {len(measured)} system/representation runs."
    )
    if len(defaults) >= 2:
        (dfast, dfirst), (dslow, dlast) = defaults[0], defaults[-1]
        summary += (
            f" Among the default variants alone it is {dslow / dfast:,.0f}x "
            f"({run_label(dfirst)} {_seconds(dfast)}, {run_label(dlast)} {_seconds(dslow)})."
        )
    best = {q: min(t for p, t, _ in per_query if p == q) for q, _, _ in per_query}
    q, worst, document = max(per_query, key=lambda row: (row[1] / best[row[0]], run_label(row[2])))
    summary += (
        f" One query alone spreads wider: Q{q + 1} takes {run_label(document)} {worst / best[q]:,.0f}x "
        "the fastest's hot time (the per-query ratios are in the directory's Hot runs table)."
    )
    rows = [
        [
            run_label(d),
            d.variant_role,
            _seconds(value),
            f"x{value / fast:,.1f}",
        ]
        for value, d in measured
    ]
    rows += [[run_label(d), d.variant_role, "-", "not every answer trusted"] for d in left_out]
    details = _table(["system and variant", "role", "hot geometric mean", "vs fastest"], rows, right=(2, 3))
    files = sorted(_relative(d.path, root) for _, d in measured) + sorted(
        _relative(d.path, root) for d in left_out
    )
    return Finding(
        "hot-query-spread",
        f"Hot query times differ {slow / fast:,.0f}x across systems and representations",
        summary,
        details,
        files,
        readme_commands(directory, _starting("docbench run analytics")),
        "representations",
    )


# ----- fidelity ----------------------------------------------------------------------------------


def fidelity(root: Path) -> Finding | None:
    directory = root / "fidelity"
    if not directory.is_dir():
        return None
    documents = [r for r in _results(directory) if isinstance(r, FidelityResult) and r.complete]
    if not documents:
        return None
    documents.sort(key=lambda d: (d.system, d.variant))
    corpus = max(len(d.documents) for d in documents)

    def counts(document: FidelityResult) -> tuple[int, int, int, int]:
        summary = document.summary or Summary()
        kept = (summary.identical or 0) + (summary.same_value or 0)
        return (
            kept,
            summary.changed or 0,
            summary.refused or 0,
            len(document.interactions or []),
        )

    defaults = [d for d in documents if d.variant_role == "default"] or documents
    kept = {run_label(d): counts(d) for d in defaults}
    best = max(v[0] for v in kept.values())
    worst = min(v[0] for v in kept.values())
    most_refused = max(v[2] for v in kept.values())
    interacting = [d for d in documents if d.interactions]
    altered = sum(1 for v in kept.values() if v[0] < corpus)
    summary = (
        f"Alone in a fresh table, the default variants return between {worst} "
        f"({_names([k for k, v in kept.items() if v[0] == worst])}) and {best} "
        f"({_names([k for k, v in kept.items() if v[0] == best])}) of the {corpus} corpus documents "
        f"identical or as the same value (the others changed or refused); refusals reach {most_refused} "
        f"({_names([k for k, v in kept.items() if v[2] == most_refused])}). "
        f"{len(interacting)} of {len(documents)} system/variant runs treat a document differently "
        "once others arrived before it (interactions)."
    )
    rows = []
    for document in documents:
        same, changed, refused, interactions = counts(document)
        rows.append(
            [
                run_label(document),
                document.variant_role,
                str(same),
                str(changed),
                str(refused),
                str(interactions),
            ]
        )
    details = _table(
        ["system and variant", "role", "identical or same value", "changed", "refused", "interactions"],
        rows,
        right=(2, 3, 4, 5),
    )
    return Finding(
        "fidelity",
        f"{altered} of {len(defaults)} default variants change or refuse some JSON documents",
        summary,
        details,
        sorted(_relative(d.path, root) for d in documents),
        readme_commands(directory, _starting("docbench run fidelity")),
        "fidelity",
    )


# ----- portable queries --------------------------------------------------------------------------


def portable(root: Path) -> Finding | None:
    directory = root / "portable"
    if not directory.is_dir():
        return None
    runs = [
        r
        for r in _results(directory, latest=False)
        if isinstance(r, AnalyticsResult) and (r.portable or r.error)
    ]
    if not runs:
        return None
    per_run: dict[str, Counter[str]] = {}
    sets: set[str] = set()
    for run in sorted(runs, key=lambda r: str(r.path)):
        counted = per_run.setdefault(run_label(run), Counter())
        record = run.portable
        if not record:
            counted["failed runs"] += 1
            continue
        # the query set's file: a field the model keeps without naming it
        source = Path(str((record.model_extra or {}).get("source") or "")).name
        sets.add(f"{Path(str(run.path)).parent.name}/{record.set} ({source})")
        counted["runs"] += 1
        for query in record.queries:
            counted["queries"] += 1
            counted[query.status.value] += 1
    ordered = sorted(per_run.items())
    wrong = [(k, c) for k, c in ordered if c["wrong"]]
    inexpressible = [(k, c) for k, c in ordered if c["not_expressible"]]
    clean = [k for k, c in ordered if c["queries"] == c["correct"] and not c["failed runs"]]
    failed = [(k, c) for k, c in ordered if c["failed runs"]]
    summary = (
        f"Over {len(sets)} collection/query-set pairs, {len(clean)} of {len(ordered)} systems and "
        "variants answered every query as JSON's semantics say. "
        + (
            "Wrong answers: " + ", ".join(f"{k} ({c['wrong']})" for k, c in wrong) + "; "
            if wrong
            else "No wrong answer; "
        )
        + (
            "not expressible: " + ", ".join(f"{k} ({c['not_expressible']})" for k, c in inexpressible)
            if inexpressible
            else "every query expressible"
        )
        + (
            "; runs that failed: " + ", ".join(f"{k} ({c['failed runs']})" for k, c in failed) + "."
            if failed
            else "."
        )
    )
    rows = [
        [
            label,
            str(c["runs"]),
            f"{c['correct']}/{c['queries']}",
            str(c["wrong"]),
            str(c["not_expressible"]),
            str(c["error"]),
            str(c["failed runs"]),
        ]
        for label, c in ordered
    ]
    details = _table(
        ["system and variant", "runs", "correct", "wrong", "not expressible", "errors", "failed runs"],
        rows,
        right=range(1, 7),
    )
    return Finding(
        "portable-queries",
        "Portable queries: where an engine's answer is not JSON's",
        summary,
        details,
        sorted(_relative(r.path, root) for r in runs),
        readme_commands(directory, _starting("docbench run", "docbench profile", "docbench generate")),
        "portable",
    )


# ----- live ingest -------------------------------------------------------------------------------


def ingest(root: Path) -> Finding | None:
    directory = root / "ingest"
    if not directory.is_dir():
        return None
    unthrottled: list[tuple[float, IngestLevel, AnalyticsResult]] = []
    for run in _analytics(directory):
        for level in (run.ingest.levels if run.ingest else None) or []:
            if level.target_rate is None and level.sustained_rate is not None:
                unthrottled.append((float(level.sustained_rate), level, run))
    if len(unthrottled) < 2:
        return None
    unthrottled.sort(key=lambda row: (-row[0], run_label(row[2])))
    (top, _, first), (low, _, last) = unthrottled[0], unthrottled[-1]
    exact = sum(1 for _, level, _ in unthrottled if level.exact)
    clients = {(d.ingest.clients if d.ingest else None) or 0 for _, _, d in unthrottled}
    summary = (
        f"Sending documents as fast as each system takes them while {_names(sorted(map(str, clients)))} "
        f"query clients run, {run_label(first)} sustains {top:,.0f} documents/s and "
        f"{run_label(last)} {low:,.0f}/s ({top / low:.1f}x); the final count is exact in {exact} of "
        f"{len(unthrottled)} runs."
    )

    def freshness(level: IngestLevel) -> str:
        value = level.freshness_ms.p50 if level.freshness_ms else None
        return "-" if value is None else f"{value:,.1f} ms"

    def queries(figures: QueriesIdle | QueriesDuring | None) -> str:
        value = figures.p50_ms if figures else None
        return "-" if value is None else f"{value:,.1f}"

    rows = [
        [
            run_label(d),
            f"{rate:,.0f}",
            freshness(level),
            f"{queries(level.queries_idle)} -> {queries(level.queries_during)}",
            "yes" if level.exact else "no",
        ]
        for rate, level, d in unthrottled
    ]
    details = _table(
        [
            "system and variant",
            "sustained documents/s",
            "freshness p50",
            "query p50 ms idle -> during",
            "exact",
        ],
        rows,
        right=(1, 2, 3),
    )
    return Finding(
        "live-ingest",
        "Live ingest: the unthrottled rate each system sustains",
        summary,
        details,
        sorted({_relative(d.path, root) for _, _, d in unthrottled}),
        readme_commands(directory, _starting("docbench run analytics")),
        "ingest",
    )


# ----- concurrent clients -----------------------------------------------------------------------


def concurrency(root: Path) -> Finding | None:
    """QPS against the number of closed-loop clients: each level of each system/variant from
    its latest complete run that measured it (a level measured again with a longer window
    replaces the earlier one, as the directory's README does)."""
    directory = root / "concurrency"
    if not directory.is_dir():
        return None
    documents = [r for r in _analytics(directory, latest=False) if r.concurrency]
    documents.sort(key=lambda d: (d.started_at, str(d.path)))
    # A system/variant's levels come from its latest run's machine and data only.
    latest = {run_label(d): (d.machine, d.dataset_label) for d in documents}
    scales = {scale for _, scale in latest.values()}
    # label -> clients -> (QPS, the level, its run)
    levels: dict[str, dict[int, tuple[float, Level, AnalyticsResult]]] = {}
    for document in documents:
        label = run_label(document)
        if (document.machine, document.dataset_label) != latest[label]:
            continue
        label += f" at {document.dataset_label}" if len(scales) > 1 else ""
        for level in document.concurrency.levels if document.concurrency else []:
            if level.error or level.qps is None or not level.clients:
                continue
            levels.setdefault(label, {})[level.clients] = (level.qps, level, document)
    measured = {k: v for k, v in levels.items() if 1 in v and len(v) >= 3}
    if len(measured) < 2:
        return None
    common = set.intersection(*(set(v) for v in measured.values()))
    reference = min((c for c in common if c > 1), default=None)
    if reference is None:
        return None
    gains = {k: max(qps for qps, _, _ in v.values()) / v[1][0] for k, v in measured.items()}
    past = {
        k: max(qps for c, (qps, _, _) in v.items() if c > reference) / v[reference][0] - 1
        for k, v in measured.items()
        if any(c > reference for c in v)
    }
    top = max(gains, key=lambda k: (gains[k], k))
    top_levels = measured[top]
    best_top = max(qps for qps, _, _ in top_levels.values())
    cores = [
        lv.engine.cores if lv.engine else None
        for v in measured.values()
        for c, (_, lv, _) in v.items()
        if c >= reference
    ]
    known = [c for c in cores if c is not None]
    machines = sorted({d.machine for v in measured.values() for _, _, d in v.values()})
    most = max(c for v in measured.values() for c in v)
    summary = (
        f"With 1 to {most} closed-loop clients ({'machines' if len(machines) > 1 else 'machine'}: "
        f"{'; '.join(machines)}), the best QPS of a system is at most "
        f"{gains[top]:.1f}x its QPS with one client ({top}: {top_levels[1][0]:,.2f} -> "
        f"{best_top:,.2f})"
        + (
            f"; past {reference} clients the best QPS changes by {min(past.values()):+.0%} to "
            f"{max(past.values()):+.0%} against {reference} clients"
            if past
            else ""
        )
        + (
            f", the engines using {min(known):.2f}-{max(known):.2f} cores from {reference} clients on."
            if known
            else "."
        )
    )
    counts = sorted({c for v in measured.values() for c in v})
    rows = []
    for label, by_clients in sorted(measured.items()):
        rows.append(
            [label]
            + [f"{by_clients[c][0]:,.2f}" if c in by_clients else "-" for c in counts]
            + [f"x{gains[label]:.1f}"]
        )
    details = _table(
        [
            "system and variant",
            *(f"QPS, {c} client{'s' if c > 1 else ''}" for c in counts),
            "best / 1 client",
        ],
        rows,
        right=range(1, len(counts) + 2),
    )
    files = sorted({_relative(d.path, root) for v in measured.values() for _, _, d in v.values()})
    used = [d for v in measured.values() for _, _, d in v.values()]
    return Finding(
        "concurrent-clients",
        f"Concurrent clients: at most {gains[top]:.1f}x one client's QPS",
        summary,
        details,
        files,
        readme_commands(
            directory,
            lambda c: c.startswith("docbench run analytics") and "--clients" in c and _names_one_of(c, used),
        ),
        "concurrency",
    )


# ----- compare's A/A noise -----------------------------------------------------------------------


@dataclass(frozen=True)
class _AaRow:
    """A row of scripts/aa-noise.py's output: a system/variant at a scale."""

    name: str
    scale: str | None
    pairs: int
    figures: int
    flagged: int
    range_rule: int  # what the rule before the noise test flagged


AA_ROW = re.compile(
    r"^(?P<name>\S+)(?:\s+(?P<scale>\S+))?\s+(?P<pairs>\d+)\s+(?P<figures>\d+)\s+(?P<flagged>\d+)\s+"
    r"[\d.]+%\s+\d+\s+(?P<range>\d+)\s+[\d.]+%"
)


def aa_noise(root: Path) -> Finding | None:
    """The A/A false-positive rate, from scripts/aa-noise.py's output kept in the directory
    (the runs themselves are not published): the rows are recounted here."""
    directory = root / "compare"
    outputs = sorted(directory.glob("aa-noise-*.txt")) if directory.is_dir() else []
    if not outputs:
        return None
    source = outputs[-1]
    rows: list[_AaRow] = []
    for line in source.read_text(encoding="utf-8").splitlines():
        match = AA_ROW.match(line)
        if match and match["name"] != "all":
            rows.append(
                _AaRow(
                    match["name"],
                    match["scale"],
                    int(match["pairs"]),
                    int(match["figures"]),
                    int(match["flagged"]),
                    int(match["range"]),
                )
            )
    if not rows:
        return None
    figures = sum(r.figures for r in rows)
    flagged = sum(r.flagged for r in rows)
    ranged = sum(r.range_rule for r in rows)
    pairs = sum(r.pairs for r in rows)
    worst = max(rows, key=lambda r: (r.flagged / r.figures, r.name))

    def label(name: str) -> str:
        system, _, variant = name.partition("/")
        return f"{display(system)} `{variant}`" if variant else display(system)

    summary = (
        f"Comparing runs of the same code on the same data ({pairs} A/A pairs, {figures:,} figures), "
        f"`docbench compare` flags {flagged} ({flagged / figures:.1%}): its false-positive rate; "
        f"the highest of a variant is {worst.flagged / worst.figures:.1%} ({label(worst.name)}). "
        f"The rule before the noise test flagged {ranged} ({ranged / figures:.1%})."
    )
    details = _table(
        ["system and variant", "scale", "pairs", "figures", "flagged", "rate", "range rule"],
        [
            [
                label(r.name),
                r.scale or "",
                str(r.pairs),
                str(r.figures),
                str(r.flagged),
                f"{r.flagged / r.figures:.1%}",
                str(r.range_rule),
            ]
            for r in rows
        ],
        right=range(2, 7),
    )
    return Finding(
        "compare-noise",
        f"docbench compare's A/A false-positive rate is {flagged / figures:.1%}",
        summary,
        details,
        [_relative(source, root)],
        readme_commands(directory, lambda c: "scripts/aa-noise.py" in c or c.startswith("docbench run")),
        "compare",
    )


FINDINGS: list[Callable[[Path], Finding | None]] = [
    jsonbench_storage,
    hot_spread,
    fidelity,
    portable,
    ingest,
    concurrency,
    aa_noise,
]


def findings(results_root: Path) -> list[Finding]:
    """The findings the result files under ``results_root`` support, in a fixed order."""
    found = [make(results_root) for make in FINDINGS]
    return [f for f in found if f is not None]


def markdown_list(found: list[Finding], link_root: str) -> str:
    """The findings as a Markdown list: bold title, summary, a link to the result directory
    (``link_root`` + its name, as a reader of the repository's root follows it)."""
    lines = []
    for finding in found:
        where = f"{link_root.rstrip('/')}/{finding.directory}"
        lines.append(f"- **{finding.title}.** {finding.summary} [{where}]({where})")
    return "\n".join(lines) + "\n"
