"""The terminal comparison of analytics results, in the spirit of JSONBench's dashboard.

One table per metric (storage, data quality, load, cold, hot, memory), each cell with its
ratio to the best in its column ("x1.0", "x12.3"), and the answer status on every timing cell
so a wrong answer can never pass for a fast one (it is also excluded from "best"). Then a
hyperfine-style summary: who is fastest, and how many times slower each other system is.

Every table reads results through their model (:class:`AnalyticsResult`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from docbench.core.console import report_console
from docbench.results import load_typed, run_name
from docbench.results.files import non_default_notes
from docbench.results.models import AnalyticsResult, FidelityResult, RunHeader
from docbench.results.models.analytics import (
    Concurrency,
    FreshnessMs,
    IngestLevel,
    Level,
    Method,
    Portable,
    PortableQuery,
    PortableStatus,
    QueriesDuring,
    QueriesIdle,
)
from docbench.workloads.analytics.concurrency import short_window

STATUS_MARK = {
    "ok": "[green]✓[/green]",
    "precision": "[green]≈[/green]",
    "approximate": "[yellow]~[/yellow]",
    "wrong": "[red]✗ wrong[/red]",
    "error": "[red]error[/red]",
}
TRUSTED = {"ok", "precision", "approximate"}
# JSONBench's constant: ratios of (0.01 + t) so sub-10-ms differences don't dominate.
SHIFT = 0.01
QUERY_COUNT = 5
# A figure of one query of a run (seconds or bytes; None: none).
Pick = Callable[[AnalyticsResult, int], float | None]


def load_analytics(results_dirs: list[Path]) -> list[AnalyticsResult]:
    """The analytics results under the directories, read through their model."""
    return analytics_only(load_typed(results_dirs, "analytics"))


def analytics_only(results: Sequence[RunHeader]) -> list[AnalyticsResult]:
    return [r for r in results if isinstance(r, AnalyticsResult)]


def print_analytics_report(
    results_dirs: list[Path], only: list[Path] | None = None, console: Console | None = None
) -> None:
    """The analytics tables of what the directories hold (``only``: just these result files)."""
    runs = load_analytics(results_dirs)
    if only is not None:
        wanted = {str(p) for p in only}
        runs = [r for r in runs if r.path in wanted]
    print_report(runs, console or report_console(), [])


def print_report(runs: Sequence[AnalyticsResult], console: Console, all_results: Sequence[RunHeader]) -> None:
    if not runs:
        console.print("No analytics results.")
        return
    for label in sorted({_dataset(r) for r in runs}):
        group = sorted((r for r in runs if _dataset(r) == label), key=_name)
        console.rule(f"Analytics on {label} ({group[0].dataset_size or '?'} documents)")
        print_dataset_report(group, console, lossless_by_variant(all_results))


def lossless_by_variant(results: Sequence[RunHeader]) -> dict[tuple[str, str], bool | None]:
    """(system, variant) -> whether the fidelity corpus came back as the same values, from the
    latest fidelity result of each (the label `lossless`)."""
    found: dict[tuple[str, str], tuple[str, bool | None]] = {}
    for result in results:
        if isinstance(result, FidelityResult) and result.complete:
            key = (result.system, result.variant)
            if key not in found or result.started_at > found[key][0]:
                found[key] = (result.started_at, result.lossless)
    return {key: lossless for key, (_, lossless) in found.items()}


def print_dataset_report(
    runs: Sequence[AnalyticsResult],
    console: Console,
    lossless: dict[tuple[str, str], bool | None] | None = None,
) -> None:
    console.print(storage_table(runs))
    for note in non_default_notes(runs):
        console.print(f"[yellow]{escape(note)}[/yellow]")
    labels = representation_table(runs, lossless or {})
    if labels is not None:
        console.print(labels)
    console.print(quality_table(runs))
    bluesky = [r for r in runs if r.portable is None or r.answers]  # jsonbench: both
    if bluesky:
        for kind in ("cold", "hot"):
            console.print(timing_table(bluesky, kind))
        console.print(memory_table(bluesky))
    for table in portable_tables(runs):
        console.print(table)
    concurrent = concurrency_table(runs)
    if concurrent is not None:
        console.print(concurrent)
        for line in window_warnings(runs):
            console.print(line)
    ingest = ingest_table(runs)
    if ingest is not None:
        console.print(ingest)
    for line in verdicts(runs):
        console.print(line)


# ----- tables -----------------------------------------------------------------------------


def window_warnings(runs: Sequence[AnalyticsResult]) -> list[str]:
    """A line per concurrency level whose window was too short for its figures."""
    lines = []
    for run in runs:
        record = run.concurrency
        if record is None:
            continue
        for level in record.levels:
            warning = window_warning(record, level)
            if warning:
                lines.append(f"[yellow]warning[/yellow] {_name(run)} at {level.clients} clients: {warning}")
    return lines


def window_warning(record: Concurrency, level: Level) -> str | None:
    """The level's short-window warning, or, for a result written before levels carried
    one, the same judgement from its figures."""
    if level.qps is None or level.error:
        return None  # the level did not run: its error says so
    if "warning" in level.model_fields_set:
        return level.warning
    mean = level.latency_ms.avg_ms
    return short_window(level.queries or 0, level.clients, mean, float(record.duration_s or 0))


def concurrency_table(runs: Sequence[AnalyticsResult]) -> Table | None:
    """Q1-Q5 from many clients at once (`--clients`): per level, the engine's QPS and
    latency beside the driver's own ceiling at the same number of clients."""
    measured = [(r, r.concurrency) for r in runs if r.concurrency is not None]
    if not measured:
        return None
    table = Table(title="Concurrent clients (the run's queries in seeded random order; correct answers only)")
    for column in (
        "system",
        "clients",
        "QPS",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "not ok",
        "engine cores",
        "engine peak memory (PSS)",
        "driver ceiling QPS",
    ):
        table.add_column(column, justify="left" if column == "system" else "right")
    for run, record in measured:
        for level in record.levels:
            table.add_row(_name(run), *_level_cells(record, level))
    return table


