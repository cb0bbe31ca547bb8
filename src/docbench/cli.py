"""The ``docbench`` command line: thin shells over the modules that do the work.

`docbench run <workload>` gets one subcommand per registered workload (each with only its own
options); `docbench run` alone, or with options only, is `docbench run analytics`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from docbench.core import paths
from docbench.core.units import parse_count
from docbench.workloads import DEFAULT, all_workloads
from docbench.workloads.options import directory_option, file_option, verify_option


def _count(_ctx: click.Context, _param: click.Parameter, value: str | None) -> int | None:
    if value is None:
        return None  # (an option without a default, not given)
    try:
        number = parse_count(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None
    if number < 1:
        raise click.BadParameter("must be at least 1")
    return number


class WorkloadGroup(click.Group):
    """`docbench run [WORKLOAD] [OPTIONS]`: the workload defaults to analytics; the older
    spelling `--workload NAME` still selects one."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        args = list(args)
        named = False
        for index, arg in enumerate(args):
            if arg == "--workload" and index + 1 < len(args):
                args, named = [args[index + 1], *args[:index], *args[index + 2 :]], True
                break
            if arg.startswith("--workload="):
                args, named = [arg.split("=", 1)[1], *args[:index], *args[index + 1 :]], True
                break
        if not named and (not args or (args[0] not in self.commands and args[0] not in ("--help", "-h"))):
            args.insert(0, DEFAULT)
        return super().parse_args(ctx, args)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """`docbench run --help` also lists the default workload's options, since `docbench run
        --scale 1m ...` runs it: what the help shows is what the command takes."""
        super().format_options(ctx, formatter)
        default = self.commands[DEFAULT]
        rows = [row for param in default.get_params(ctx) if (row := param.get_help_record(ctx))]
        with formatter.section(f"Options of `docbench run {DEFAULT}` (the default workload)"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> object:
        """Problems the user can fix become one-line messages, not tracebacks."""
        from docbench.results import ResultsUnwritable

        try:
            return super().invoke(ctx)
        except ResultsUnwritable as error:
            raise click.ClickException(f"{error} (give another with --results)") from None


@click.group()
@click.version_option(package_name="docbench")
def main() -> None:
    """docbench: load the same JSON documents into many datastores and compare them."""


@main.command()
@click.option(
    "--docs",
    "docs",
    required=True,
    callback=_count,
    help="Number of documents: 1m, 10m, 100m, 1000m, 20k, ...",
)
@click.option("--out", "out", type=click.Path(path_type=Path, file_okay=False), required=True)
@click.option("--seed", default=1, show_default=True, type=int)
@click.option(
    "--jobs", default=1, show_default=True, type=click.IntRange(min=1), help="Files generated in parallel."
)
@click.option("--compress", type=click.Choice(["none", "gzip", "zstd"]), default="none", show_default=True)
@click.option(
    "--dirty-rate",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Share of invalid lines mixed in (truncated JSON, invalid UTF-8, empty lines).",
)
@click.option(
    "--hard-rate",
    default=None,
    type=click.FloatRange(0, 1),
    help="Share of valid-but-hard documents (default: the generator's documented rate).",
)
@click.option("--files", default=None, help="Generate only these file numbers (e.g. 1,3-5).")
@click.option(
    "--shape",
    default=None,
    help="Documents of another shape instead of Bluesky events: a preset of `docbench-gen shapes` "
    "(logs, catalogue, telemetry, deep), one file, for `docbench profile` and `--queries`.",
)
def generate(
    docs: int,
    out: Path,
    seed: int,
    jobs: int,
    compress: str,
    dirty_rate: float,
    hard_rate: float | None,
    files: str | None,
    shape: str | None,
) -> None:
    """Generate Bluesky Jetstream events in JSONBench's file layout (or, with --shape,
    documents of another shape)."""
    from docbench.dataset.generate import generate_dataset

    if shape is not None:
        from docbench.dataset.shapes import Shape, generate_shapes, presets

        if shape not in presets():
            raise click.BadParameter(
                f"{shape!r}: known presets are {', '.join(presets())}", param_hint="--shape"
            )
        summary = generate_shapes(Shape(preset=shape), docs, out, seed=seed)
        click.echo(f"{docs:,} documents of shape {shape} ({summary.get('knobs')}) -> {out}")
        return
    generate_dataset(
        docs,
        out,
        seed=seed,
        jobs=jobs,
        compress=compress,
        dirty_rate=dirty_rate,
        hard_rate=hard_rate,
        only_files=files,
    )


@main.command()
@click.argument("data_dir", type=click.Path(path_type=Path, exists=True))
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(min=1))
@click.option("--refresh", is_flag=True, help="Ignore a cached answers.json.")
@verify_option
def answers(data_dir: Path, jobs: int, refresh: bool, verify: str) -> None:
    """Compute the exact answers of Q1-Q5 for a directory of ndjson files (no database)."""
    from docbench.dataset.oracle import answers_command

    answers_command(data_dir, jobs=jobs, refresh=refresh, verify_full=verify == "full")


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
    from docbench.systems import UnknownSystem

    try:
        raise SystemExit(setup_systems(list(names)))
    except UnknownSystem as error:
        raise click.BadParameter(str(error), param_hint="NAMES") from None


