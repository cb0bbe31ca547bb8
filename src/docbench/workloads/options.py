"""CLI options that several workloads share, validated before anything runs."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from docbench.contracts.cluster import (
    KILL_NODE_ENV,
    NODES_ENV,
    REPLICAS_ENV,
    SHARDS_ENV,
    parse_kill,
    requested_kill,
    requested_shape,
)
from docbench.core import paths
from docbench.core.jsontypes import as_str
from docbench.core.ownership import protect_directory
from docbench.core.units import parse_count
from docbench.systems import REGISTERED, UnknownSystem, all_engines, check_names, engine_class


def split_list(value: str | None) -> list[str] | None:
    """The items of a comma-separated option value (None: not given). An empty item (``1,,2``,
    a trailing comma, an empty value) or an item given twice is refused (click.BadParameter):
    either is a typo, and dropping or repeating it silently would run something else than
    what was asked."""
    if value is None:
        return None
    items = [item.strip() for item in value.split(",")]
    if not any(items):
        raise click.BadParameter(f"{value!r}: give at least one value")
    empty = next((number for number, item in enumerate(items, 1) if not item), None)
    if empty is not None:
        raise click.BadParameter(f"{value!r}: item {empty} is empty (a stray comma?)")
    _refuse_repeats(value, items)
    return items


def _refuse_repeats(value: str, items: list[Any]) -> None:
    seen: set[Any] = set()
    for item in items:
        if item in seen:
            raise click.BadParameter(f"{value!r}: {item} is given twice")
        seen.add(item)


def list_callback(_ctx: click.Context, _param: click.Parameter, value: str | None) -> list[str] | None:
    """``split_list`` as a click callback (a plain comma-separated option, e.g. --variants)."""
    return split_list(value)


class FiniteFloat(click.FloatRange):
    """A FloatRange that also refuses nan and inf (which pass every bound): a duration of
    ``inf`` never ends, one of ``nan`` compares false with everything."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def systems_callback(_ctx: click.Context, _param: click.Parameter, value: str | None) -> list[str] | None:
    names = split_list(value)
    if names:
        try:
            check_names(names)
        except UnknownSystem as error:
            raise click.BadParameter(str(error)) from None
    _check_cluster_systems(names)
    return names


def _cluster_systems() -> list[str]:
    return [engine.name for engine in all_engines() if engine.runs_as_cluster]


def _check_cluster_systems(names: list[str] | None) -> None:
    """--nodes above 1 (or --shards/--replicas) only for systems that run as a cluster."""
    shape = requested_shape()
    asked = (
        shape.nodes > 1
        or shape.shards is not None
        or shape.replicas is not None
        or requested_kill() is not None
    )
    if not asked:
        return
    clusters = _cluster_systems()
    if requested_kill() is not None and shape.nodes < 2:
        raise click.BadParameter("--kill-node needs a managed cluster: give --nodes 2 or more")
    if not names:
        raise click.BadParameter(
            f"--nodes/--shards/--replicas/--kill-node need --systems naming "
            f"systems that run as a cluster ({', '.join(clusters)})"
        )
    if requested_kill() is not None:
        unkillable = [name for name in names if not engine_class(name).kills_nodes]
        if unkillable:
            raise click.BadParameter(
                f"--kill-node: docbench cannot kill a node of {', '.join(unkillable)} "
                f"(it can for {', '.join(e.name for e in all_engines() if e.kills_nodes)})"
            )
    single = [name for name in names if name not in clusters]
    if single:
        raise click.BadParameter(
            f"{', '.join(single)} cannot run as a cluster here "
            f"(--nodes/--shards/--replicas apply to {', '.join(clusters)})"
        )