def _level_cells(record: Concurrency, level: Level) -> list[str]:
    """A concurrency level's cells after the system's name."""
    latency, engine = level.latency_ms, level.engine
    ceiling = next((c for c in reversed(record.ceiling) if c.clients == level.clients), None)
    qps = (
        f"{level.qps:.2f}" + (" [yellow](window too short)[/yellow]" if window_warning(record, level) else "")
        if level.qps is not None
        else f"[red]{level.error or 'nothing ran'}[/red]"
    )
    return [
        str(level.clients),
        qps,
        *(_ms(v) for v in (latency.p50_ms, latency.p95_ms, latency.p99_ms, latency.max_ms)),
        _not_ok(level),
        f"{engine.cores:.2f}" if engine and engine.cores is not None else "-",
        _size(engine.peak_pss_bytes if engine else None),
        f"{ceiling.qps:,.0f}" if ceiling and ceiling.qps is not None else "-",
    ]


def ingest_table(runs: Sequence[AnalyticsResult]) -> Table | None:
    """Live ingest (`--ingest-rates`): per level, the rate sustained against the target, the
    freshness of what was acknowledged, query latency idle and during, the exact count."""
    measured = [(r, r.ingest) for r in runs if r.ingest is not None]
    if not measured:
        return None
    table = Table(
        title="Live ingest (documents arriving while query clients run; answers not checked meanwhile)"
    )
    for column in (
        "system",
        "target /s",
        "sustained /s",
        "max lag s",
        "refused",
        "freshness by",
        "freshness p50 ms",
        "p99 ms",
        "queries p50 ms idle -> during",
        "p99 ms idle -> during",
        "query errors",
        "count",
    ):
        table.add_column(column, justify="left" if column == "system" else "right")
    for run, record in measured:
        if record.not_supported:
            table.add_row(_name(run), f"[yellow]{record.not_supported[:100]}[/yellow]", *[""] * 10)
            continue
        for level in record.levels or []:
            table.add_row(_name(run), *_ingest_cells(level))
    return table


