"""CLI options that several workloads share, validated before anything runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from docbench import paths
from docbench.core.units import parse_count
from docbench.systems import REGISTERED, UnknownSystem, all_engines, check_names


def split_list(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def systems_callback(_ctx: click.Context, _param: click.Parameter, value: str | None) -> list[str] | None:
    names = split_list(value)
    if names:
        try:
            check_names(names)
        except UnknownSystem as error:
            raise click.BadParameter(str(error)) from None
    return names


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
            click.echo(f"warning: the password in --{str(param.name).replace('_', '-')} is visible to other "
                       f"users in `ps`; give the URL as {param.envvar} instead, or leave the password "
                       "out and use the client's own files (PGPASSWORD/.pgpass, MYSQL_PWD/~/.my.cnf)",
                       err=True)
    return value


def system_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--systems, --variants, --results, --resume and every server's --<system>-url."""
    for engine in reversed(all_engines()):
        if engine.url_example:
            command = click.option(
                f"--{engine.name}-url", default=None, metavar="URL", show_envvar=True,
                callback=_warn_password_in_argv,
                envvar=f"DOCBENCH_{engine.name.upper()}_URL",
                help=f"Run against this {engine.display_name} server (e.g. {engine.url_example}); "
                     "docbench only touches its own database/index there.")(command)
    command = click.option("--resume", is_flag=True,
                           help="Continue the latest run of each (system, variant, data) on this "
                                "machine: skip it when complete, finish it when not.")(command)
    command = click.option("--results", "results_dir", type=click.Path(path_type=Path, file_okay=False),
                           default=None, help="Results directory [results/].")(command)
    command = click.option("--variants", default=None, callback=lambda c, p, v: split_list(v),
                           help="Comma-separated variants (default: all of each system).")(command)
    command = click.option("--systems", "system_names", default=None, callback=systems_callback,
                           help=f"Comma-separated systems ({', '.join(REGISTERED)}); default: every "
                                "one that can run here without setup.")(command)
    return command


def urls_from(options: dict[str, Any]) -> dict[str, str]:
    """The --<system>-url values given, by system name."""
    return {key.removesuffix("_url"): value for key, value in options.items()
            if key.endswith("_url") and value}


def results_dir_or_default(value: Path | None) -> Path:
    return value or paths.results_dir()


def choices(allowed: tuple[str, ...] | list[str]) -> Callable[[click.Context, click.Parameter, str],
                                                               list[str]]:
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
        raise click.BadParameter(f"no such variant {', '.join(unknown)} for these systems "
                                 f"(known: {', '.join(sorted(known))})", param_hint="--variants")