@main.group(cls=WorkloadGroup)
def run() -> None:
    """Run a workload on the chosen systems; one new result file per (system, variant) run.

    `docbench run` alone runs the analytics workload. `docbench run WORKLOAD --help` lists a
    workload's options."""


def _holding_the_run_lock(callback: Callable[..., Any]) -> Callable[..., Any]:
    """Every `docbench run <workload>` holds the work directory's run lock (one run at a time
    per DOCBENCH_HOME); taken here, once, so that a new workload has it too."""

    @functools.wraps(callback)
    def locked(*args: Any, **kwargs: Any) -> Any:
        from docbench.core import runlock

        with runlock.hold(paths.work_dir()):
            return callback(*args, **kwargs)

    return locked


for _workload in all_workloads():
    _command = _workload.command()
    if _command.callback is not None:  # (each workload's command has one)
        _command.callback = _holding_the_run_lock(_command.callback)
    run.add_command(_command, _workload.name)


@main.command()
@click.option(
    "--results",
    "results_dirs",
    type=click.Path(path_type=Path),
    multiple=True,
    help="A results directory or result file; repeat it to read several together (e.g. analytics "
    "results and fidelity results, whose `lossless` labels join them) [results/].",
)
@file_option("--html", "html_file", help="Write the dashboard: one self-contained HTML file (works offline).")
@directory_option("--plots", "plots_dir", help="Write the charts as PNG files into this directory.")
@click.option(
    "--markdown",
    is_flag=True,
    help="Print the report's tables as Markdown (what the results READMEs hold between their "
    "`generated by` markers).",
)
@click.option(
    "--table",
    "tables",
    multiple=True,
    metavar="WORD",
    help="With --markdown: only the tables whose title holds WORD (case-insensitive); repeatable.",
)
def report(
    results_dirs: tuple[Path, ...],
    html_file: Path | None,
    plots_dir: Path | None,
    markdown: bool,
    tables: tuple[str, ...],
) -> None:
    """Compare what is in the results directory (in the terminal, or as --markdown / --html /
    --plots)."""
    dirs = list(results_dirs) or [paths.results_dir()]
    if markdown:
        from docbench.report.markdown import report_markdown

        click.echo(report_markdown(dirs, tables), nl=False)
        return
    if html_file is None and plots_dir is None:
        from docbench.report.terminal import print_all_reports

        print_all_reports(dirs)
        return
    if html_file is not None:
        from docbench.report.html import write_dashboard

        written, shown = write_dashboard(dirs, html_file)
        counts = ", ".join(f"{count} {workload} results" for workload, count in shown.items())
        click.echo(f"dashboard of {counts or 'no results'}: {written}")
    if plots_dir is not None:
        from docbench.report.plots import write_plots

        files = write_plots(dirs, plots_dir)
        click.echo(f"{len(files)} charts in {plots_dir}")
        for path in files:
            click.echo(f"  {path.name}")


