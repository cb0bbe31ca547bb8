"""`docbench run updates`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from docbench.workloads.options import (
    check_variants,
    choices,
    count_type,
    results_dir_or_default,
    system_options,
    urls_from,
)

DISTRIBUTIONS = ("uniform", "zipfian")


def command() -> click.Command:
    @click.command("updates")
    @system_options
    @click.option(
        "--docs",
        default="100k",
        show_default=True,
        callback=count_type(1),
        help="YCSB documents loaded (e.g. 100k, 2000).",
    )
    @click.option(
        "--ops",
        default="10000",
        show_default=True,
        callback=count_type(1),
        help="Point reads and point updates per distribution.",
    )
    @click.option(
        "--distribution",
        "distribution_names",
        default="uniform,zipfian",
        show_default=True,
        callback=choices(DISTRIBUTIONS),
        help="Key distributions, comma-separated.",
    )
    def updates(
        system_names: list[str] | None,
        variants: list[str] | None,
        results_dir: Path | None,
        resume: bool,
        docs: int,
        ops: int,
        distribution_names: list[str],
        **urls: Any,
    ) -> None:
        """YCSB documents: bulk add-field in each system's own styles (JSONB ||/jsonb_set, $set,
        ...), point reads/updates, sizes before/after/maintained."""
        from docbench.workloads.updates.runner import run_updates

        check_variants("updates", system_names, variants)
        raise SystemExit(
            run_updates(
                system_names,
                docs=docs,
                ops=ops,
                distributions=distribution_names,
                results_dir=results_dir_or_default(results_dir),
                variants=variants,
                urls=urls_from(urls),
                resume=resume,
            )
        )

    return updates
