"""The ``docbench`` command line. Each command is a thin shell over a module that does the work."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from docbench import paths
from docbench.systems import all_systems


def parse_count(text: str) -> int:
    """Accept 1m/10m/100m/1000m, 20k, or a plain integer."""
    value = text.strip().lower().replace("_", "")
    for suffix, factor in (("k", 1_000), ("m", 1_000_000), ("b", 1_000_000_000)):
        if value.endswith(suffix):
            return int(float(value[: -len(suffix)]) * factor)
    return int(value)


def system_url_options(command: Callable[..., None]) -> Callable[..., None]:
    """`--<system>-url` for every registered system: run against the user's own server."""
    for cls in reversed(all_systems()):
        if cls.url_example:
            command = click.option(
                f"--{cls.name}-url", default=None, metavar="URL",
                help=f"Run against this {cls.display_name} server (e.g. {cls.url_example}); "
                     "docbench only touches its own database/index there.")(command)
    return command


def _urls(options: dict[str, str | None]) -> dict[str, str | None]:
    return {key.removesuffix("_url"): value for key, value in options.items()}


@click.group()
@click.version_option(package_name="docbench")
def main() -> None:
    """docbench: load the same JSON documents into many datastores and compare them."""


@main.command()
@click.option("--docs", "docs", required=True, help="Number of documents: 1m, 10m, 100m, 1000m, 20k, ...")
@click.option("--out", "out", type=click.Path(path_type=Path), required=True)
@click.option("--seed", default=1, show_default=True, type=int)
@click.option("--jobs", default=1, show_default=True, type=int, help="Files generated in parallel.")
@click.option("--compress", type=click.Choice(["none", "gzip", "zstd"]), default="none", show_default=True)
@click.option("--dirty-rate", default=0.0, show_default=True, type=float,
              help="Share of invalid lines mixed in (truncated JSON, invalid UTF-8, empty lines).")
@click.option("--hard-rate", default=None, type=float,
              help="Share of valid-but-hard documents (default: the generator's documented rate).")
@click.option("--files", default=None, help="Generate only these file numbers (e.g. 1,3-5).")
def generate(docs: str, out: Path, seed: int, jobs: int, compress: str, dirty_rate: float,
             hard_rate: float | None, files: str | None) -> None:
    """Generate Bluesky Jetstream events in JSONBench's file layout."""
    from docbench.dataset.generate import generate_dataset

    generate_dataset(parse_count(docs), out, seed=seed, jobs=jobs, compress=compress,
                     dirty_rate=dirty_rate, hard_rate=hard_rate, only_files=files)


@main.command()
@click.argument("data_dir", type=click.Path(path_type=Path, exists=True))
@click.option("--jobs", default=1, show_default=True, type=int)
@click.option("--refresh", is_flag=True, help="Ignore a cached answers.json.")
def answers(data_dir: Path, jobs: int, refresh: bool) -> None:
    """Compute the exact answers of Q1-Q5 for a directory of ndjson files (no database)."""
    from docbench.dataset.oracle import answers_command

    answers_command(data_dir, jobs=jobs, refresh=refresh)


@main.command()
def systems() -> None:
    """List every system, its version and whether it can run here."""
    from docbench.report.systems import print_systems

    print_systems()


@main.command()
@click.argument("names", nargs=-1, required=True)
def setup(names: tuple[str, ...]) -> None:
    """Install what a system needs (idempotent): `docbench setup postgresql`, `docbench setup all`."""
    from docbench.setup import setup_systems

    raise SystemExit(setup_systems(list(names)))


@main.command()
@click.option("--workload", type=click.Choice(["analytics", "storage", "updates", "throughput"]),
              default="analytics",
              show_default=True)
@click.option("--systems", "system_names", default=None,
              help="Comma-separated systems (default: every one that can run here without setup).")
@click.option("--scale", default=None, help="1m, 10m, 100m, 1000m (generated if missing).")
@click.option("--data", "data_dir", type=click.Path(path_type=Path, exists=True), default=None,
              help="Any directory of ndjson files instead of a generated scale.")
