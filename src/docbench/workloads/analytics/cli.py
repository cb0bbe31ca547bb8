"""`docbench run analytics` (the default of `docbench run`) and `docbench bench load`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from docbench.core import paths, runlock
from docbench.core.units import count_label, parse_count
from docbench.workloads.options import (
    FiniteFloat,
    check_variants,
    count_list,
    data_dir_callback,
    directory_option,
    list_callback,
    results_dir_or_default,
    split_list,
    system_options,
    systems_callback,
    urls_from,
    verify_option,
)


def _scale(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        documents = parse_count(value)
        if documents < 1:
            raise ValueError("a scale needs at least one document")
    except ValueError as error:
        raise click.BadParameter(str(error)) from None
    return count_label(documents)  # 1000k and 1m are one dataset, bluesky-1m


def _client_levels(ctx: click.Context, param: click.Parameter, value: str | None) -> list[int] | None:
    """--clients is optional here (no concurrency phase without it); when given, the same
    list of counts as the throughput workload's --clients."""
    return None if value is None else count_list(1)(ctx, param, value)


def _ingest_rates(ctx: click.Context, param: click.Parameter, value: str | None) -> list[float] | None:
    """--ingest-rates: documents per second, or ``max`` (as fast as the engine takes them)."""
    items = split_list(value)
    if items is None:
        return None
    rates = []
    for item in items:
        if item == "max":
            rates.append(0.0)
            continue
        try:
            rate = float(parse_count(item))
        except ValueError:
            raise click.BadParameter(
                f"{item!r}: a number of documents per second (1k, 10k...) or max"
            ) from None
        if rate <= 0:
            raise click.BadParameter(f"{item!r}: a rate above 0 (or max)")
        rates.append(rate)
    return rates


