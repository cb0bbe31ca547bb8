"""The terminal comparison of analytics results, in the spirit of JSONBench's dashboard.

One table per metric (storage, data quality, load, cold, hot, memory), each cell with its
ratio to the best in its column ("x1.0", "x12.3"), and the answer status on every timing cell
so a wrong answer can never pass for a fast one (it is also excluded from "best"). Then a
hyperfine-style summary: who is fastest, and how many times slower each other system is.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from docbench.core.console import report_console
from docbench.results import load_results, run_name
from docbench.results.files import non_default_notes
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


def print_analytics_report(
    results_dirs: list[Path], only: list[Path] | None = None, console: Console | None = None
) -> None:
    """The analytics tables of what the directories hold (``only``: just these result files)."""
    documents = [d for d in load_results(results_dirs) if d.get("workload") == "analytics"]
    if only is not None:
        wanted = {str(p) for p in only}
        documents = [d for d in documents if d.get("_path") in wanted]
    print_report(documents, console or report_console(), [])


def print_report(
    documents: list[dict[str, Any]], console: Console, all_documents: list[dict[str, Any]]
) -> None:
    if not documents:
        console.print("No analytics results.")
        return
    for label in sorted({_dataset(d) for d in documents}):
        group = sorted((d for d in documents if _dataset(d) == label), key=_name)
        console.rule(f"Analytics on {label} ({group[0].get('dataset_size') or '?'} documents)")
        print_dataset_report(group, console, lossless_by_variant(all_documents))


def lossless_by_variant(documents: list[dict[str, Any]]) -> dict[tuple[str, str], bool | None]:
    """(system, variant) -> whether the fidelity corpus came back as the same values, from the
    latest fidelity result of each (the label `lossless`)."""
    found: dict[tuple[str, str], tuple[str, bool | None]] = {}
    for d in documents:
        if d.get("workload") == "fidelity" and d.get("complete"):
            key = (str(d.get("system")), str(d.get("variant")))
            started = str(d.get("started_at") or "")
            if key not in found or started > found[key][0]:
                found[key] = (started, d.get("lossless"))
    return {key: lossless for key, (_, lossless) in found.items()}


def print_dataset_report(
    docs: list[dict[str, Any]], console: Console, lossless: dict[tuple[str, str], bool | None] | None = None
) -> None:
    console.print(storage_table(docs))
    for note in non_default_notes(docs):
        console.print(f"[yellow]{escape(note)}[/yellow]")
    labels = representation_table(docs, lossless or {})
    if labels is not None:
        console.print(labels)
    console.print(quality_table(docs))
    bluesky = [d for d in docs if "portable" not in d or d.get("answers")]  # jsonbench: both
    if bluesky:
        for kind in ("cold", "hot"):
            console.print(timing_table(bluesky, kind))
        console.print(memory_table(bluesky))
    for table in portable_tables(docs):
        console.print(table)
    concurrent = concurrency_table(docs)
    if concurrent is not None:
        console.print(concurrent)
        for d in docs:
            for level in (d.get("concurrency") or {}).get("levels") or []:
                warning = window_warning(d["concurrency"], level)
                if warning:
                    where = f"{_name(d)} at {level['clients']} clients"
                    console.print(f"[yellow]warning[/yellow] {where}: {warning}")
    ingest = ingest_table(docs)
    if ingest is not None:
        console.print(ingest)
    for line in verdicts(docs):
        console.print(line)


# ----- tables -----------------------------------------------------------------------------


def window_warning(record: dict[str, Any], level: dict[str, Any]) -> str | None:
    """The level's short-window warning, or, for a result written before levels carried
    one, the same judgement from its figures."""
    if level.get("qps") is None or level.get("error"):
        return None  # the level did not run: its error says so
    if "warning" in level:
        return level["warning"]
    mean = (level.get("latency_ms") or {}).get("avg_ms")
    return short_window(
        level.get("queries") or 0, level["clients"], mean, float(record.get("duration_s") or 0)
    )


def concurrency_table(docs: list[dict[str, Any]]) -> Table | None:
    """Q1-Q5 from many clients at once (`--clients`): per level, the engine's QPS and
    latency beside the driver's own ceiling at the same number of clients."""
    runs = [d for d in docs if isinstance(d.get("concurrency"), dict)]
    if not runs:
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
    for d in runs:
        record = d["concurrency"]
        ceilings = {c["clients"]: c for c in record.get("ceiling") or []}
        for level in record.get("levels") or []:
            latency = level.get("latency_ms") or {}
            engine = level.get("engine") or {}
            ceiling = ceilings.get(level["clients"])
            table.add_row(
                _name(d),
                str(level["clients"]),
                (
                    f"{level['qps']:.2f}"
                    + (" [yellow](window too short)[/yellow]" if window_warning(record, level) else "")
                )
                if level.get("qps") is not None
                else f"[red]{level.get('error') or 'nothing ran'}[/red]",
                *(_ms(latency.get(k)) for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms")),
                _not_ok(level),
                f"{engine['cores']:.2f}" if engine.get("cores") is not None else "-",
                _size(engine.get("peak_pss_bytes")),
                f"{ceiling['qps']:,.0f}" if ceiling and ceiling.get("qps") is not None else "-",
            )
    return table


def ingest_table(docs: list[dict[str, Any]]) -> Table | None:
    """Live ingest (`--ingest-rates`): per level, the rate sustained against the target, the
    freshness of what was acknowledged, query latency idle and during, the exact count."""
    runs = [d for d in docs if isinstance(d.get("ingest"), dict)]
    if not runs:
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
    for d in runs:
        record = d["ingest"]
        if record.get("not_supported"):
            table.add_row(_name(d), f"[yellow]{record['not_supported'][:100]}[/yellow]", *[""] * 10)
            continue
        for level in record.get("levels") or []:
            fresh = level.get("freshness_ms") or {}
            idle, during = level.get("queries_idle") or {}, level.get("queries_during") or {}
            count = (
                f"exact ({level['final_count']:,})"
                if level.get("exact")
                else f"[red]{level['final_count'] if level['final_count'] is not None else 'unknown'} of "
                f"{level['expected_count']:,}[/red]"
            )
            table.add_row(
                _name(d),
                f"{level['target_rate']:,.0f}" if level.get("target_rate") else "max",
                f"{level['sustained_rate']:,.0f}" if level.get("sustained_rate") else "-",
                str((level.get("lag_s") or {}).get("max")),
                f"{level.get('refused', 0):,}",
                _freshness_method(fresh),
                _ms(fresh.get("p50")),
                _ms(fresh.get("p99")),
                f"{_ms(idle.get('p50_ms'))} -> {_ms(during.get('p50_ms'))}",
                f"{_ms(idle.get('p99_ms'))} -> {_ms(during.get('p99_ms'))}",
                f"{idle.get('errors', 0)} / {during.get('errors', 0)}",
                count + (f" [red]{level['error'][:80]}[/red]" if level.get("error") else ""),
            )
    return table


def _freshness_method(fresh: dict[str, Any]) -> str:
    """How freshness was measured: markers (seen of made), or the visible count."""
    if fresh.get("method") != "markers":
        return "count"
    text = f"markers {fresh.get('seen', 0)}/{fresh.get('markers', 0)}"
    return text if fresh.get("seen") == fresh.get("markers") else f"[red]{text}[/red]"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _not_ok(level: dict[str, Any]) -> str:
    sent = level.get("queries") or 0
    bad = sent - (level.get("outcomes") or {}).get("ok", 0)
    if not sent:
        return "-"
    text = f"{bad} ({100 * bad / sent:.1f}%)"
    return f"[red]{text}[/red]" if bad else text


def storage_table(docs: list[dict[str, Any]]) -> Table:
    table = Table(title="Storage (bytes on disk; ratio to the smallest)")
    for column in ("system", "role", "total", "data", "index", "on disk", "vs raw ndjson"):
        table.add_column(column, justify="left" if column in ("system", "role") else "right")
    totals = [d.get("total_size") for d in docs if _loaded(d)]
    best = min((t for t in totals if t), default=None)
    baselines = docs[0].get("dataset", {}).get("baselines") or {}
    raw = baselines.get("raw")
    for d in docs:
        total = d.get("total_size")
        table.add_row(
            _name(d),
            d.get("variant_role", ""),
            _size(total, best),
            _size(d.get("data_size")),
            _size(d.get("index_size")),
            _size((d.get("storage") or {}).get("on_disk")),
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
            f"{size / raw:.2f}" if raw else "-",
        )
    return table


def representation_table(
    docs: list[dict[str, Any]], lossless: dict[tuple[str, str], bool | None] | None = None
) -> Table | None:
    """How each run held the documents (its labels), when the results say it; "lossless"
    from the fidelity workload's result of the same system and variant, when there is one."""
    labelled = [d for d in docs if isinstance(d.get("representation"), dict)]
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
    for d in labelled:
        labels = d["representation"]
        beyond = labels.get("settings_beyond_defaults") or {}
        table.add_row(
            _name(d),
            str(labels.get("name", "")),
            "yes" if labels.get("retains_structure") else "no",
            "yes" if labels.get("schema_by_hand") else "no",
            _lossless((lossless or {}).get((str(d.get("system")), str(d.get("variant"))), "unknown")),
            ", ".join(f"{k}={v}" for k, v in beyond.items()) or "-",
        )
    return table


def _lossless(value: Any) -> str:
    return {True: "yes", False: "no", None: "cannot read back"}.get(value, "- (run fidelity)")


def quality_table(docs: list[dict[str, Any]]) -> Table:
    table = Table(title="Data quality and load")
    for column in ("system", "loaded / offered", "refused", "first refusal", "load time", "docs/s"):
        table.add_column(column, justify="left" if column in ("system", "first refusal") else "right")
    loads = [t for d in docs if (t := d.get("load_time"))]
    best = min(loads, default=None)
    for d in docs:
        offered, loaded = d.get("dataset_size"), d.get("num_loaded_documents")
        errors = d.get("load_errors") or {}
        first = (errors.get("first") or [{}])[0]
        reason = f"{first.get('file')}:{first.get('line')} {first.get('reason', '')}"[:60] if first else ""
        share = f" ({100 * loaded / offered:.4g}%)" if offered and loaded is not None else ""
        table.add_row(
            _name(d),
            f"{_int(loaded)} / {_int(offered)}{share}",
            _int(errors.get("count")),
            reason if errors.get("count") else "",
            _seconds(d.get("load_time"), best),
            _int((d.get("load") or {}).get("documents_per_second")),
        )
        if d.get("error"):
            table.add_row("", f"[red]run failed: {d['error'][:80]}[/red]", "", "", "", "")
    return table


def timing_table(docs: list[dict[str, Any]], kind: str) -> Table:
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
    best = [_best(docs, q, pick) for q in range(5)]
    scores = {_name(d): score(d, pick, best) for d in docs}
    for d in docs:
        cells = []
        for q in range(5):
            t, status = pick(d, q), _status(d, q)
            if t is None:
                cells.append(f"[red]{_short_error(d, q)}[/red]")
                continue
            fastest = best[q]
            ratio = f" x{(SHIFT + t) / (SHIFT + fastest):.1f}" if fastest is not None else ""
            cells.append(f"{t:.3f}{ratio} {STATUS_MARK.get(status, status)}")
        s = scores[_name(d)]
        table.add_row(_name(d), *cells, f"x{s:.2f}" if s else "-")
    return table


def memory_table(docs: list[dict[str, Any]]) -> Table:
    table = Table(title="Peak memory per query (MB, hot try; engine's own figure or process RSS)")
    table.add_column("system")
    for q in range(1, 6):
        table.add_column(f"Q{q}", justify="right")
    for d in docs:
        cells = []
        for q in range(5):
            row = (d.get("memory_usage") or [[]] * 5)[q] or []
            values = [v for v in row[1:] if v is not None] or [v for v in row if v is not None]
            cells.append(f"{min(values) / 1e6:,.0f}" if values else "-")
        table.add_row(_name(d), *cells)
    return table


# ----- figures ----------------------------------------------------------------------------


def cold_time(d: dict[str, Any], q: int) -> float | None:
    row = (d.get("result") or [[]] * 5)[q] or []
    return row[0] if row else None


def hot_time(d: dict[str, Any], q: int) -> float | None:
    row = (d.get("result") or [[]] * 5)[q] or []
    values = [v for v in row[1:] if v is not None]
    return min(values) if values else None


def fewer_hot_tries(d: dict[str, Any]) -> list[str]:
    """Queries whose hot time rests on fewer tries than were run (a hot try died)."""
    short = []
    for q, row in enumerate((d.get("result") or [])[:5]):
        hot = (row or [])[1:]
        done = sum(1 for v in hot if v is not None)
        if 0 < done < len(hot):
            short.append(f"Q{q + 1} {done} of {len(hot)}")
    return short


def _best(
    docs: list[dict[str, Any]], q: int, pick: Callable[[dict[str, Any], int], float | None]
) -> float | None:
    picked = [pick(d, q) for d in docs if _status(d, q) in TRUSTED]
    times = [t for t in picked if t is not None]
    return min(times) if times else None


def score(
    d: dict[str, Any], pick: Callable[[dict[str, Any], int], float | None], best: list[float | None]
) -> float | None:
    """JSONBench's summary: geometric mean of (0.01 + t) / (0.01 + best) over the queries.

    A missing or untrusted answer counts as if it took the query's timeout (JSONBench
    penalises missing results the same way), so a system cannot score well by failing.
    """
    ratios = []
    for q in range(5):
        fastest = best[q]
        if fastest is None:
            continue
        t = pick(d, q)
        if t is None or _status(d, q) not in TRUSTED:
            t = max(d.get("timeout_seconds") or 600.0, 10 * fastest)
        ratios.append((SHIFT + t) / (SHIFT + fastest))
    return math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None


def portable_tables(docs: list[dict[str, Any]]) -> list[Table]:
    """The user's query sets: per set, each system's cold and hot seconds per query, marked
    when the answer is not correct, or correct but empty (it proves little)."""
    tables = []
    for name in sorted({d["portable"].get("set", "?") for d in docs if "portable" in d}):
        group = [d for d in docs if (d.get("portable") or {}).get("set") == name]
        queries = [q["name"] for q in group[0]["portable"]["queries"]]
        table = Table(title=f"Query set {name}: cold / hot seconds (hot = best of tries 2..n)")
        table.add_column("system")
        for query in queries:
            table.add_column(query, justify="right")
        for d in group:
            by_name = {q["name"]: q for q in d["portable"]["queries"]}
            table.add_row(_name(d), *(_portable_cell(by_name.get(q)) for q in queries))
        tables.append(table)
    return tables


def _portable_cell(record: dict[str, Any] | None) -> str:
    if record is None:
        return "-"
    status = record.get("status")
    if status == "not_expressible":
        return "[dim]not expressible[/dim]"
    if status == "error":
        return "[red]error[/red]"
    times = [t for t in record.get("result") or [] if t is not None]
    cold = f"{times[0]:.3f}" if times else "?"
    hot = f"{min(times[1:]):.3f}" if len(times) > 1 else "-"
    text = f"{cold} / {hot}"
    if status == "wrong":
        return f"[red]{text} wrong[/red]"
    return f"[yellow]{text} empty[/yellow]" if record.get("empty") else text


def portable_summary(record: dict[str, Any]) -> str:
    queries = record.get("queries") or []
    correct = [q for q in queries if q.get("status") == "correct"]
    empty = sum(1 for q in correct if q.get("empty"))
    parts = [f"{record.get('set')}: answers {len(correct)}/{len(queries)} correct"]
    if empty:
        parts.append(f"{empty} of them empty")
    for status in ("wrong", "error", "not_expressible"):
        names = [q["name"] for q in queries if q.get("status") == status]
        if names:
            parts.append(f"{status.replace('_', ' ')}: {', '.join(names)}")
    text = "; ".join(parts)
    return (
        f"[bold red]{text}: EVERY ANSWER IS EMPTY, no speed to compare[/bold red]"
        if record.get("all_empty")
        else text
    )


def verdicts(docs: list[dict[str, Any]]) -> list[str]:
    lines = ["", "[bold]Summary[/bold]"]
    best_hot = [_best(docs, q, hot_time) for q in range(5)]
    # Only runs with at least one trusted answer are ranked: a run that never started (or
    # answered nothing) has no speed to compare, only its failure to report.
    ranked = [
        d for d in docs if any(_status(d, q) in TRUSTED and hot_time(d, q) is not None for q in range(5))
    ]
    scores = [(score(d, hot_time, best_hot), d) for d in ranked]
    scored = sorted(((s, d) for s, d in scores if s), key=lambda pair: pair[0])
    if scored:
        top_score, top = scored[0]
        lines.append(f"[bold]{_name(top)}[/bold] is the fastest on hot runs (geometric mean).")
        for s, d in scored[1:]:
            factor = s / top_score
            lines.append(
                f"  {_name(top)} is about as fast as {_name(d)}"
                if factor < 1.1
                else f"  {_name(top)} is {factor:.1f}x faster than {_name(d)}"
            )
    for d in docs:
        answers = d.get("answers") or []
        good = sum(1 for a in answers if a.get("status") in TRUSTED)
        bad = [f"Q{a['query']} {a['status']}" for a in answers if a.get("status") not in TRUSTED]
        offered, loaded = d.get("dataset_size"), d.get("num_loaded_documents")
        raw = ((d.get("dataset") or {}).get("baselines") or {}).get("raw")
        if d.get("imported"):
            parts = [
                f"imported from {d['imported'].get('from', 'elsewhere')} "
                f"({d.get('machine', 'another machine')}); answers unchecked"
            ]
        elif "portable" in d:
            parts = [portable_summary(d["portable"])]
            if answers:  # the hand-written Q1-Q5 beside the shipped jsonbench set
                hand = f"Q1-Q5 hand-written {good}/5 correct" + (f" ({', '.join(bad)})" if bad else "")
                parts.insert(0, hand)
        elif d.get("result"):
            parts = [f"answers {good}/5 correct" + (f" ({', '.join(bad)})" if bad else "")]
        else:
            parts = ["no queries run"]
        if offered:
            parts.append(f"loaded {loaded}/{offered}")
        if d.get("answers_basis"):
            parts.append("answers judged on the documents it loaded")
        if d.get("total_size") and raw:
            parts.append(f"stores the data in x{d['total_size'] / raw:.2f} of the raw ndjson")
        if d.get("error"):
            parts.append(f"[red]failed: {d['error'][:100]}[/red]")
        short = fewer_hot_tries(d)
        if short:
            parts.append(f"[yellow]hot time from fewer tries: {', '.join(short)}[/yellow]")
        tags = [t for t in d.get("tags", []) if t.endswith("cold-run")]
        if tags:
            parts.append(f"[yellow]{', '.join(tags)}[/yellow]")
        lines.append(f"{_name(d)}: " + "; ".join(parts))
    return lines


# ----- formatting -------------------------------------------------------------------------


def _name(d: dict[str, Any]) -> str:
    """``system/variant``, with the cluster shape beside it for a distributed run."""
    return run_name(d)


def _dataset(d: dict[str, Any]) -> str:
    return (d.get("dataset") or {}).get("label") or str(d.get("dataset_size"))


def _status(d: dict[str, Any], q: int) -> str:
    answers = d.get("answers") or []
    return answers[q].get("status", "error") if q < len(answers) else "unchecked"


def _short_error(d: dict[str, Any], q: int) -> str:
    errors = (d.get("query_errors") or [[]] * 5)[q] or []
    first = next((e for e in errors if e), "no result")
    return first.split(":")[0][:24]


def _loaded(d: dict[str, Any]) -> bool:
    return bool(d.get("num_loaded_documents"))


def _size(size: int | None, best: int | None = None) -> str:
    if size is None:
        return "-"
    text = f"{size / 1e6:,.1f} MB"
    return f"{text} x{size / best:.1f}" if best else text


def _seconds(value: float | None, best: float | None = None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f} s" + (f" x{value / best:.1f}" if best else "")


def _int(value: Any) -> str:
    return "-" if value is None else f"{int(value):,}"