def _ingest_cells(level: IngestLevel) -> list[str]:
    """An ingest level's cells after the system's name."""
    fresh = level.freshness_ms
    idle = level.queries_idle or QueriesIdle()
    during = level.queries_during or QueriesDuring()
    count = (
        f"exact ({level.final_count:,})"
        if level.exact
        else f"[red]{level.final_count if level.final_count is not None else 'unknown'} of "
        f"{level.expected_count:,}[/red]"
    )
    return [
        f"{level.target_rate:,.0f}" if level.target_rate else "max",
        f"{level.sustained_rate:,.0f}" if level.sustained_rate else "-",
        str(level.lag_s.max if level.lag_s else None),
        f"{level.refused:,}",
        _freshness_method(fresh),
        _ms(fresh.p50 if fresh else None),
        _ms(fresh.p99 if fresh else None),
        f"{_ms(idle.p50_ms)} -> {_ms(during.p50_ms)}",
        f"{_ms(idle.p99_ms)} -> {_ms(during.p99_ms)}",
        f"{idle.errors or 0} / {during.errors or 0}",
        count + (f" [red]{level.error[:80]}[/red]" if level.error else ""),
    ]


def _freshness_method(fresh: FreshnessMs | None) -> str:
    """How freshness was measured: markers (seen of made), or the visible count."""
    if fresh is None or fresh.method is not Method.markers:
        return "count"
    text = f"markers {fresh.seen or 0}/{fresh.markers or 0}"
    return text if fresh.seen == fresh.markers else f"[red]{text}[/red]"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _not_ok(level: Level) -> str:
    sent = level.queries or 0
    bad = sent - level.outcomes.ok
    if not sent:
        return "-"
    text = f"{bad} ({100 * bad / sent:.1f}%)"
    return f"[red]{text}[/red]" if bad else text


def storage_table(runs: Sequence[AnalyticsResult]) -> Table:
    table = Table(title="Storage (bytes on disk; ratio to the smallest)")
    for column in ("system", "role", "total", "data", "index", "on disk", "vs raw ndjson"):
        table.add_column(column, justify="left" if column in ("system", "role") else "right")
    totals = [r.total_size for r in runs if _loaded(r)]
    best = min((t for t in totals if t), default=None)
    baselines = runs[0].dataset.baselines.sizes()
    raw = baselines.get("raw")
    for run in runs:
        total = run.total_size
        table.add_row(
            _name(run),
            run.variant_role,
            _size(total, best),
            _size(run.data_size),
            _size(run.index_size),
            _size(run.storage.on_disk if run.storage else None),
            f"{total / raw:.2f}" if total and raw else "-",
        )
    for name, size in baselines.items():
        table.add_row(
            f"[dim]file: ndjson {name}[/dim]",
            "baseline",
            _size(size, best),
            "",
            "",
            "",
            f"{size / raw:.2f}" if size is not None and raw else "-",
        )
    return table


def representation_table(
    runs: Sequence[AnalyticsResult], lossless: dict[tuple[str, str], bool | None] | None = None
) -> Table | None:
    """How each run held the documents (its labels), when the results say it; "lossless"
    from the fidelity workload's result of the same system and variant, when there is one."""
    labelled = [(r, r.representation) for r in runs if r.representation is not None]
    if not labelled:
        return None
    table = Table(title="Representations (how the documents were held)")
    columns = (
        "system",
        "representation",
        "structure kept",
        "schema by hand",
        "lossless",
        "settings beyond defaults",
    )
    for column in columns:
        table.add_column(column)
    for run, labels in labelled:
        beyond = labels.settings_beyond_defaults or {}
        table.add_row(
            _name(run),
            labels.name,
            "yes" if labels.retains_structure else "no",
            "yes" if labels.schema_by_hand else "no",
            _lossless(lossless or {}, (run.system, run.variant)),
            ", ".join(f"{k}={v}" for k, v in beyond.items()) or "-",
        )
    return table


def _lossless(lossless: dict[tuple[str, str], bool | None], key: tuple[str, str]) -> str:
    if key not in lossless:
        return "- (run fidelity)"
    return {True: "yes", False: "no", None: "cannot read back"}[lossless[key]]