@click.option("--results", "results_dir", type=click.Path(path_type=Path), default=None)
@click.option("--tries", default=3, show_default=True, type=int)
@click.option("--timeout", default=600.0, show_default=True, type=float, help="Seconds per query try.")
@click.option("--variants", default=None, help="Comma-separated variants (default: all of each system).")
@click.option("--no-restart", is_flag=True,
              help="Do not restart servers before cold runs (quicker; results tagged no-restart-cold-run).")
@click.option("--resume", is_flag=True, help="Skip (system, variant, scale) runs already complete.")
@click.option("--rows", default="50000", show_default=True,
              help="storage workload: documents per cell (e.g. 50000, 10k).")
@click.option("--sizes", default="1000,3000,7000,15000,31000", show_default=True,
              help="storage workload: payload field sizes in bytes.")
@click.option("--entropy", default="random,repetitive,text", show_default=True,
              help="storage workload: payload kinds (random, repetitive, text).")
@click.option("--docs", "update_docs", default="100k", show_default=True,
              help="updates workload: YCSB documents loaded (e.g. 100k, 2000).")
@click.option("--ops", "update_ops", default=10_000, show_default=True, type=int,
              help="updates workload: point reads and point updates per distribution.")
@click.option("--distribution", "update_distribution", default=None,
              help="updates: key distributions, comma-separated [uniform,zipfian]; throughput: "
                   "one of uniform, zipfian [uniform].")
@click.option("--clients", default="1,8,32", show_default=True,
              help="throughput: concurrent clients, one connection each (comma-separated list).")
@click.option("--threads", "processes", default=None, type=int,
              help="throughput: client worker processes (pgbench -j) [min(clients, cores)].")
@click.option("--duration", default=30.0, show_default=True, type=float,
              help="throughput: measured seconds per run.")
@click.option("--warmup", default=5.0, show_default=True, type=float,
              help="throughput: seconds run before measuring (not counted).")
@click.option("--mix", "mixes", default="read-only,read-write", show_default=True,
              help="throughput: read-only, read-write, ycsb-a, ycsb-b, ycsb-c, ycsb-f (comma-separated).")
@click.option("--rate", default=None, type=float,
              help="throughput: target operations per second in all (Poisson schedule; latency "
                   "measured from each operation's intended start).")
@click.option("--progress", "progress_s", default=5.0, show_default=True, type=float,
              help="throughput: seconds between progress lines.")
@click.option("--scenario", "scenarios", default="cpu", show_default=True,
              help="throughput: cpu (data in cache) and/or io (engine cache small, page cache capped).")
@click.option("--no-ceiling", is_flag=True, help="throughput: skip the driver-ceiling measurement.")
@click.option("--no-native", is_flag=True,
              help="throughput: skip the system's native tool reference (pgbench).")
@system_url_options
def run(workload: str, system_names: str | None, scale: str | None, data_dir: Path | None,
        results_dir: Path | None, tries: int, timeout: float, variants: str | None, resume: bool,
        no_restart: bool, rows: str, sizes: str, entropy: str, update_docs: str, update_ops: int,
        update_distribution: str | None, clients: str, processes: int | None, duration: float,
        warmup: float, mixes: str, rate: float | None, progress_s: float, scenarios: str,
        no_ceiling: bool, no_native: bool, **system_urls: str | None) -> None:
    """Run a workload on the chosen systems and write one result file per run."""
    if workload == "throughput":
        from docbench.workloads.throughput.runner import (
            ThroughputRequest,
            parse_clients,
            run_throughput,
        )

        raise SystemExit(run_throughput(ThroughputRequest(
            system_names=_split(system_names), variants=_split(variants),
            docs=parse_count(update_docs), clients=parse_clients(clients), processes=processes,
            duration_s=duration, warmup_s=warmup, mixes=_split(mixes) or [],
            distribution=update_distribution or "uniform", rate=rate, interval_s=progress_s,
            scenarios=_split(scenarios) or ["cpu"], results_dir=results_dir or paths.results_dir(),
            urls=_urls(system_urls), ceiling=not no_ceiling, native=not no_native, resume=resume)))
    if workload == "updates":
        from docbench.workloads.updates.runner import run_updates

        raise SystemExit(run_updates(
            _split(system_names), docs=update_docs, ops=update_ops,
            distributions=_split(update_distribution or "uniform,zipfian"),
            results_dir=results_dir or paths.results_dir(),
            variants=_split(variants), urls=_urls(system_urls)))
    if workload == "storage":
        from docbench.workloads.storage.runner import StorageRequest, run_storage

        raise SystemExit(run_storage(StorageRequest(
            system_names=_split(system_names), results_dir=results_dir or paths.results_dir(),
            rows=parse_count(rows), sizes=[parse_count(v) for v in _split(sizes) or []],
            entropies=_split(entropy) or [], variants=_split(variants), resume=resume,
            urls=_urls(system_urls))))
    from docbench.workloads.analytics.runner import RunRequest, run_analytics

    if scale and data_dir:
        raise click.UsageError("--scale and --data are exclusive")
    request = RunRequest(
        system_names=_split(system_names),
        scale=scale,
        data_dir=data_dir,
        results_dir=results_dir or paths.results_dir(),
        tries=tries,
        timeout=timeout,
        variants=_split(variants),
        resume=resume,
        restart_for_cold=not no_restart,
        urls=_urls(system_urls),
    )
    raise SystemExit(run_analytics(request))