def _export(variable: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """Put the option's value into the environment, where every process of the run (load and
    query workers) reads it; an option not given clears it."""

    def callback(_ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
        if value is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = str(value)
        return value

    return callback


def _kill_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value:
        try:
            parse_kill(value)
        except ValueError as error:
            raise click.BadParameter(str(error)) from None
    return _export(KILL_NODE_ENV)(ctx, param, value)


def cluster_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--nodes, --shards, --replicas, --kill-node (processed before --systems, which checks
    that the systems can run as a cluster)."""
    command = click.option(
        "--kill-node",
        default=None,
        metavar="PHASE[@S]",
        expose_value=False,
        is_eager=True,
        callback=_kill_callback,
        help="Fault injection on a managed cluster: SIGKILL one node S seconds (default 5) "
        "after PHASE (load or queries) started; the result records what the cluster went "
        "through.",
    )(command)
    command = click.option(
        "--replicas",
        type=click.IntRange(min=0),
        default=None,
        expose_value=False,
        is_eager=True,
        envvar=REPLICAS_ENV,
        callback=_export(REPLICAS_ENV),
        help="Replicas of each index [1 on several nodes, else 0].",
    )(command)
    command = click.option(
        "--shards",
        type=click.IntRange(min=1),
        default=None,
        expose_value=False,
        is_eager=True,
        envvar=SHARDS_ENV,
        callback=_export(SHARDS_ENV),
        help="Primary shards of each index [the number of nodes].",
    )(command)
    command = click.option(
        "--nodes",
        type=click.IntRange(min=1),
        default=None,
        expose_value=False,
        is_eager=True,
        envvar=NODES_ENV,
        callback=_export(NODES_ENV),
        help="Start a cluster of this many nodes on 127.0.0.1 (systems that run as a "
        "cluster: Elasticsearch, OpenSearch; Spark: a standalone master and this many "
        "workers, local mode without it) [1].",
    )(command)
    return command


def count_type(minimum: int = 0) -> Callable[[click.Context, click.Parameter, Any], int]:
    def convert(_ctx: click.Context, _param: click.Parameter, value: Any) -> int:
        try:
            number = parse_count(value)
        except ValueError as error:
            raise click.BadParameter(str(error)) from None
        if number < minimum:
            raise click.BadParameter(f"must be at least {minimum}")
        return number

    return convert


def count_list(minimum: int = 1) -> Callable[[click.Context, click.Parameter, Any], list[int]]:
    convert = count_type(minimum)

    def convert_list(ctx: click.Context, param: click.Parameter, value: Any) -> list[int]:
        values = [convert(ctx, param, part) for part in split_list(value) or []]
        if not values:
            raise click.BadParameter("give at least one value")
        _refuse_repeats(value, values)  # 1000,1k: the same count twice
        return values

    return convert_list


def _warn_password_in_argv(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A password typed on the command line is visible to every user in `ps`: say so, with the
    ways that keep it out (the option's environment variable, the clients' own files)."""
    from urllib.parse import urlsplit

    typed = param.name and ctx.get_parameter_source(param.name) == click.core.ParameterSource.COMMANDLINE
    if value and typed:
        try:
            has_password = bool(urlsplit(value).password)
        except ValueError:
            has_password = False
        if has_password:
            click.echo(
                f"warning: the password in --{str(param.name).replace('_', '-')} is visible to other "
                f"users in `ps`; give the URL as {param.envvar} instead, or leave the password "
                "out and use the client's own files (PGPASSWORD/.pgpass, MYSQL_PWD/~/.my.cnf)",
                err=True,
            )
    return value


def url_callback(several: bool) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
    """A --<system>-url's check (``several``: comma-separated node URLs): a password that
    would cut the URL elsewhere is refused with what to encode (the password never shown),
    before a client reports a host that is a piece of it; then the `ps` warning."""
    from docbench.core.redact import unencoded_userinfo

    def callback(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        for url in (value.split(",") if several else [value]) if value else []:
            problem = unencoded_userinfo(url.strip())
            if problem:
                raise click.BadParameter(problem)
        return _warn_password_in_argv(ctx, param, value)

    return callback


def system_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--systems, --variants, --results, --resume and every server's --<system>-url."""
    for engine in reversed(all_engines()):
        if engine.url_example:
            command = click.option(
                f"--{engine.name}-url",
                default=None,
                metavar="URL",
                show_envvar=True,
                callback=url_callback(engine.takes_node_urls),
                envvar=f"DOCBENCH_{engine.name.upper()}_URL",
                help=f"Run against this {engine.display_name} server (e.g. {engine.url_example}"
                f"{'; several node URLs comma-separated' if engine.takes_node_urls else ''}); "
                "docbench only touches its own database/index there.",
            )(command)
    command = click.option(
        "--resume",
        is_flag=True,
        help="Continue the latest run of each (system, variant, data) on this "
        "machine: skip it when complete, finish it when not.",
    )(command)
    command = directory_option(
        "--results", "results_dir", help="Results directory, not inside docbench's work directory [results/]."
    )(command)
    command = click.option(
        "--variants",
        default=None,
        callback=list_callback,
        help="Comma-separated variants (default: all of each system).",
    )(command)
    command = click.option(
        "--systems",
        "system_names",
        default=None,
        callback=systems_callback,
        help=f"Comma-separated systems ({', '.join(REGISTERED)}); default: every "
        "one that can run here without setup.",
    )(command)
    return cluster_options(command)


def urls_from(options: Mapping[str, object]) -> dict[str, str]:
    """The --<system>-url values given, by system name."""
    return {
        key.removesuffix("_url"): as_str(value, f"--{key.replace('_', '-')}")
        for key, value in options.items()
        if key.endswith("_url") and value
    }


def results_dir_or_default(value: Path | None) -> Path:
    """--results, else $DOCBENCH_RESULTS or results/: never inside docbench's work directory."""
    return kept_directory(value or paths.results_dir(), "--results")


def kept_directory(path: Path, option: str) -> Path:
    """A --data or --results directory, whose contents docbench never removes: refused
    inside docbench's work directory (whose directories docbench empties after each run)
    before anything runs, and protected from every cleanup of the run wherever it is."""
    work = paths.work_dir()
    if work == path.resolve() or work in path.resolve().parents:
        raise click.BadParameter(
            f"{path} is inside docbench's work directory {work}, which docbench empties after "
            "its runs: give a directory outside it (or set DOCBENCH_HOME to another place)",
            param_hint=f"'{option}'",
        )
    protect_directory(path)
    return path


def data_dir_callback(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    """--data: an existing directory outside docbench's work directory."""
    return None if value is None else kept_directory(value, "--data")


def choices(
    allowed: tuple[str, ...] | list[str],
) -> Callable[[click.Context, click.Parameter, str], list[str]]:
    """A comma-separated list whose every item is one of ``allowed``."""

    def convert(_ctx: click.Context, _param: click.Parameter, value: str) -> list[str]:
        names = split_list(value) or []
        unknown = [n for n in names if n not in allowed]
        if unknown or not names:
            raise click.BadParameter(f"one or more of {', '.join(allowed)} (got {value!r})")
        return names

    return convert


def check_variants(adapter_module: str, system_names: list[str] | None, variants: list[str] | None) -> None:
    """Refuse --variants naming no variant of the chosen systems (before anything runs)."""
    if not variants:
        return
    from docbench.systems import adapter_variants

    known = {v.name for name in system_names or REGISTERED for v in adapter_variants(name, adapter_module)}
    unknown = [v for v in variants if v not in known]
    if unknown:
        raise click.BadParameter(
            f"no such variant {', '.join(unknown)} for these systems (known: {', '.join(sorted(known))})",
            param_hint="--variants",
        )


VERIFY_ENV = "DOCBENCH_VERIFY"


def verify_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """--verify changed|full: which data files are read and checked before they are used
    (``full`` is the ``full`` argument of :func:`docbench.dataset.verify.verify_dataset`)."""
    return click.option(
        "--verify",
        "verify",
        type=click.Choice(["changed", "full"]),
        default="changed",
        show_default=True,
        show_envvar=True,
        envvar=VERIFY_ENV,
        help="Which data files are read and checked (SHA-256, compressed frames, dataset.json) "
        "before use: changed = those without a verification stamp or whose size, mtime, ctime, "
        "inode or device differ from it (the others are known unchanged since their check); "
        "full = every file again (e.g. for suspected bit rot).",
    )(command)


def _io_limit_callback(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Any:
    from docbench.core import iolimit

    if value is None:
        return None
    try:
        return iolimit.parse(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def io_limit_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """--io-limit: the block-IO throttle on the engine's processes (core/iolimit.py)."""
    from docbench.core.iolimit import PROFILES

    return click.option(
        "--io-limit",
        "io_limit",
        default=None,
        metavar="LIMITS|PROFILE",
        callback=_io_limit_callback,
        help="Throttle the engine's disk IO like capped cloud storage: "
        "read_iops=N,write_iops=N,read_bps=SIZE,write_bps=SIZE (any of them) or a profile "
        f"({', '.join(PROFILES)}: AWS EBS figures), with the cgroup block-IO throttle on the "
        "disk of its data directory. Needs root; recorded in the result. Buffered writes the "
        "kernel writes back later are not throttled under cgroup v1.",
    )(command)


def directory_option(*names: str, help: str, required: bool = False) -> Callable[[Any], Any]:
    """An option naming a directory (e.g. `--results`, `--dir`, `--plots`): a Path, None when
    not given. Every command declares its directories with it, so they parse alike."""
    return click.option(
        *names, type=click.Path(path_type=Path, file_okay=False), default=None, required=required, help=help
    )


def file_option(*names: str, help: str) -> Callable[[Any], Any]:
    """An option naming a file docbench writes (e.g. `--json`, `--html`): a Path, None when not
    given."""
    return click.option(*names, type=click.Path(path_type=Path, dir_okay=False), default=None, help=help)
