"""SQLite's analytics loader: ``executemany`` of the variant's INSERT (the analytics
adapter's ``loader()``)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from docbench.contracts.analytics import Loader
from docbench.contracts.common import BatchRejected
from docbench.systems.sqlite.engine import is_content_error

if TYPE_CHECKING:
    from docbench.systems.sqlite.analytics import SQLiteAnalytics


def _decode(lines: list[bytes]) -> list[tuple[str]]:
    """Lines as str parameters. SQLite stores text as given and requires it to be UTF-8
    (invalid UTF-8 is undefined behaviour, not checked), so docbench refuses it here."""
    try:
        return [(line.decode("utf-8"),) for line in lines]
    except UnicodeDecodeError:
        pass
    for number, line in enumerate(lines, start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise BatchRejected(
                f"invalid UTF-8 in line {number} of the batch (SQLite text must be UTF-8): {error}"
            ) from error
    raise AssertionError("unreachable")


class SQLiteLoader(Loader):
    """``executemany`` of the variant's INSERT. A file is one transaction (``begin_file`` ..
    ``commit_file``), each batch a savepoint inside it: a refused batch is rolled back alone,
    a load killed mid-file leaves nothing of that file."""

    def __init__(self, adapter: SQLiteAnalytics) -> None:
        self.con = adapter.engine.connection()
        self.statement = adapter.insert_statement()
        self.in_file = False

    def begin_file(self, name: str) -> None:
        self.con.execute("BEGIN")
        self.in_file = True

    def commit_file(self) -> None:
        if self.in_file:
            self.con.execute("COMMIT")
            self.in_file = False

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        rows = _decode(lines)
        self.con.execute("SAVEPOINT batch")
        try:
            self.con.executemany(self.statement, rows)
            self.con.execute("RELEASE batch")
        except Exception as error:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK TO batch")
                self.con.execute("RELEASE batch")
            if is_content_error(error):
                raise BatchRejected(str(error)) from error
            raise

    def load_batch_skipping(self, lines: list[bytes]) -> dict[int, str]:
        """Every line SQLite takes, in one savepoint; the refused ones named. ``executemany``
        stops at the row SQLite refuses, keeping the rows before it (SQLite undoes only the
        failing statement): the connection's change count says how many went in, so the
        refused row is known, and the insert goes on after it. Nothing is sent twice."""
        refused: dict[int, str] = {}
        indexes: list[int] = []
        rows: list[tuple[str]] = []
        try:
            rows = [(line.decode("utf-8"),) for line in lines]
            indexes = list(range(len(lines)))
        except UnicodeDecodeError:
            for index, line in enumerate(lines):
                try:
                    rows.append((line.decode("utf-8"),))
                    indexes.append(index)
                except UnicodeDecodeError as error:
                    refused[index] = f"invalid UTF-8 (SQLite text must be UTF-8): {error}"
        self.con.execute("SAVEPOINT batch")
        try:
            done = 0
            while done < len(rows):
                before = self.con.total_changes
                try:
                    self.con.executemany(self.statement, rows[done:] if done else rows)
                    done = len(rows)
                except Exception as error:
                    if not is_content_error(error):
                        raise
                    done += self.con.total_changes - before
                    refused[indexes[done]] = str(error)
                    done += 1
            self.con.execute("RELEASE batch")
        except BaseException:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK TO batch")
                self.con.execute("RELEASE batch")
            raise
        return refused

    def close(self) -> None:
        if self.in_file:  # an interrupted file: none of it is kept
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            self.in_file = False
