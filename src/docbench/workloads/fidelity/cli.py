"""`docbench run fidelity`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from docbench.workloads.options import check_variants, results_dir_or_default, system_options, urls_from


def command() -> click.Command:
    @click.command("fidelity")
    @system_options
    def fidelity(
        system_names: list[str] | None,
        variants: list[str] | None,
        results_dir: Path | None,
        resume: bool,
        **urls: Any,
    ) -> None:
        """Round trip of the fidelity corpus (key order, duplicate keys, big integers, floats,
        escapes, surrogates, nesting, long strings, a path of changing type) through each
        system and representation: identical, same value, changed (how) or refused (why).
        --resume has no effect: a run takes seconds."""
        from docbench.workloads.fidelity.runner import FidelityRequest, run_fidelity

        check_variants("analytics", system_names, variants)
        request = FidelityRequest(
            system_names=system_names,
            variants=variants,
            results_dir=results_dir_or_default(results_dir),
            urls=urls_from(urls),
        )
        raise SystemExit(run_fidelity(request))

    return fidelity
