"""ClickHouse's (chDB) analytics loader: a staging table per file, moved into the main table
when the file is complete (the analytics adapter's ``loader()``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from docbench.contracts.analytics import Loader
from docbench.contracts.common import BatchRejected
from docbench.contracts.engine import system_folder
from docbench.core.sqlfiles import read_sql_statements, render
from docbench.dataset.lines import read_numbered_lines
from docbench.systems.clickhouse.engine import error_text, is_content_error, sql_string, write_lines

if TYPE_CHECKING:
    from docbench.systems.clickhouse.analytics import ClickHouseAnalytics


BATCH_FILE_NAME = "load-batch.ndjson"


ERRORS_FILE_NAME = "load-skipped-rows.csv"


STAGING = "bluesky_staging"


PROBE = "bluesky_probe"


# Skipped lines of one file offered alone to learn the parser's reason (a file of garbage
# must not cost a query per line).
MAX_PROBED = 100


DATABASE = "docbench"


TABLE = "bluesky"


QUALIFIED = f"{DATABASE}.{TABLE}"


class ClickHouseLoader(Loader):
    """Loads go to a staging table with the main table's structure; ``commit_file`` moves the
    file's parts into the main table at once (``MOVE PARTITION``, no copy), so a file is
    loaded as a unit. A whole file goes in with the native insert, the parser skipping (and
    numbering) the documents it refuses; a batch (the fallback) is written to a temporary
    ndjson file and inserted as one insert block: all or nothing."""

    def __init__(self, adapter: ClickHouseAnalytics) -> None:
        self.engine = adapter.engine
        self.batch_path = adapter.engine.workdir / BATCH_FILE_NAME
        self.errors_path = adapter.engine.workdir / ERRORS_FILE_NAME
        statements = read_sql_statements(system_folder(adapter.engine) / "load.sql")
        statements = [render(statement, format=adapter.input_format) for statement in statements]
        self.batch_statement, self.skipping_statement = statements[0], statements[3]
        self.in_file = False
        con = self.engine.connect()
        for table in (STAGING, PROBE):
            con.query(f"DROP TABLE IF EXISTS {DATABASE}.{table} SYNC")
        con.query(f"CREATE TABLE {DATABASE}.{STAGING} AS {QUALIFIED}")
        # A document's judge, outside both tables: only its parse matters.
        con.query(f"CREATE TABLE {DATABASE}.{PROBE} AS {QUALIFIED} ENGINE = Memory")

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        write_lines(self.batch_path, lines)
        self._insert(self.batch_statement, self.batch_path, self.target)

    @property
    def target(self) -> str:
        """The staging table within a file (begin_file .. commit_file), else the main table."""
        return f"{DATABASE}.{STAGING}" if self.in_file else QUALIFIED

    def load_file_skipping(self, path: Path, documents: int) -> dict[int, str] | None:
        """The native insert of the whole file, the parser skipping what it refuses.

        chDB records a skipped row's number (= its line) but no reason; each such line is then
        offered alone to the probe table, and the error it gets is the reason logged. When
        the rows loaded plus the rows skipped are not the file's lines, or a skipped line
        parses on its own, the numbers cannot be trusted: nothing is kept (BatchRejected)."""
        if not self.in_file:
            return None  # the count check needs the file alone in the staging table
        self.errors_path.unlink(missing_ok=True)
        self._insert(self.skipping_statement, path, self.target, errors=sql_string(str(self.errors_path)))
        skipped = self._skipped_rows()
        loaded = self._staged_rows()
        if loaded + len(skipped) != documents or any(not 1 <= n <= documents for n in skipped):
            self._discard_staged()
            raise BatchRejected(
                f"chDB loaded {loaded} rows and skipped {len(skipped)} of "
                f"{documents} lines: the skipped lines cannot be named"
            )
        reasons = self._reasons(path, skipped)
        if reasons is None:
            self._discard_staged()
            raise BatchRejected(
                "a line chDB skipped parses on its own: the skipped rows' numbers are not their lines"
            )
        return reasons

    def _reasons(self, path: Path, skipped: list[int]) -> dict[int, str] | None:
        """The first MAX_PROBED skipped lines are offered alone for their reason (one chDB
        query each); beyond, the count check vouches for the numbers and the log says that
        chDB gave no reason."""
        probed = skipped[:MAX_PROBED]
        lines = read_numbered_lines(path, probed)
        reasons = {
            number: (
                f"skipped by chDB's parser, which gives no reason (the first "
                f"{MAX_PROBED} skipped lines of the file were checked one by one)"
            )
            for number in skipped[MAX_PROBED:]
        }
        for number in probed:
            write_lines(self.batch_path, [lines.get(number, b"")])
            try:
                self._insert(self.batch_statement, self.batch_path, f"{DATABASE}.{PROBE}")
            except BatchRejected as refusal:
                reasons[number] = str(refusal)
                continue
            return None
        return reasons

    def _skipped_rows(self) -> list[int]:
        """Row numbers from chDB's error file (CSV: time, database, table, row, ...)."""
        try:
            text = self.errors_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        rows = []
        for line in text.splitlines():
            fields = line.split(",")
            if len(fields) > 3 and fields[3].strip().isdigit():
                rows.append(int(fields[3]))
        return sorted(rows)

    def _staged_rows(self) -> int:
        return int(self.engine.query(f"SELECT count() FROM {DATABASE}.{STAGING}").strip())

    def _discard_staged(self) -> None:
        self.engine.query(f"TRUNCATE TABLE {DATABASE}.{STAGING} SYNC")

    def begin_file(self, name: str) -> None:
        self._discard_staged()
        self.in_file = True

    def commit_file(self) -> None:
        if self._staged_rows():
            self.engine.query(
                f"ALTER TABLE {DATABASE}.{STAGING} MOVE PARTITION ID 'all' TO TABLE {QUALIFIED}"
            )
        self.in_file = False

    def _insert(self, template: str, path: Path, table: str, errors: str = "") -> None:
        con = self.engine.connect()
        statement = render(template, path=sql_string(str(path)), table=table, errors=errors)
        try:
            con.query(statement, "TSV")
        except Exception as error:
            if is_content_error(error):
                raise BatchRejected(error_text(error)) from error
            raise

    def close(self) -> None:
        self.batch_path.unlink(missing_ok=True)
        self.errors_path.unlink(missing_ok=True)
        for table in (STAGING, PROBE):
            self.engine.query(f"DROP TABLE IF EXISTS {DATABASE}.{table} SYNC")


class ClickHouseLiveLoader(ClickHouseLoader):
    """Live ingest's loader: small inserts straight into the table, each batch one insert
    block (all or nothing) and a part of its own, merged in the background as a live table's
    parts are. No staging table: a batch is its own unit, and moving it would cost two more
    statements per batch (the stream's rate halved in tests/test_ingest.py)."""

    def begin_file(self, name: str) -> None:
        self.in_file = False

    def commit_file(self) -> None:
        pass
