"""`docbench run shapes`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click

from docbench.workloads.options import (
    check_variants,
    count_type,
    list_callback,
    results_dir_or_default,
    system_options,
    urls_from,
)

PRESETS = ("logs", "catalogue", "telemetry", "deep")
DEFAULT_VALUES: dict[str, tuple[Any, ...]] = {
    "paths": (10, 100, 1000, 10000),
    "per_doc": (5, 20, 80, 320),
    "depth": (1, 2, 4, 8, 16),
    "array_share": (0.0, 0.25, 0.5, 1.0),
    "varying_share": (0.0, 0.25, 0.5, 1.0),
    "zipf": (0.0, 0.5, 1.0, 1.5),
    "string_len": (8, 64, 512, 4096),
}


def _knob_values(ctx: click.Context, _param: click.Parameter, value: list[str] | None) -> list[Any] | None:
    from docbench.workloads.shapes.runner import KNOBS

    knob = ctx.params.get("knob", "paths")
    if value is None:
        return None
    try:
        return [KNOBS[knob](item) for item in value]
    except ValueError as error:
        raise click.BadParameter(f"not a value of {knob}: {error}") from None


def _settings(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> dict[str, int | float]:
    from docbench.workloads.shapes.runner import KNOBS

    settings: dict[str, int | float] = {}
    for item in value:
        name, _, text = item.partition("=")
        name = name.replace("-", "_")
        if name not in KNOBS or not text:
            raise click.BadParameter(f"{item!r}: give KNOB=VALUE with a knob of {', '.join(KNOBS)}")
        try:
            settings[name] = KNOBS[name](text)
        except ValueError as error:
            raise click.BadParameter(f"{item!r}: {error}") from None
    return settings


def command() -> click.Command:
    from docbench.workloads.shapes.runner import KNOBS

    @click.command("shapes")
    @click.option(
        "--knob",
        type=click.Choice(sorted(KNOBS)),
        default="paths",
        show_default=True,
        is_eager=True,
        help="The knob of the document shape to sweep.",
    )
    @click.option(
        "--values",
        default=None,
        callback=lambda ctx, param, value: _knob_values(ctx, param, list_callback(ctx, param, value)),
        help="Comma-separated values of the knob, the first one the baseline of the break points "
        "[paths: 10,100,1000,10000; per_doc: 5,20,80,320; depth: 1,2,4,8,16; array_share, "
        "varying_share: 0,0.25,0.5,1; zipf: 0,0.5,1,1.5; string_len: 8,64,512,4096].",
    )
    @click.option(
        "--preset",
        type=click.Choice(PRESETS),
        default="logs",
        show_default=True,
        help="The shape the other knobs come from (`docbench-gen shapes --presets`).",
    )
    @click.option(
        "--set",
        "settings",
        multiple=True,
        callback=_settings,
        metavar="KNOB=VALUE",
        help="Set another knob on top of the preset (repeatable), e.g. --set per_doc=50.",
    )
    @click.option(
        "--docs",
        default="100k",
        show_default=True,
        callback=count_type(1),
        help="Documents per point of the sweep.",
    )
    @click.option("--seed", type=int, default=1, show_default=True, help="The generator's seed.")
    @click.option(
        "--tries",
        type=click.IntRange(1),
        default=3,
        show_default=True,
        help="Runs of each query: the first cold, the others hot.",
    )
    @click.option(
        "--timeout",
        type=float,
        default=600.0,
        show_default=True,
        help="Seconds before a query try is cancelled.",
    )
    @click.option(
        "--load-limit",
        type=click.FloatRange(min=0, min_open=True),
        default=1800.0,
        show_default=True,
        help="Seconds after which a point's load is stopped and the point recorded as failed "
        "(checked between batches).",
    )
    @click.option(
        "--no-restart-cold",
        is_flag=True,
        help="Do not restart servers before a query's first try (quicker, tagged lukewarm).",
    )
    @system_options
    def shapes(
        knob: str,
        values: list[Any] | None,
        preset: str,
        settings: dict[str, int | float],
        docs: int,
        seed: int,
        tries: int,
        timeout: float,
        load_limit: float,
        no_restart_cold: bool,
        system_names: list[str] | None,
        variants: list[str] | None,
        results_dir: Path | None,
        resume: bool,
        **urls: Any,
    ) -> None:
        """Sweep one knob of the document shape (distinct paths, paths per document, depth,
        arrays, varying types, popularity, string length) at a fixed document count: per
        system, load time, bytes per document, refusals (with the engine's reason) and four
        shape queries cold and hot, every answer checked; `docbench report` finds where each
        engine breaks (refuses, fails, answers wrong, or slows down 10x against the first
        value)."""
        from docbench.dataset.shapes import Shape
        from docbench.workloads.shapes.runner import ShapesRequest, run_shapes

        if knob in settings:
            raise click.BadParameter(f"--set {knob}=...: {knob} is the knob swept", param_hint="--set")
        check_variants("analytics", system_names, variants)
        # Keyword arguments of the Shape's own replace: each knob's type is its field's (a key
        # known only at run time, so only Any fits them all).
        knobs: dict[str, Any] = dict(settings)
        request = ShapesRequest(
            knob=knob,
            values=values or list(DEFAULT_VALUES[knob]),
            base=dataclasses.replace(Shape(preset=preset), **knobs),
            docs=docs,
            seed=seed,
            system_names=system_names,
            variants=variants,
            results_dir=results_dir_or_default(results_dir),
            tries=tries,
            timeout=timeout,
            urls=urls_from(urls),
            restart_for_cold=not no_restart_cold,
            load_limit_s=load_limit,
            resume=resume,
        )
        raise SystemExit(run_shapes(request))

    return shapes
