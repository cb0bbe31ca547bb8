"""`docbench run fidelity`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from docbench.workloads.options import check_variants, results_dir_or_default, system_options, urls_from


def command() -> click.Command:
    @click.command("fidelity")
    @system_options
    @click.option(
        "--documents",
        "document_names",
        default=None,
        help="Comma-separated corpus documents to run (default: the whole corpus), e.g. "
        "mixed_type_integer,mixed_type_object.",
    )
    def fidelity(
        system_names: list[str] | None,
        variants: list[str] | None,
        results_dir: Path | None,
        resume: bool,
        document_names: str | None,
        **urls: Any,
    ) -> None:
        """Round trip of the fidelity corpus (key order, duplicate keys, big integers, floats,
        escapes, surrogates, nesting, long keys and strings, paths shared across documents)
        through each system and representation. Each document's own verdict comes from a
        fresh table: identical, same value, changed (how) or refused (why); then the documents
        go in together, and each outcome that differs is an interaction, naming the other
        document and the paths they share. --resume has no effect."""
        from docbench.workloads.fidelity.runner import FidelityRequest, run_fidelity

        check_variants("analytics", system_names, variants)
        request = FidelityRequest(
            system_names=system_names,
            variants=variants,
            results_dir=results_dir_or_default(results_dir),
            urls=urls_from(urls),
            documents=document_names.split(",") if document_names else None,
        )
        try:
            request.corpus()
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--documents") from error
        raise SystemExit(run_fidelity(request))

    return fidelity