def command() -> click.Command:
    @click.command("analytics")
    @system_options
    @click.option(
        "--scale", default=None, callback=_scale, help="1m, 10m, 100m, 1000m (generated if missing) [1m]."
    )
    @click.option(
        "--data",
        "data_dir",
        type=click.Path(path_type=Path, exists=True, readable=True),
        default=None,
        callback=data_dir_callback,
        help="Any directory of ndjson files instead of a generated scale (not inside "
        "docbench's work directory, $DOCBENCH_HOME/work).",
    )
    @click.option(
        "--queries",
        "queries_file",
        default=None,
        help="Your own queries (a portable query file, docs/queries.md), run instead of Q1-Q5 and "
        "checked against the oracle; `docbench profile DATA` proposes one. A shipped set by name: "
        "jsonbench (Q1-Q5 in the spec; on Bluesky data it runs beside the hand-written Q1-Q5 "
        "on the same load).",
    )
    @click.option(
        "--tries",
        default=3,
        show_default=True,
        type=click.IntRange(min=1),
        help="Runs of each query (try 1 cold, hot = best of the others).",
    )
    @click.option(
        "--timeout",
        default=600.0,
        show_default=True,
        type=FiniteFloat(min=0, min_open=True),
        help="Seconds per query try.",
    )
    @click.option(
        "--no-restart",
        is_flag=True,
        help="Do not restart servers before cold runs (quicker; tagged no-restart-cold-run).",
    )
    @click.option(
        "--keep-databases",
        is_flag=True,
        help="Keep each variant's database after its run (default: removed once the result "
        "is written, so a large scale needs the room of one database at a time). On a "
        "server given by URL docbench's database and tables always stay.",
    )
    @click.option(
        "--representations",
        is_flag=True,
        help="Also run each system's other ways of holding the documents (PostgreSQL json and "
        "jsonb + generated columns, DuckDB VARIANT, ClickHouse String and typed columns, "
        "MariaDB without virtual columns, a search index mapping only the five paths).",
    )
    @click.option(
        "--default-variants",
        "defaults_only",
        is_flag=True,
        help="Only each system's out-of-the-box variant (PostgreSQL pglz, ClickHouse lz4, SQLite "
        "JSONB...), not its other compressions and configurations: one run per system "
        "(`make demo`); with --representations, its representations too.",
    )
    @click.option(
        "--clients",
        "client_levels",
        default=None,
        callback=_client_levels,
        help="After the cold/hot queries, also query from this many clients at once, each "
        "number in turn (e.g. 1,4,16,64): QPS, latency percentiles and errors per level, "
        "every answer checked, the engine's CPU and memory, the driver's own ceiling beside.",
    )
    @click.option(
        "--duration",
        default=60.0,
        show_default=True,
        type=FiniteFloat(min=0, min_open=True),
        help="Seconds each --clients level is measured (after its warm-up).",
    )
    @click.option(
        "--warmup",
        default=5.0,
        show_default=True,
        type=FiniteFloat(min=0),
        help="Seconds each --clients level runs before it is measured.",
    )
    @click.option(
        "--rate",
        default=None,
        type=FiniteFloat(min=0, min_open=True),
        help="Target queries per second over all --clients (open loop: latency from each "
        "query's intended start). Default: closed loop, each client as fast as answered.",
    )
    @click.option(
        "--order-seed",
        default=1,
        show_default=True,
        type=int,
        help="Seed of the clients' query orders (the same seed sends the same sequence).",
    )
    @click.option(
        "--client-processes",
        default=16,
        show_default=True,
        type=click.IntRange(min=1),
        help="At most this many client processes (clients spread over them; a system whose "
        "clients share one engine in one process, chDB and DuckDB, uses one).",
    )
    @click.option(
        "--ingest-rates",
        default=None,
        callback=_ingest_rates,
        help="After the queries, documents arriving at each of these rates (documents/s, "
        "e.g. 1k,10k, or max) through the system's own loading path while query clients run: "
        "rate sustained, freshness p50/p99 (marker documents found by a query), query latency "
        "idle vs during, the exact count at the end. Every system but DuckDB 1.1.3.",
    )
    @click.option(
        "--ingest-duration",
        default=30.0,
        show_default=True,
        type=FiniteFloat(min=0, min_open=True),
        help="Seconds of each --ingest-rates level (and of its idle baseline before it).",
    )
    @click.option(
        "--ingest-clients",
        default=2,
        show_default=True,
        type=click.IntRange(min=0),
        help="Query clients during each --ingest-rates level and its idle baseline.",
    )
    @click.option(
        "--ingest-hard-rate",
        default=None,
        type=FiniteFloat(min=0, max=1),
        help="Share of the generator's hard documents in the arriving ones (some engines refuse "
        "some: isolated and logged mid-stream) [the generator's default].",
    )
    @verify_option
    def analytics(
        system_names: list[str] | None,
        variants: list[str] | None,
        results_dir: Path | None,
        resume: bool,
        scale: str | None,
        data_dir: Path | None,
        queries_file: str | None,
        tries: int,
        timeout: float,
        no_restart: bool,
        keep_databases: bool,
        representations: bool,
        defaults_only: bool,
        client_levels: list[int] | None,
        duration: float,
        warmup: float,
        rate: float | None,
        order_seed: int,
        client_processes: int,
        ingest_rates: list[float] | None,
        ingest_duration: float,
        ingest_clients: int,
        ingest_hard_rate: float | None,
        verify: str,
        **urls: Any,
    ) -> None:
        """JSONBench: load the Bluesky events, measure storage, run Q1-Q5 cold and hot, check
        every answer against the oracle."""
        from docbench.workloads.analytics.concurrency import ConcurrencyRequest
        from docbench.workloads.analytics.runner import RunRequest, run_analytics

        concurrency = None
        if client_levels:
            concurrency = ConcurrencyRequest(
                clients=client_levels,
                duration_s=duration,
                warmup_s=warmup,
                rate=rate,
                seed=order_seed,
                max_processes=client_processes,
                timeout_s=timeout,
            )
        ingest = None
        if ingest_rates:
            from docbench.workloads.analytics.ingest import IngestRequest

            ingest = IngestRequest(
                rates=ingest_rates,
                duration_s=ingest_duration,
                clients=ingest_clients,
                hard_rate=ingest_hard_rate,
                seed=order_seed,
                timeout_s=timeout,
            )
        check_variants("analytics", system_names, variants)
        query_set = None
        if queries_file is not None:
            from docbench.queries.spec import QuerySpecError, load_query_set, shipped_query_set

            try:
                query_set = shipped_query_set(queries_file) or load_query_set(Path(queries_file))
            except QuerySpecError as error:
                raise click.BadParameter(str(error), param_hint="--queries") from None
        if scale and data_dir:
            raise click.UsageError("--scale and --data are exclusive")
        raise SystemExit(
            run_analytics(
                RunRequest(
                    system_names=system_names,
                    scale=scale,
                    data_dir=data_dir,
                    results_dir=results_dir_or_default(results_dir),
                    tries=tries,
                    timeout=timeout,
                    variants=variants,
                    resume=resume,
                    restart_for_cold=not no_restart,
                    urls=urls_from(urls),
                    keep_databases=keep_databases,
                    representations=representations,
                    defaults_only=defaults_only,
                    verify_full=verify == "full",
                    concurrency=concurrency,
                    ingest=ingest,
                    query_set=query_set,
                )
            )
        )

    return analytics


