"""`docbench run storage`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from docbench.contracts import storage_documents
from docbench.workloads.options import (
    check_variants,
    choices,
    count_list,
    count_type,
    results_dir_or_default,
    system_options,
    urls_from,
)


def command() -> click.Command:
    @click.command("storage")
    @system_options
    @click.option(
        "--rows",
        default="50000",
        show_default=True,
        callback=count_type(1),
        help="Documents per cell (e.g. 50000, 10k).",
    )
    @click.option(
        "--sizes",
        default="1000,3000,7000,15000,31000",
        show_default=True,
        callback=count_list(1),
        help="Payload field sizes in bytes.",
    )
    @click.option(
        "--entropy",
        "entropy_names",
        default="random,repetitive,text",
        show_default=True,
        callback=choices(storage_documents.ENTROPIES),
        help="Payload kinds (random, repetitive, text).",
    )
    def storage(
        system_names: list[str] | None,
        variants: list[str] | None,
        results_dir: Path | None,
        resume: bool,
        rows: int,
        sizes: list[int],
        entropy_names: list[str],
        **urls: Any,
    ) -> None:
        """TOAST-style matrix: each storage setting x field size x entropy -> bytes on disk."""
        from docbench.workloads.storage.runner import StorageRequest, run_storage

        check_variants("storage", system_names, variants)
        raise SystemExit(
            run_storage(
                StorageRequest(
                    system_names=system_names,
                    results_dir=results_dir_or_default(results_dir),
                    rows=rows,
                    sizes=sizes,
                    entropies=entropy_names,
                    variants=variants,
                    resume=resume,
                    urls=urls_from(urls),
                )
            )
        )

    return storage
