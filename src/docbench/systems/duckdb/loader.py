"""DuckDB's analytics loader: each file (or batch) through the load statement of ``load.sql``
(the analytics adapter's ``loader()``)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from docbench.contracts.analytics import Loader
from docbench.contracts.common import BatchRejected
from docbench.contracts.engine import system_folder
from docbench.core.sqlfiles import read_sql_statements, render
from docbench.dataset.reader import compression_of
from docbench.systems.duckdb.engine import is_content_error, write_lines

if TYPE_CHECKING:
    from docbench.systems.duckdb.analytics import DuckDBAnalytics


BATCH_FILE_NAME = "load-batch.ndjson"


# Rejected lines cast alone for the JSON parser's own reason; beyond, the rejects table's.
MAX_PROBED = 1000


class DuckDBLoader(Loader):
    """A whole file goes in with one statement in one transaction, the engine skipping and
    numbering the lines it refuses; a batch (the fallback) goes through a temporary ndjson
    file read by ``read_ndjson_objects``, inside one transaction: all of it or none."""

    def __init__(self, adapter: DuckDBAnalytics) -> None:
        self.con = adapter.engine.connection()
        self.batch_path = adapter.engine.workdir / BATCH_FILE_NAME
        statements = read_sql_statements(system_folder(adapter.engine) / "load.sql")
        doc_value = str(adapter.variant.settings.get("doc_value", "json"))
        self.statement, self.skipping_statement = statements[0], render(statements[1], doc_value=doc_value)

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        write_lines(self.batch_path, lines)
        self._load_path(self.batch_path)

    def load_file(self, path: Path, documents: int) -> bool:
        """The whole file through read_ndjson_objects, as by hand, in one transaction."""
        self._load_path(path)
        return True

    # Two files per statement: DuckDB's CSV reader runs its threads across files; one file
    # at a time loaded at half the speed of the native multi-file load (4 files of 10m:
    # 26.2 s one by one, 12.7 s two at a time, 14.2 s read_ndjson_objects over all four).
    files_per_statement = 2

    def load_file_skipping(self, path: Path, documents: int) -> dict[int, str] | None:
        refused = self.load_files_skipping([path], [documents])
        return None if refused is None else refused[0]

    def load_files_skipping(self, paths: list[Path], documents: list[int]) -> list[dict[int, str]] | None:
        """The files in one statement and one transaction; the lines the JSON cast refuses are
        skipped and named (file and line) by DuckDB's rejects tables. Each is then cast alone
        (outside the table) to log the parser's own reason. Loaded + rejected must be the
        files' lines, else nothing is kept (BatchRejected). Compressed files go one at a time:
        with two or more of them in one read_csv, DuckDB sizes each buffer from the maximum
        line size (1 GB here, like read_ndjson_objects') and asks for 16 GB."""
        if len(paths) > 1 and any(compression_of(p) != "none" for p in paths):
            return None
        self._drop_rejects()
        self.con.execute("BEGIN TRANSACTION")
        try:
            loaded = int(
                self.con.execute(self.skipping_statement, {"path": [str(p) for p in paths]}).fetchone()[0]
            )
            rejected = self.con.execute(
                """SELECT s.file_path, e.line, e.error_message, e.csv_line
                   FROM docbench_rejects e JOIN docbench_reject_scans s USING (scan_id, file_id)
                   ORDER BY s.file_path, e.line"""
            ).fetchall()
            if loaded + len(rejected) != sum(documents):
                raise BatchRejected(
                    f"DuckDB loaded {loaded} and rejected {len(rejected)} of "
                    f"{sum(documents)} lines: the rejected lines cannot be named"
                )
            self.con.execute("COMMIT")
        except Exception as error:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            if isinstance(error, BatchRejected):
                raise
            if is_content_error(error):
                raise BatchRejected(str(error).strip()) from error
            raise
        # After the commit: a failed statement would abort the transaction.
        by_file: dict[str, dict[int, str]] = {str(p): {} for p in paths}
        for index, (file, line, message, text) in enumerate(rejected):
            reason = self._reason(message, text) if index < MAX_PROBED else message
            by_file.setdefault(file, {})[int(line)] = reason
        self._drop_rejects()
        if len(by_file) != len(paths):
            raise RuntimeError(f"DuckDB named rejected lines of files it was not given: {sorted(by_file)}")
        return [by_file[str(p)] for p in paths]

    def _reason(self, message: str, text: str | None) -> str:
        """The JSON parser's own words for a rejected line (the rejects table only says the
        cast failed): the line cast alone, outside any table and transaction."""
        if text is None:
            return message
        try:
            self.con.execute("SELECT CAST($line AS JSON)", {"line": text}).fetchall()
        except Exception as error:  # noqa: BLE001 - the reason is the point
            return str(error).split("\n")[0].strip()
        return message

    def _drop_rejects(self) -> None:
        for table in ("docbench_rejects", "docbench_reject_scans"):
            self.con.execute(f"DROP TABLE IF EXISTS {table}")

    def _load_path(self, path: Path) -> None:
        self.con.execute("BEGIN TRANSACTION")
        try:
            self.con.execute(self.statement, {"path": str(path)})
            self.con.execute("COMMIT")
        except Exception as error:
            with contextlib.suppress(Exception):
                self.con.execute("ROLLBACK")
            if is_content_error(error):
                raise BatchRejected(str(error).strip()) from error
            raise

    def close(self) -> None:
        self.batch_path.unlink(missing_ok=True)


class InferredSchemaLoader(Loader):
    """The representation ``struct``: no JSON column but the columns ``read_ndjson`` infers.

    The first load (a whole file, or a batch) creates the table from the schema DuckDB infers
    from every one of its lines (``sample_size = -1``; nesting below ``MAX_DEPTH`` levels is
    kept as JSON text), one column per top-level key (``records``: lines it cannot make
    columns of, e.g. an empty key, are refused rather than held as one MAP column). Every
    later load reads its lines with that schema (``columns``): a key
    the schema lacks is dropped, and a value of another type is refused (the statement fails:
    the driver isolates the document, with DuckDB's reason). One statement per load: all or
    nothing."""

    MAX_DEPTH = 10

    def __init__(self, adapter: DuckDBAnalytics) -> None:
        self.con = adapter.engine.connection()
        self.batch_path = adapter.engine.workdir / BATCH_FILE_NAME

    def _columns(self) -> dict[str, str]:
        rows = self.con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'documents' ORDER BY ordinal_position"
        ).fetchall()
        return {str(name): str(kind) for name, kind in rows}

    def _load_path(self, path: Path) -> None:
        reader = "format = 'newline_delimited', maximum_object_size = 1073741824"
        columns = self._columns()
        try:
            if columns:
                self.con.execute(
                    "INSERT INTO documents BY NAME SELECT * FROM "
                    f"read_ndjson($path, columns = $columns, {reader})",
                    {"path": str(path), "columns": columns},
                )
            else:
                self.con.execute(
                    "CREATE TABLE documents AS SELECT * FROM read_ndjson($path, sample_size = -1, "
                    f"records = 'true', maximum_depth = {self.MAX_DEPTH}, {reader})",
                    {"path": str(path)},
                )
        except Exception as error:
            # "expected records, but got non-record JSON" comes as a binder error.
            if is_content_error(error) or "non-record JSON" in str(error):
                raise BatchRejected(str(error).strip()) from error
            raise

    def load_batch(self, lines: list[bytes]) -> None:
        if lines:
            write_lines(self.batch_path, lines)
            self._load_path(self.batch_path)

    def load_file(self, path: Path, documents: int) -> bool:
        self._load_path(path)
        return True

    def close(self) -> None:
        self.batch_path.unlink(missing_ok=True)