def quality_table(runs: Sequence[AnalyticsResult]) -> Table:
    table = Table(title="Data quality and load")
    for column in ("system", "loaded / offered", "refused", "first refusal", "load time", "docs/s"):
        table.add_column(column, justify="left" if column in ("system", "first refusal") else "right")
    best = min((t for r in runs if (t := r.load_time)), default=None)
    for run in runs:
        offered, loaded = run.dataset_size, run.num_loaded_documents
        errors = run.load_errors
        share = f" ({100 * loaded / offered:.4g}%)" if offered and loaded is not None else ""
        table.add_row(
            _name(run),
            f"{_int(loaded)} / {_int(offered)}{share}",
            _int(errors.count if errors else None),
            first_refusal(run)[:60] if errors and errors.count else "",
            _seconds(run.load_time, best),
            _int(run.load.documents_per_second if run.load else None),
        )
        if run.error:
            table.add_row("", f"[red]run failed: {run.error[:80]}[/red]", "", "", "", "")
    return table


def first_refusal(run: AnalyticsResult) -> str:
    """``file:line reason`` of the first document the system refused ("" when none)."""
    first = run.load_errors.first[0] if run.load_errors and run.load_errors.first else None
    return f"{first.file}:{first.line} {first.reason}" if first else ""


def timing_table(runs: Sequence[AnalyticsResult], kind: str) -> Table:
    title = (
        "Cold runs (engine restarted, page cache dropped)"
        if kind == "cold"
        else "Hot runs (min of tries 2..n)"
    )
    table = Table(title=f"{title}: seconds, ratio to the fastest correct answer")
    table.add_column("system")
    for q in range(1, 6):
        table.add_column(f"Q{q}", justify="right")
    table.add_column("score", justify="right")
    pick = cold_time if kind == "cold" else hot_time
    best = [_best(runs, q, pick) for q in range(QUERY_COUNT)]
    scores = {_name(r): score(r, pick, best) for r in runs}
    for run in runs:
        cells = [_timing_cell(run, q, pick, best[q]) for q in range(QUERY_COUNT)]
        s = scores[_name(run)]
        table.add_row(_name(run), *cells, f"x{s:.2f}" if s else "-")
    return table


def _timing_cell(run: AnalyticsResult, q: int, pick: Pick, fastest: float | None) -> str:
    t, status = pick(run, q), _status(run, q)
    if t is None:
        return f"[red]{_short_error(run, q)}[/red]"
    ratio = f" x{(SHIFT + t) / (SHIFT + fastest):.1f}" if fastest is not None else ""
    return f"{t:.3f}{ratio} {STATUS_MARK.get(status, status)}"


def memory_table(runs: Sequence[AnalyticsResult]) -> Table:
    table = Table(title="Peak memory per query (MB, hot try; engine's own figure or process RSS)")
    table.add_column("system")
    for q in range(1, 6):
        table.add_column(f"Q{q}", justify="right")
    for run in runs:
        peaks = [memory_hot(run, q) for q in range(QUERY_COUNT)]
        table.add_row(_name(run), *(f"{p / 1e6:,.0f}" if p is not None else "-" for p in peaks))
    return table


# ----- figures ----------------------------------------------------------------------------


def per_query_row(rows: Sequence[Sequence[float | None] | None] | None, q: int) -> list[float | None]:
    """Query ``q``'s figures per try from a per-query table (none when it has no row)."""
    row = rows[q] if rows and q < len(rows) else None
    return list(row or [])


def cold_of(row: Sequence[float | None]) -> float | None:
    """The cold figure of a query's tries: try 1."""
    return row[0] if row else None


def hot_of(row: Sequence[float | None]) -> float | None:
    """The hot figure of a query's tries: the least of tries 2..n."""
    values = [v for v in row[1:] if v is not None]
    return min(values) if values else None


def cold_time(run: AnalyticsResult, q: int) -> float | None:
    return cold_of(per_query_row(run.result, q))


def hot_time(run: AnalyticsResult, q: int) -> float | None:
    return hot_of(per_query_row(run.result, q))