def bench_commands() -> list[click.Command]:
    @click.command("load")
    @click.option("--systems", "system_names", default=None, callback=systems_callback)
    @click.option("--scale", default="1m", show_default=True, callback=_scale)
    @click.option(
        "--data",
        "data_dir",
        type=click.Path(path_type=Path, exists=True),
        default=None,
        callback=data_dir_callback,
        help="A dataset directory instead of the --scale one.",
    )
    @click.option(
        "--repeat",
        default=2,
        show_default=True,
        type=click.IntRange(min=1),
        help="Loads per side (alternating); the minimum is compared.",
    )
    def bench_load(system_names: list[str] | None, scale: str, data_dir: Path | None, repeat: int) -> None:
        """docbench's load of the dataset (hard documents included) against each system's
        native bulk load of its clean twin (same seed, --hard-rate 0): time and ratio."""
        from docbench.workloads.analytics.loadbench import bench_load_overhead

        with runlock.hold(paths.work_dir()):
            bench_load_overhead(system_names, scale=scale, data_dir=data_dir, repeat=repeat)

    return [bench_load]


def top_commands() -> list[click.Command]:
    @click.command("plan")
    @click.option("--scale", required=True, callback=_scale, help="1m, 10m, 100m, 1000m, ...")
    @click.option(
        "--systems",
        "system_names",
        default=None,
        callback=systems_callback,
        help="Comma-separated systems [the default ones].",
    )
    @click.option("--variants", default=None, callback=list_callback, help="Comma-separated variants [all].")
    @click.option(
        "--compress",
        type=click.Choice(["none", "zstd"]),
        default="none",
        show_default=True,
        help="The dataset's form when it still has to be generated.",
    )
    @directory_option(
        "--results", "results_dir", help="Where earlier results are (the rates to extrapolate) [results/]."
    )
    def plan(
        scale: str,
        system_names: list[str] | None,
        variants: list[str] | None,
        compress: str,
        results_dir: Path | None,
    ) -> None:
        """Disk, memory and time a scale needs here, extrapolated from the results of smaller
        scales on this machine; exits 1 when the disk cannot hold it (nothing is started)."""
        from docbench.core.console import report_console
        from docbench.workloads.analytics.plan import make_plan, print_plan, refusal

        check_variants("analytics", system_names, variants)
        made = make_plan(scale, system_names, variants, [results_dir_or_default(results_dir)], compress)
        print_plan(made, report_console())
        raise SystemExit(1 if refusal(made) else 0)

    return [plan]
