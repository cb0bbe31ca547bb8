"""The generic load driver: stream a dataset into a system, isolating refused documents.

The driver reads each file as raw lines (no parsing: the engine is the judge of what it
accepts), sends batches of ``System.load_batch_size`` lines to the system's loader and, when
a batch is refused, bisects it until only the refused lines are left. Each refused line is
logged with its file, line number and the engine's reason; the others are loaded. Refusals
are rare (about one document per million), so bisection costs little: a refused batch of B
lines is re-sent as at most ~2B lines in total.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from docbench.dataset.reader import iter_lines
from docbench.systems.base import BatchRejected, Loader

log = logging.getLogger(__name__)

# How many refused documents a result file lists in full (all are counted).
MAX_LISTED_ERRORS = 100


@dataclass
class RefusedDocument:
    file: str
    line: int
    reason: str


@dataclass
class LoadReport:
    offered: int = 0
    empty_lines: int = 0
    refused: list[RefusedDocument] = field(default_factory=list)
    refused_count: int = 0
    # Every refused line (all of them, not only the listed ones): file name -> line numbers.
    refused_lines: dict[str, set[int]] = field(default_factory=dict)
    seconds: float = 0.0
    batches: int = 0
    retried_batches: int = 0

    def refuse(self, document: RefusedDocument) -> None:
        self.refused_count += 1
        self.refused_lines.setdefault(document.file, set()).add(document.line)
        if len(self.refused) < MAX_LISTED_ERRORS:
            self.refused.append(document)
        log.warning("refused %s:%d: %s", document.file, document.line, document.reason)


# (line number, raw line) pairs; line numbers are 1-based in the file.
Batch = list[tuple[int, bytes]]


def batches(path: Path, size: int, report: LoadReport) -> Iterator[Batch]:
    batch: Batch = []
    for number, line in enumerate(iter_lines(path), start=1):
        if not line.strip():
            report.empty_lines += 1
            continue
        batch.append((number, line))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def load_batch_isolating(loader: Loader, batch: Batch, file_name: str, report: LoadReport) -> int:
    """Load a batch; on refusal split it in halves until the refused lines are alone.

    Returns the number of documents loaded.
    """
    try:
        loader.load_batch([line for _, line in batch])
        return len(batch)
    except BatchRejected as refusal:
        if len(batch) == 1:
            report.refuse(RefusedDocument(file_name, batch[0][0], _short(str(refusal))))
            return 0
    report.retried_batches += 1
    middle = len(batch) // 2
    return (load_batch_isolating(loader, batch[:middle], file_name, report)
            + load_batch_isolating(loader, batch[middle:], file_name, report))


def load_files(loader: Loader, files: list[Path], batch_size: int,
               on_progress: Callable[[int], None] | None = None) -> LoadReport:
    """Load every file through `loader`; `on_progress(n)` is called with lines offered."""
    report = LoadReport()
    started = time.perf_counter()
    for path in files:
        for batch in batches(path, batch_size, report):
            report.offered += len(batch)
            report.batches += 1
            load_batch_isolating(loader, batch, path.name, report)
            if on_progress:
                on_progress(len(batch))
    loader.close()
    report.seconds = time.perf_counter() - started
    return report


def _short(message: str, limit: int = 300) -> str:
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 1] + "…"
