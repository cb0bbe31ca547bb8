"""The answers a system should give for the documents it actually took.

When a system refuses documents (a `\\u0000` escape in PostgreSQL, a '$' key in FerretDB v1),
comparing its answers with the oracle's answers for the whole dataset would call a correct
query "wrong". Refusals are a data-quality finding, reported as such; the answer check asks
the separate question "is the query right on what was loaded?", so the oracle is re-run over
the dataset minus the refused lines. Refusals are rare, so this costs one oracle pass when it
happens and nothing otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from docbench.core.jsontypes import JsonObject, as_array, as_object
from docbench.dataset.oracle import Partial, finalize, scan_batches
from docbench.dataset.reader import iter_lines

BATCH = 10_000


def answers_without(files: list[Path], refused: dict[str, set[int]], full_answers: JsonObject) -> JsonObject:
    """The oracle's answer document for `files` without the refused (file, line) pairs."""
    part = Partial()
    for path in files:
        scan_batches(_kept_lines(path, refused.get(path.name, set())), part)
    answers: JsonObject = finalize(part, [as_object(f) for f in as_array(full_answers.get("files", []))])
    answers["excluded_lines"] = sum(len(lines) for lines in refused.values())
    return answers


def _kept_lines(path: Path, skip: set[int]) -> Iterator[list[bytes]]:
    batch: list[bytes] = []
    for number, line in enumerate(iter_lines(path), start=1):
        if number in skip:
            continue
        batch.append(line)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch
