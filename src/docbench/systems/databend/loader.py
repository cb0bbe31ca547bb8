"""Databend's analytics loader: files and batches through ``load.sql``'s COPY (the analytics
adapter's ``loader()``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from docbench.contracts.analytics import Loader
from docbench.contracts.common import BatchRejected
from docbench.contracts.engine import system_folder
from docbench.core.sqlfiles import read_sql_statements, render
from docbench.systems.databend.engine import is_content_error, write_lines

if TYPE_CHECKING:
    from docbench.systems.databend.analytics import DatabendAnalytics

BATCH_FILE_NAME = "load-batch.ndjson"
# Where Databend's message places the refused row: the batch file and its row counted from 0,
# which mean nothing to the reader (the driver logs the dataset's file and line).
ROW_PLACE = re.compile(r"\s*at file '[^']*', line \d+\.?\s*$")


def is_object_line(line: bytes) -> bool:
    """Whether the line can only be a JSON object (Databend's NDJSON reader also takes arrays,
    strings and numbers as rows, which are not documents)."""
    return line.lstrip(b" \t\r")[:1] == b"{"


class DatabendLoader(Loader):
    """A whole file goes in with one COPY (all of it or nothing: ``ON_ERROR = ABORT``); a batch
    (the fallback) through a temporary ndjson file in the work directory and the same COPY.
    Databend has no transaction around several statements in this build, so each COPY is
    its own unit (a file loaded in batches is committed batch by batch)."""

    def __init__(self, adapter: DatabendAnalytics) -> None:
        self.host = adapter.engine.connection()
        self.batch_path = adapter.engine.workdir / BATCH_FILE_NAME
        self.statement = read_sql_statements(system_folder(adapter.engine) / "load.sql")[0]

    def _copy(self, path: Path) -> None:
        try:
            self.host.execute(render(self.statement, path=str(path.resolve())))
        except Exception as error:
            if is_content_error(error):
                raise BatchRejected(ROW_PLACE.sub("", str(error).strip())) from error
            raise

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        for number, line in enumerate(lines, start=1):
            if not is_object_line(line):
                raise BatchRejected(f"line {number} of the batch is not a JSON object: {line[:100]!r}")
        write_lines(self.batch_path, lines)
        self._copy(self.batch_path)

    def load_file(self, path: Path, documents: int) -> bool:
        """The whole file through COPY, as by hand (every line starts with '{': the driver
        checked, so every line Databend takes is an object)."""
        self._copy(path)
        return True

    def close(self) -> None:
        self.batch_path.unlink(missing_ok=True)