@main.command()
@click.option("--results", "results_dirs", type=click.Path(path_type=Path), multiple=True)
@click.option("--html", "html_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Write the dashboard: one self-contained HTML file (works offline).")
@click.option("--plots", "plots_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Write the charts as PNG files into this directory.")
def report(results_dirs: tuple[Path, ...], html_file: Path | None, plots_dir: Path | None) -> None:
    """Compare what is in the results directory (in the terminal, or as --html / --plots)."""
    dirs = list(results_dirs) or [paths.results_dir()]
    if html_file is None and plots_dir is None:
        from docbench.report.terminal import print_all_reports

        print_all_reports(dirs)
        return
    if html_file is not None:
        from docbench.report.html import write_dashboard

        written, runs = write_dashboard(dirs, html_file)
        click.echo(f"dashboard of {runs} analytics results: {written}")
    if plots_dir is not None:
        from docbench.report.plots import write_plots

        files = write_plots(dirs, plots_dir)
        click.echo(f"{len(files)} charts in {plots_dir}")
        for path in files:
            click.echo(f"  {path.name}")


@main.command("import-jsonbench")
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True))
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Where to write the docbench result files (default: results/imported/).")
def import_jsonbench(sources: tuple[Path, ...], out_dir: Path | None) -> None:
    """Import JSONBench result files (or directories of them) as docbench results.

    They are marked as measured on another machine (tag `imported`, variant imported-<machine>)
    and their answers as unchecked, so the reports show them beside local results.
    """
    from docbench.report.jsonbench_import import import_files

    out = out_dir or paths.results_dir() / "imported"
    written, skipped = import_files(list(sources), out)
    for path, reason in skipped:
        click.echo(f"skipped {path}: {reason}", err=True)
    for path in written:
        click.echo(f"imported {path}")
    click.echo(f"{len(written)} JSONBench results imported into {out}")
    if not written:
        raise SystemExit(1)


@main.group()
def bench() -> None:
    """Benchmarks of docbench itself (generator, oracle, loader overhead)."""


@bench.command("generate")
@click.option("--docs", default="1m", show_default=True)
@click.option("--jobs", default=2, show_default=True, type=int)
def bench_generate(docs: str, jobs: int) -> None:
    """Print generator and oracle throughput and peak memory."""
    from docbench.dataset.bench import bench_dataset_tools

    bench_dataset_tools(parse_count(docs), jobs=jobs)


@bench.command("load")
@click.option("--systems", "system_names", default=None)
@click.option("--scale", default="1m", show_default=True)
@click.option("--data", "data_dir", type=click.Path(path_type=Path, exists=True), default=None)
def bench_load(system_names: str | None, scale: str, data_dir: Path | None) -> None:
    """Compare docbench's load time with each system's native bulk load of the same files."""
    from docbench.workloads.analytics.loadbench import bench_load_overhead

    bench_load_overhead(_split(system_names), scale=scale, data_dir=data_dir)


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


if __name__ == "__main__":
    main()