@main.command()
@click.argument("results_root", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
def site(results_root: Path, out: Path) -> None:
    """Write the published results under RESULTS_ROOT as one static site in OUT.

    OUT/index.html is the dashboard over every result (with each result set's files and the
    commands that made them), OUT/sets/NAME.html each result directory's own dashboard,
    OUT/findings/SLUG.html one page per finding (the figures computed from the result files,
    the files read, the command that made them), OUT/jsonbench.html the comparison with
    JSONBench's published figures, and OUT/results/ a copy of RESULTS_ROOT that the pages link
    to. Nothing is fetched and every link is relative: it works from file://. For the
    repository's results: `.venv/bin/docbench site docs/results site/` (docs/findings.md).
    """
    from docbench.report.site import write_site

    pages, seconds = write_site(results_root, out)
    click.echo(f"{len(pages)} pages in {out} ({seconds:.1f} s); open {out / 'index.html'}")


@main.command()
@click.argument("data_dir", metavar="DATA", type=click.Path(path_type=Path, exists=True, file_okay=False))
@file_option(
    "--out", help="Write the proposed query set here [DATA's name + .queries.yaml in the current directory]."
)
@click.option(
    "--sample",
    default=200_000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Documents read (an equal share from each file); distinct counts are exact within it.",
)
def profile(data_dir: Path, out: Path | None, sample: int) -> None:
    """What the documents hold, path by path (types, presence, distinct values, arrays,
    times), and a proposed query set for `docbench run --data DATA --queries FILE`."""
    from docbench.dataset.reader import dataset_files
    from docbench.queries.profile import profile_files, propose_queries, write_query_set
    from docbench.report.profile import print_profile

    files = dataset_files(data_dir)
    if not files:
        raise click.UsageError(f"no ndjson files in {data_dir}")
    found = profile_files(files, sample)
    if not found.documents:
        raise click.UsageError(f"{data_dir}: no line is a JSON object")
    name = data_dir.resolve().name
    proposal = propose_queries(found, name)
    target = out or Path(f"{name}.queries.yaml")
    write_query_set(proposal, target)
    print_profile(found)
    click.echo(
        f"proposed {len(proposal['queries'])} queries: {target} (edit, then run with --queries {target})"
    )


@main.command("import-jsonbench")
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True))
@directory_option(
    "--out", "out_dir", help="Where to write the docbench result files (default: results/imported/)."
)
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


