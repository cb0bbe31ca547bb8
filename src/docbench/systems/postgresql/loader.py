"""PostgreSQL's analytics loader: COPY FROM STDIN of each batch (the analytics adapter's
``loader()``).

Loading is ``COPY ... FROM STDIN`` in CSV mode with control characters as quote and delimiter,
so the JSON text goes through unescaped; one savepoint per batch in one transaction per file.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from docbench.contracts.analytics import Loader
from docbench.contracts.common import BatchRejected
from docbench.core.prefetch import prefetched
from docbench.dataset.reader import iter_blocks
from docbench.systems.postgresql.engine import (
    COPY_OPTIONS,
    copy_buffer,
    copy_line,
    error_message,
    is_content_error,
    psycopg_module,
)


class PostgreSQLLoader(Loader):
    """COPY FROM STDIN, one savepoint per batch in one transaction per file: a refused batch
    leaves nothing behind, a load killed mid-file leaves nothing of that file."""

    # Lines per COPY data message: the server parses one chunk while the next is prepared.
    CHUNK_LINES = 2_000

    def __init__(self, conninfo: str, table: str) -> None:
        psycopg = psycopg_module()
        self.conn = psycopg.connect(conninfo, autocommit=True)
        # Without begin_file (the updates and storage workloads), a batch is its own
        # transaction and skips the wait for the WAL flush, as in a single-transaction bulk
        # load: a crash may lose the last fraction of a second of commits. A file's commit
        # (commit_file) waits for its flush.
        self.conn.execute("SET synchronous_commit = off")
        self.table = table
        self.sql = f"COPY {table} (data) FROM STDIN WITH ({COPY_OPTIONS})"
        # PostgreSQL 17+ skips the rows its input functions refuse (ON_ERROR ignore) and names
        # each in a NOTICE: the whole-file path then sends every block once.
        self.skips_natively = self.conn.info.server_version >= 170000
        self.sql_skipping = (
            f"COPY {table} (data) FROM STDIN WITH ({COPY_OPTIONS}, ON_ERROR ignore, LOG_VERBOSITY verbose)"
        )
        self._notices: list[str] = []
        self._data_type: str | None = None  # the table's column type, asked once
        self._probes_left = 0  # skipped lines of this file whose reason may still be asked
        self.conn.add_notice_handler(lambda diag: self._notices.append(diag.message_primary or ""))

    def begin_file(self, name: str) -> None:
        """A file is one transaction; each batch's own transaction block inside it is a
        savepoint (psycopg nests them so), rolled back alone when the batch is refused."""
        self.conn.execute("BEGIN")

    def commit_file(self) -> None:
        # The file's commit waits for its WAL flush (the batches inside do not): the
        # checkpoint written next must never claim a file a server crash could still lose.
        self.conn.execute("SET LOCAL synchronous_commit = on")
        self.conn.execute("COMMIT")

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        psycopg = psycopg_module()
        step = self.CHUNK_LINES
        try:
            with self.conn.transaction(), self.conn.cursor() as cur, cur.copy(self.sql) as copy:
                for start in range(0, len(lines), step):
                    copy.write(copy_buffer(lines[start : start + step]))
        except psycopg.Error as error:
            if is_content_error(error):
                raise BatchRejected(error_message(error)) from error
            raise

    # Bytes of a file per COPY statement on the whole-file path: a refused document costs a
    # re-send of its block (~9,000 documents), not a bisection of its batch.
    BLOCK_BYTES = 4 << 20
    MAX_REFUSED_PER_BLOCK = 32
    # Skipped lines per file whose reason is asked of the server one by one (ON_ERROR's
    # notices name the line, not the reason): a file of garbage costs no query per line.
    MAX_REASON_PROBES = 100

    def load_file_skipping(self, path: Path, documents: int) -> dict[int, str] | None:
        """The file's raw bytes, block by block, each block one COPY in a savepoint, the way
        ``\\copy`` streams a file (no line is split apart in Python). A refused document
        aborts its block's COPY, whose error names the line ("COPY t, line N"): the block is
        sent again without it, so each refusal costs one block, and its reason is
        PostgreSQL's own. An error that names no line keeps nothing of the file (the driver
        then bisects batches)."""
        psycopg = psycopg_module()
        refused: dict[int, str] = {}
        first = 1  # the file's line number of the block's first line
        self._probes_left = self.MAX_REASON_PROBES
        try:
            with self.conn.transaction():  # all of the file or nothing of it
                loaded = 0
                # The next block is read and scanned in a thread while the server parses
                # this one: without it the server idled ~8 ms per block (1 s per 10m file).
                for data, lines, quote in prefetched(_copy_blocks(path, self.BLOCK_BYTES)):
                    loaded += self._copy_block(data, lines, quote, first, refused)
                    first += lines
                if loaded + len(refused) != documents or first - 1 != documents:
                    raise BatchRejected(
                        f"{path.name}: {loaded} loaded and {len(refused)} refused of {documents} documents"
                    )
        except _NoLineNamed as error:
            raise BatchRejected(str(error)) from None
        except psycopg.Error as error:
            if is_content_error(error):
                raise BatchRejected(error_message(error)) from error
            raise
        return refused

    def _copy_block(self, data: bytes, lines: int, quote: bool, first: int, refused: dict[int, str]) -> int:
        """COPY one block of whole lines (each line quoted when `quote`), again without each
        line PostgreSQL refuses; the number of rows loaded."""
        psycopg = psycopg_module()
        if self.skips_natively:
            try:
                return self._copy_block_skipping(data, lines, quote, first, refused)
            except psycopg.Error as error:
                if not is_content_error(error):
                    raise
                # A refusal ON_ERROR does not cover (a hard error, e.g. the stack depth limit):
                # the block goes again the other way.
        split: list[bytes] | None = None
        skipped: list[int] = []  # block line indexes (0-based) left out, ascending
        while True:
            if quote or skipped:
                if split is None:
                    split = data.split(b"\n")[:lines]
                gone = set(skipped)
                kept = [line for i, line in enumerate(split) if i not in gone]
                body = copy_buffer(kept) if kept else b""
            else:
                body = data
            if not body:
                return 0
            try:
                with self.conn.transaction(), self.conn.cursor() as cur:
                    with cur.copy(self.sql) as copy:
                        copy.write(body)
                    return cur.rowcount
            except psycopg.Error as error:
                if not is_content_error(error):
                    raise
                index = _block_index(copy_line(error), skipped, lines)
                if index is None:
                    raise _NoLineNamed(error_message(error)) from error
                if len(skipped) >= self.MAX_REFUSED_PER_BLOCK:
                    # (each one re-sends the block: a block of garbage is bisected instead)
                    raise _NoLineNamed(
                        f"more than {self.MAX_REFUSED_PER_BLOCK} documents refused in one block"
                    ) from error
                skipped = sorted([*skipped, index])
                refused[first + index] = error_message(error, where=False)

    def _copy_block_skipping(
        self, data: bytes, lines: int, quote: bool, first: int, refused: dict[int, str]
    ) -> int:
        """COPY one block with ON_ERROR ignore: the server skips each row its input function
        refuses and names its line in a NOTICE; each skipped line's reason is then PostgreSQL's
        own, from casting that line alone (refusals are rare: one cheap statement each)."""
        split = data.split(b"\n")[:lines]
        body = copy_buffer(split) if quote else data
        self._notices.clear()
        with self.conn.transaction(), self.conn.cursor() as cur:
            with cur.copy(self.sql_skipping) as copy:
                copy.write(body)
            loaded = cur.rowcount
        skipped = [int(found.group(1)) for notice in self._notices if (found := _SKIPPED_LINE.match(notice))]
        for line in skipped:
            if self._probes_left > 0:
                self._probes_left -= 1
                refused[first + line - 1] = self._refusal_reason(split[line - 1])
            else:
                refused[first + line - 1] = (
                    "skipped by COPY ... ON_ERROR ignore (data type "
                    f"incompatibility; reasons asked for the first "
                    f"{self.MAX_REASON_PROBES} of a file only)"
                )
        if loaded + len(skipped) != lines:
            raise _NoLineNamed(
                f"COPY ... ON_ERROR loaded {loaded} and named {len(skipped)} "
                f"skipped rows of a block of {lines} lines"
            )
        return loaded

    def _refusal_reason(self, line: bytes) -> str:
        """PostgreSQL's error for this one line cast to the table's column type."""
        psycopg = psycopg_module()
        try:
            with self.conn.transaction():
                self.conn.execute(f"SELECT %s::{self._column_type()}", (line.decode("utf-8", "replace"),))
        except psycopg.Error as error:
            return error_message(error, where=False)
        return "skipped by COPY ... ON_ERROR ignore (accepted alone)"

    def _column_type(self) -> str:
        if self._data_type is None:
            row = self.conn.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = %s::regclass AND attname = 'data'",
                (self.table,),
            ).fetchone()
            self._data_type = str(row[0]) if row else "jsonb"
        return self._data_type

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


# "skipping row due to data type incompatibility at line 2 for column "data": ..." (PG 17+)
_SKIPPED_LINE = re.compile(r"skipping row due to .* at line (\d+) for column")


def _copy_blocks(path: Path, size: int) -> Iterator[tuple[bytes, int, bool]]:
    """The file's blocks of whole lines as COPY data: the bytes, their line count, and
    whether the lines must be quoted. Raw bytes are the COPY data as they are unless a line
    holds the quote or delimiter byte or a CR (CSV would read them as framing)."""
    for block in iter_blocks(path, size=size):
        data = bytes(block)  # (the block's buffer is reused for the next one)
        lines = data.count(b"\n") + (not data.endswith(b"\n"))
        yield data, lines, b"\x01" in data or b"\x02" in data or b"\r" in data


class _NoLineNamed(Exception):
    """PostgreSQL refused a block without naming the line."""


def _block_index(stream_line: int | None, skipped: list[int], lines: int) -> int | None:
    """The block's line index of the COPY stream's 1-based line, where the stream is the block
    without the ``skipped`` line indexes (ascending); None when there is no such line."""
    if stream_line is None or stream_line < 1:
        return None
    index = stream_line - 1
    for gone in skipped:
        if gone <= index:
            index += 1
    return index if index < lines else None
