"""DuckDB 1.1.3's analytics loader: JSONBench's load, a chunk at a time (the analytics
adapter's ``loader()``).

JSONBench (``duckdb/load_data.sh``) splits each file into 100,000-line chunks and inserts each
chunk with ``read_ndjson_objects`` in a ``duckdb`` command of its own; a chunk DuckDB refuses is
lost whole. docbench's load driver hands this loader batches of ``load_batch_size`` (100,000)
lines of one file, and each goes in the same way (``load.sql``, in a connection of its own,
closed after it: the checkpoint at the close is JSONBench's). A batch DuckDB refuses raises
:class:`BatchRejected` with DuckDB's message, so the driver splits it in halves until the refused
documents are alone: only they are lost, each recorded with DuckDB's reason.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from docbench.contracts.analytics import Loader
from docbench.contracts.common import BatchRejected
from docbench.systems.duckdb.engine import write_lines
from docbench.systems.duckdb113.client import WorkerError

if TYPE_CHECKING:
    from docbench.systems.duckdb113.analytics import DuckDB113Analytics

# JSONBench's chunk file, in the work directory (deleted when the loader closes).
CHUNK_FILE_NAME = "load-chunk.ndjson"
# Where DuckDB 1.1.3 says a refused line is: in docbench's chunk file, at a line number one too
# high. Of a one-line chunk only the byte is kept (the driver records the file and line).
_CHUNK_PLACE = re.compile(r' in file "[^"]*", at byte (\d+) in line \d+')


class DuckDB113Loader(Loader):
    def __init__(self, adapter: DuckDB113Analytics) -> None:
        self.adapter = adapter
        self.chunk_path = adapter.engine.workdir / CHUNK_FILE_NAME

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        write_lines(self.chunk_path, lines)
        try:
            self.adapter.insert_chunk(self.chunk_path)
        except WorkerError as error:
            if not error.content_error:
                raise
            reason = str(error).strip()
            if len(lines) == 1:
                reason = _CHUNK_PLACE.sub(r" at byte \1 of the document", reason)
            raise BatchRejected(reason) from error

    def close(self) -> None:
        self.chunk_path.unlink(missing_ok=True)