def _threshold(_ctx: click.Context, _param: click.Parameter, value: str) -> float:
    from docbench.report.compare.command import parse_threshold

    try:
        return parse_threshold(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


@main.command()
@click.argument(
    "sets", nargs=-1, type=click.Path(path_type=Path, exists=True), metavar="[BASELINE] CONTENDER"
)
@click.option(
    "--against",
    type=click.Choice(["jsonbench"]),
    default=None,
    help="Compare CONTENDER with JSONBench's published results (shipped with docbench: their "
    "commit and date are in the output) instead of a BASELINE path.",
)
@click.option(
    "--threshold",
    default="10%",
    show_default=True,
    metavar="PERCENT",
    callback=_threshold,
    help="Flag a ratio above 1 + this or below 1 / (1 + this): a size or count as is, a time "
    "only when its samples (hot tries, throughput intervals) also differ beyond the noise "
    "(Welch's t-test on log times, p < 0.05); a time with fewer than 2 samples a side has no "
    "noise estimate and is never flagged.",
)
@click.option(
    "--noise-floor",
    default="5%",
    show_default=True,
    metavar="PERCENT",
    callback=_threshold,
    help="The run-to-run spread of a time that the tries of one run cannot show (another "
    "process, the machine minutes later), added to each side's noise; scripts/aa-noise.py "
    "measures it on a machine from A/A pairs of runs.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON (docs/compare.md).")
@file_option(
    "--html", "html_file", help="Also write it as a self-contained HTML page (the dashboard's Compare view)."
)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 when a flagged ratio is worse (bigger, slower, fewer documents, a figure "
    "lost); for CI. (Nothing matched exits 1 with or without it.)",
)
def compare(
    sets: tuple[Path, ...],
    against: str | None,
    threshold: float,
    noise_floor: float,
    as_json: bool,
    html_file: Path | None,
    fail_on_regression: bool,
) -> None:
    """Compare two sets of results figure by figure: BASELINE and CONTENDER are result
    directories or files (docbench's or JSONBench's).

    Results are matched by workload, system, variant, scale and cluster shape (a Bluesky
    dataset of N documents is the scale of N whatever its seed or directory); each figure
    gets the ratio contender / baseline (documents loaded, total/data/index bytes and bytes
    per document, load time, cold and hot time per query; TPS and latency percentiles), and a
    warning says wherever the two differ in what they measured (data, seed, variant settings,
    engine version, machine). Exit status: 0; 1 with --fail-on-regression (see there) or when
    nothing matched (each contender result is then set against the closest baseline one); 2
    for a usage error. The noise model: docs/compare.md.
    """
    from docbench.report.compare.command import NoiseModel, run, sides
    from docbench.report.compare.command import compare as compare_sets

    try:
        baseline, contender = sides(list(sets), against)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    comparison = compare_sets(baseline, contender, threshold, NoiseModel(floor=noise_floor))
    raise SystemExit(run(comparison, as_json, html_file, fail_on_regression))


@main.group()
def bench() -> None:
    """Benchmarks of docbench itself (generator, oracle, loader overhead)."""


@bench.command("generate")
@click.option("--docs", default="1m", show_default=True, callback=_count)
@click.option("--jobs", default=2, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--faithfulness",
    "faithfulness_scale",
    default=None,
    callback=_count,
    metavar="SCALE",
    help="Instead: generate SCALE documents (e.g. 100m) into pipes the oracle's "
    "scanner reads (nothing on disk) and print them against the real stream's "
    "published figures.",
)
def bench_generate(docs: int, jobs: int, faithfulness_scale: int | None) -> None:
    """Print generator and oracle throughput and peak memory (or, with --faithfulness, the
    generated stream at that scale against the real one)."""
    if faithfulness_scale is not None:
        from docbench.dataset.faithfulness_scale import print_faithfulness

        print_faithfulness(faithfulness_scale, jobs=jobs)
        return
    from docbench.dataset.bench import bench_dataset_tools

    bench_dataset_tools(docs, jobs=jobs)


@bench.command("oracle")
@click.option("--data", "data_dir", required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--queries",
    "queries",
    default="jsonbench",
    show_default=True,
    help="A portable query file, or a shipped set's name.",
)
@click.option("--only", default=None, help="Comma-separated query names of the set to keep (e.g. q1,q2,q3).")
@click.option("--jobs", default=2, show_default=True, type=click.IntRange(min=1))
@click.option("--runs", default=3, show_default=True, type=click.IntRange(min=1))
@click.option("--python/--no-python", default=True, show_default=True, help="Also time Python alone, once.")
def bench_oracle_command(
    data_dir: Path, queries: str, only: str | None, jobs: int, runs: int, python: bool
) -> None:
    """Print the portable oracle's documents/s over DATA (native scan, then Python alone)."""
    import dataclasses

    from docbench.core.console import report_console
    from docbench.queries.bench import bench_oracle
    from docbench.queries.spec import load_query_set, shipped_query_set

    query_set = shipped_query_set(queries) or load_query_set(Path(queries))
    if only:
        names = set(only.split(","))
        kept = tuple(q for q in query_set.queries if q.name in names)
        if not kept:
            raise click.BadParameter(f"none of {sorted(names)} is in {query_set.name}", param_hint="--only")
        query_set = dataclasses.replace(query_set, queries=kept)
    bench_oracle(data_dir, query_set, jobs, runs, report_console(), python=python)


for _workload in all_workloads():
    for _command in _workload.benches():
        bench.add_command(_command)
    for _command in _workload.commands():
        main.add_command(_command)

__all__ = ["main"]

if __name__ == "__main__":
    main()
