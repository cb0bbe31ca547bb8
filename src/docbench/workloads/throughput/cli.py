"""`docbench run throughput`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from docbench.contracts.mixes import MIXES
from docbench.workloads.options import (
    FiniteFloat,
    check_variants,
    choices,
    count_list,
    count_type,
    directory_option,
    file_option,
    io_limit_option,
    list_callback,
    results_dir_or_default,
    system_options,
    systems_callback,
    urls_from,
)

SCENARIOS = ("cpu", "io")
IO_PROBE_KINDS = ("read-direct", "write-direct", "write-fsync", "write-flusher")
CLIENT_LOOPS = ["auto", "compiled", "multiplexed", "threads"]


def command() -> click.Command:
    @click.command("throughput")
    @system_options
    @click.option(
        "--docs",
        default="100k",
        show_default=True,
        callback=count_type(1),
        help="YCSB documents loaded before the runs.",
    )
    @click.option(
        "--clients",
        default="1,8,32",
        show_default=True,
        callback=count_list(1),
        help="Concurrent clients, one connection each (comma-separated list).",
    )
    @click.option(
        "--processes",
        "--threads",
        "processes",
        default=None,
        type=click.IntRange(min=1),
        help="Client worker processes (pgbench -j) [min(clients, cores)].",
    )
    @click.option(
        "--duration",
        default=30.0,
        show_default=True,
        type=FiniteFloat(min=0, min_open=True),
        help="Measured seconds per run.",
    )
    @click.option(
        "--warmup",
        default=5.0,
        show_default=True,
        type=FiniteFloat(min=0),
        help="Seconds run before measuring (not counted).",
    )
    @click.option(
        "--mix",
        "mixes",
        default="read-only,read-write",
        show_default=True,
        callback=choices(list(MIXES)),
        help=f"Operation mixes: {', '.join(MIXES)}.",
    )
    @click.option(
        "--distribution",
        default="uniform",
        show_default=True,
        type=click.Choice(["uniform", "zipfian"]),
        help="Key distribution.",
    )
    @click.option(
        "--rate",
        default=None,
        type=FiniteFloat(min=0, min_open=True),
        help="Target operations per second in all (Poisson schedule; latency measured "
        "from each operation's intended start).",
    )
    @click.option(
        "--progress",
        "progress_s",
        default=5.0,
        show_default=True,
        type=FiniteFloat(min=0, min_open=True),
        help="Seconds between progress lines.",
    )
    @click.option(
        "--scenario",
        "scenarios",
        default="cpu",
        show_default=True,
        callback=choices(SCENARIOS),
        help="cpu (data in cache) and/or io (engine cache small, page cache capped).",
    )
    @io_limit_option
    @click.option("--no-ceiling", is_flag=True, help="Skip the driver-ceiling measurement.")
    @click.option("--no-native", is_flag=True, help="Skip the system's native tool reference (pgbench).")
    @click.option(
        "--client-loop",
        type=click.Choice(CLIENT_LOOPS),
        default="auto",
        show_default=True,
        help="auto: compiled (docbench-client, Rust) where the system offers it, else "
        "multiplexed (a worker's clients on one Python thread over non-blocking "
        "connections) where its sessions allow it, else threads (a thread per "
        "client); or one of the three, to compare them.",
    )
    def throughput(
        system_names: list[str] | None,
        variants: list[str] | None,
        results_dir: Path | None,
        resume: bool,
        docs: int,
        clients: list[int],
        processes: int | None,
        duration: float,
        warmup: float,
        mixes: list[str],
        distribution: str,
        rate: float | None,
        progress_s: float,
        scenarios: list[str],
        io_limit: Any,
        no_ceiling: bool,
        no_native: bool,
        client_loop: str,
        **urls: Any,
    ) -> None:
        """pgbench-style concurrent clients on every system's point operations: TPS, latency
        percentiles (HdrHistogram), count checks, the driver's ceiling, the native tool beside."""
        from docbench.workloads.throughput.runner import ThroughputRequest, run_throughput

        check_variants("updates", system_names, variants)
        raise SystemExit(
            run_throughput(
                ThroughputRequest(
                    system_names=system_names,
                    variants=variants,
                    docs=docs,
                    clients=clients,
                    processes=processes,
                    duration_s=duration,
                    warmup_s=warmup,
                    mixes=mixes,
                    distribution=distribution,
                    rate=rate,
                    interval_s=progress_s,
                    scenarios=scenarios,
                    results_dir=results_dir_or_default(results_dir),
                    urls=urls_from(urls),
                    ceiling=not no_ceiling,
                    native=not no_native,
                    resume=resume,
                    client_loop=client_loop,
                    io_limit=io_limit,
                )
            )
        )

    return throughput


def native_tool_systems() -> list[str]:
    """The systems that run by default and bring a native tool (their throughput.py)."""
    from docbench.systems import REGISTERED, adapter_module, engine_class

    return [
        name
        for name in REGISTERED
        if engine_class(name).runs_by_default and adapter_module(name, "throughput") is not None
    ]