def memory_hot(run: AnalyticsResult, q: int) -> float | None:
    """Peak bytes of query ``q`` (0-based): the least over the hot tries (over every try
    when no hot try has one)."""
    row = per_query_row(run.memory_usage, q)
    values = [v for v in row[1:] if v is not None] or [v for v in row if v is not None]
    return min(values) if values else None


def fewer_hot_tries(run: AnalyticsResult) -> list[str]:
    """Queries whose hot time rests on fewer tries than were run (a hot try died)."""
    short = []
    for q, row in enumerate(run.result[:QUERY_COUNT]):
        hot = row[1:]
        done = sum(1 for v in hot if v is not None)
        if 0 < done < len(hot):
            short.append(f"Q{q + 1} {done} of {len(hot)}")
    return short


def _best(runs: Sequence[AnalyticsResult], q: int, pick: Pick) -> float | None:
    picked = [pick(r, q) for r in runs if _status(r, q) in TRUSTED]
    times = [t for t in picked if t is not None]
    return min(times) if times else None


def score(run: AnalyticsResult, pick: Pick, best: list[float | None]) -> float | None:
    """JSONBench's summary: geometric mean of (0.01 + t) / (0.01 + best) over the queries.

    A missing or untrusted answer counts as if it took the query's timeout (JSONBench
    penalises missing results the same way), so a system cannot score well by failing.
    """
    ratios = []
    for q in range(QUERY_COUNT):
        fastest = best[q]
        if fastest is None:
            continue
        t = pick(run, q)
        if t is None or _status(run, q) not in TRUSTED:
            t = max(run.timeout_seconds or 600.0, 10 * fastest)
        ratios.append((SHIFT + t) / (SHIFT + fastest))
    return math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None


def query_set_name(portable: Portable) -> str:
    return portable.set or "?"


def portable_tables(runs: Sequence[AnalyticsResult]) -> list[Table]:
    """The user's query sets: per set, each system's cold and hot seconds per query, marked
    when the answer is not correct, or correct but empty (it proves little)."""
    tables = []
    for name in sorted({query_set_name(r.portable) for r in runs if r.portable}):
        group = [r for r in runs if r.portable and query_set_name(r.portable) == name]
        queries = [q.name for q in _queries(group[0])]
        table = Table(title=f"Query set {name}: cold / hot seconds (hot = best of tries 2..n)")
        table.add_column("system")
        for query in queries:
            table.add_column(query, justify="right")
        for run in group:
            by_name = {q.name: q for q in _queries(run)}
            table.add_row(_name(run), *(_portable_cell(by_name.get(q)) for q in queries))
        tables.append(table)
    return tables


def _queries(run: AnalyticsResult) -> list[PortableQuery]:
    return run.portable.queries if run.portable else []


def _portable_cell(record: PortableQuery | None) -> str:
    if record is None:
        return "-"
    if record.status is PortableStatus.not_expressible:
        return "[dim]not expressible[/dim]"
    if record.status is PortableStatus.error:
        return "[red]error[/red]"
    times = [t for t in record.result or [] if t is not None]
    cold = f"{times[0]:.3f}" if times else "?"
    hot = f"{min(times[1:]):.3f}" if len(times) > 1 else "-"
    text = f"{cold} / {hot}"
    if record.status is PortableStatus.wrong:
        return f"[red]{text} wrong[/red]"
    return f"[yellow]{text} empty[/yellow]" if record.empty else text


def portable_summary(record: Portable) -> str:
    queries = record.queries
    correct = [q for q in queries if q.status is PortableStatus.correct]
    empty = sum(1 for q in correct if q.empty)
    parts = [f"{record.set}: answers {len(correct)}/{len(queries)} correct"]
    if empty:
        parts.append(f"{empty} of them empty")
    for status in (PortableStatus.wrong, PortableStatus.error, PortableStatus.not_expressible):
        names = [q.name for q in queries if q.status is status]
        if names:
            parts.append(f"{status.value.replace('_', ' ')}: {', '.join(names)}")
    text = "; ".join(parts)
    return (
        f"[bold red]{text}: EVERY ANSWER IS EMPTY, no speed to compare[/bold red]"
        if record.all_empty
        else text
    )