def bench_commands() -> list[click.Command]:
    @click.command("throughput")
    @click.option(
        "--systems",
        "system_names",
        default=None,
        callback=systems_callback,
        help="Systems (those with a native tool get the ratio) [the systems that run "
        "by default and have a native tool].",
    )
    @click.option(
        "--variants",
        default=None,
        callback=list_callback,
        help="Comma-separated variants [each system's first].",
    )
    @click.option("--docs", default="100k", show_default=True, callback=count_type(1))
    @click.option("--clients", default="1,8,32", show_default=True, callback=count_list(1))
    @click.option("--scenario", "scenarios", default="cpu,io", show_default=True, callback=choices(SCENARIOS))
    @click.option(
        "--mix", "mixes", default="read-only,read-write", show_default=True, callback=choices(list(MIXES))
    )
    @click.option("--duration", default=20.0, show_default=True, type=FiniteFloat(min=1))
    @click.option("--warmup", default=5.0, show_default=True, type=FiniteFloat(min=0))
    @click.option(
        "--repeat",
        default=2,
        show_default=True,
        type=click.IntRange(min=1),
        help="Rounds of the whole table, alternating which tool runs first in each "
        "cell (the ratio column shows their spread).",
    )
    @click.option(
        "--client-loop",
        type=click.Choice(CLIENT_LOOPS),
        default="auto",
        show_default=True,
        help="The driver's client loop (see `docbench run throughput --help`).",
    )
    @io_limit_option
    @directory_option("--results", "results_dir", help="Where the runs' result files go [results/].")
    def bench_throughput(
        system_names: list[str],
        variants: list[str] | None,
        docs: int,
        clients: list[int],
        scenarios: list[str],
        mixes: list[str],
        duration: float,
        warmup: float,
        repeat: int,
        client_loop: str,
        io_limit: Any,
        results_dir: Path | None,
    ) -> None:
        """docbench's throughput driver against the native tool (pgbench) cell by cell:
        TPS of both, their ratio and the CPU each spent per operation, and the driver's
        no-op ceiling against the best engine figure (under --io-limit, the throttle on the
        server's processes, as in `docbench run throughput`)."""
        from docbench.core import paths, runlock
        from docbench.core.console import report_console
        from docbench.workloads.throughput.bench import bench_throughput as run_bench
        from docbench.workloads.throughput.runner import ThroughputRequest

        system_names = system_names or native_tool_systems()
        check_variants("updates", system_names, variants)
        request = ThroughputRequest(
            system_names=system_names,
            variants=variants,
            docs=docs,
            clients=clients,
            duration_s=duration,
            warmup_s=warmup,
            mixes=mixes,
            scenarios=scenarios,
            results_dir=results_dir_or_default(results_dir),
            client_loop=client_loop,
            native_builtin=False,
            io_limit=io_limit,
        )
        with runlock.hold(paths.work_dir()):
            raise SystemExit(run_bench(request, repeat, report_console()))

    return [bench_throughput, bench_io_limit()]


def bench_io_limit() -> click.Command:
    @click.command("io-limit")
    @click.option(
        "--iops",
        "limits",
        default="200,1000,3000",
        show_default=True,
        callback=count_list(1),
        help="Limits to measure (IOPS; comma-separated).",
    )
    @click.option(
        "--seconds",
        default=20.0,
        show_default=True,
        type=FiniteFloat(min=1),
        help="What each throttled dd should take: it moves limit x seconds blocks of 4 KiB.",
    )
    @click.option(
        "--kinds",
        default=",".join(IO_PROBE_KINDS),
        show_default=True,
        callback=choices(list(IO_PROBE_KINDS)),
        help="Kinds of IO measured.",
    )
    @directory_option(
        "--dir",
        "directory",
        help="Where the 1 GiB probe file goes (its disk is the one measured) [the work directory].",
    )
    @file_option("--json", "json_path", help="Also write the figures there as JSON.")
    def bench_io_limit_command(
        limits: list[int], seconds: float, kinds: list[str], directory: Path | None, json_path: Path | None
    ) -> None:
        """How precisely the block-IO throttle of --io-limit holds here: dd under read/write
        IOPS limits (direct IO, buffered with fsync, buffered written back by the kernel),
        the IOPS the disk completed (/proc/diskstats) against the limit asked. Needs root."""
        import json

        from docbench.core import iolimit, paths
        from docbench.workloads.throughput import ioprobe

        where = directory or paths.work_dir() / "io-probe"
        problem = iolimit.refusal(where)
        if problem:
            raise click.ClickException(problem)
        try:
            document = ioprobe.run_probes(where, limits, seconds, tuple(kinds), say=click.echo)
        finally:
            (where / "io-probe.bin").unlink(missing_ok=True)
        if json_path is not None:
            json_path.write_text(json.dumps(document, indent=2) + "\n")

    return bench_io_limit_command