def verdicts(runs: Sequence[AnalyticsResult]) -> list[str]:
    lines = ["", "[bold]Summary[/bold]"]
    best_hot = [_best(runs, q, hot_time) for q in range(QUERY_COUNT)]
    # Only runs with at least one trusted answer are ranked: a run that never started (or
    # answered nothing) has no speed to compare, only its failure to report.
    ranked = [
        r
        for r in runs
        if any(_status(r, q) in TRUSTED and hot_time(r, q) is not None for q in range(QUERY_COUNT))
    ]
    scores = [(score(r, hot_time, best_hot), r) for r in ranked]
    scored = sorted(((s, r) for s, r in scores if s), key=lambda pair: pair[0])
    if scored:
        top_score, top = scored[0]
        lines.append(f"[bold]{_name(top)}[/bold] is the fastest on hot runs (geometric mean).")
        for s, run in scored[1:]:
            factor = s / top_score
            lines.append(
                f"  {_name(top)} is about as fast as {_name(run)}"
                if factor < 1.1
                else f"  {_name(top)} is {factor:.1f}x faster than {_name(run)}"
            )
    lines += [f"{_name(r)}: " + "; ".join(verdict(r)) for r in runs]
    return lines


def verdict(run: AnalyticsResult) -> list[str]:
    """What the summary says of one run: its answers, its load, its storage, what went wrong."""
    offered, loaded = run.dataset_size, run.num_loaded_documents
    raw = run.dataset.baselines.raw
    parts = [_answers_verdict(run)]
    if offered:
        parts.append(f"loaded {loaded}/{offered}")
    if run.answers_basis:
        parts.append("answers judged on the documents it loaded")
    if run.total_size and raw:
        parts.append(f"stores the data in x{run.total_size / raw:.2f} of the raw ndjson")
    if run.error:
        parts.append(f"[red]failed: {run.error[:100]}[/red]")
    short = fewer_hot_tries(run)
    if short:
        parts.append(f"[yellow]hot time from fewer tries: {', '.join(short)}[/yellow]")
    tags = [t for t in run.tags if t.endswith("cold-run")]
    if tags:
        parts.append(f"[yellow]{', '.join(tags)}[/yellow]")
    return parts


def _answers_verdict(run: AnalyticsResult) -> str:
    if run.imported:
        return f"imported from {run.imported.from_ or 'elsewhere'} ({run.machine}); answers unchecked"
    answers = run.answers or []
    good = sum(1 for a in answers if a.status.value in TRUSTED)
    bad = [f"Q{a.query} {a.status.value}" for a in answers if a.status.value not in TRUSTED]
    checked = f"{good}/5 correct" + (f" ({', '.join(bad)})" if bad else "")
    if run.portable:
        # the hand-written Q1-Q5 run beside the shipped jsonbench set, on the same load
        hand = f"Q1-Q5 hand-written {checked}; " if answers else ""
        return hand + portable_summary(run.portable)
    if not run.result:
        return "no queries run"
    return f"answers {checked}"


# ----- formatting -------------------------------------------------------------------------


def _name(run: AnalyticsResult) -> str:
    """``system/variant``, with the cluster shape beside it for a distributed run."""
    return run_name(run)


def _dataset(run: AnalyticsResult) -> str:
    return run.dataset.label or str(run.dataset_size)


def _status(run: AnalyticsResult, q: int) -> str:
    answers = run.answers or []
    return answers[q].status.value if q < len(answers) else "unchecked"


def _short_error(run: AnalyticsResult, q: int) -> str:
    errors = run.query_errors[q] if run.query_errors and q < len(run.query_errors) else []
    first = next((e for e in errors if e), "no result")
    return first.split(":")[0][:24]


def _loaded(run: AnalyticsResult) -> bool:
    return bool(run.num_loaded_documents)


def _size(size: float | None, best: float | None = None) -> str:
    if size is None:
        return "-"
    text = f"{size / 1e6:,.1f} MB"
    return f"{text} x{size / best:.1f}" if best else text


def _seconds(value: float | None, best: float | None = None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f} s" + (f" x{value / best:.1f}" if best else "")


def _int(value: float | None) -> str:
    return "-" if value is None else f"{int(value):,}"
