"""DuckDB in the analytics workload: one JSON column, no index (as JSONBench).

DDL, load statement and queries are plain SQL files next to this module (``ddl.sql``,
``load.sql``, ``queries.sql``). The parent process creates and loads the database; each query
runs in a fresh worker process that opens the file read-only.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QueryOutcome, QuerySession
from docbench.contracts.common import BatchRejected, StorageSize, Variant, directory_size
from docbench.core.sqlfiles import read_sql_statements, render
from docbench.dataset.reader import compression_of
from docbench.systems.duckdb.engine import DuckDBEngine, duckdb_module, is_content_error, write_lines

BATCH_FILE_NAME = "load-batch.ndjson"
TABLE = "documents"
# Rejected lines cast alone for the JSON parser's own reason; beyond, the rejects table's.
MAX_PROBED = 1000

VARIANTS: list[Variant] = [
    Variant("default", "JSON column, DuckDB's automatic compression (dictionary/FSST), "
            "no index", role="default"),
]

# Query-level metrics only (no per-operator timers, so profiling does not slow the query).
# DuckDB >= 2.0 names metrics `group.metric` in `tracked_metrics`; 1.1-1.4 used
# `custom_profiling_settings` with upper-case names. The first that works is used.
PROFILING_SETUPS: list[list[str]] = [
    ["SET enable_profiling = 'no_output'",
     "SET tracked_metrics = ['query.total_time', 'system.peak_buffer_memory']"],
    ["SET enable_profiling = 'no_output'",
     "SET custom_profiling_settings = '{\"LATENCY\": \"true\", "
     "\"SYSTEM_PEAK_BUFFER_MEMORY\": \"true\"}'"],
]


def _profile_metrics(text: str) -> tuple[float | None, int | None]:
    """(seconds, peak buffer memory bytes) from DuckDB's JSON profiling output."""
    try:
        info = json.loads(text)
    except (TypeError, ValueError):
        return None, None
    if not isinstance(info, dict):
        return None, None
    seconds = memory = None
    query = info.get("query")
    if isinstance(query, dict):  # DuckDB >= 2.0
        seconds = query.get("total_time")
        system = info.get("system")
        if isinstance(system, dict):
            memory = system.get("peak_buffer_memory")
    else:  # DuckDB 1.1-1.4
        seconds = info.get("latency")
        memory = info.get("system_peak_buffer_memory")
    seconds = float(seconds) if isinstance(seconds, (int, float)) else None
    memory = int(memory) if isinstance(memory, (int, float)) and memory > 0 else None
    return seconds, memory


class DuckDBLoader(Loader):
    """A whole file goes in with one statement in one transaction, the engine skipping and
    numbering the lines it refuses; a batch (the fallback) goes through a temporary ndjson
    file read by ``read_ndjson_objects``, inside one transaction: all of it or none."""

    def __init__(self, adapter: DuckDBAnalytics) -> None:
        self.con = adapter.engine.connection()
        self.batch_path = adapter.engine.workdir / BATCH_FILE_NAME
        statements = read_sql_statements(adapter.engine.folder() / "load.sql")
        self.statement, self.skipping_statement = statements[0], statements[1]

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

    def load_files_skipping(self, paths: list[Path],
                            documents: list[int]) -> list[dict[int, str]] | None:
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
            loaded = int(self.con.execute(self.skipping_statement,
                                          {"path": [str(p) for p in paths]}).fetchone()[0])
            rejected = self.con.execute(
                """SELECT s.file_path, e.line, e.error_message, e.csv_line
                   FROM docbench_rejects e JOIN docbench_reject_scans s USING (scan_id, file_id)
                   ORDER BY s.file_path, e.line""").fetchall()
            if loaded + len(rejected) != sum(documents):
                raise BatchRejected(f"DuckDB loaded {loaded} and rejected {len(rejected)} of "
                                    f"{sum(documents)} lines: the rejected lines cannot be named")
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


class DuckDBSession(QuerySession):
    def __init__(self, spec: dict[str, Any]) -> None:
        self.con = DuckDBEngine(Path(spec["workdir"])).connect(read_only=True)
        self.profiling = False
        for setup in PROFILING_SETUPS:
            try:
                for statement in setup:
                    self.con.execute(statement)
            except duckdb_module().Error:
                with contextlib.suppress(Exception):
                    self.con.execute("PRAGMA disable_profiling")
                continue
            self.profiling = True
            break

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        rows = self.con.execute(text).fetchall()
        seconds = memory = None
        if self.profiling:
            try:
                seconds, memory = _profile_metrics(self.con.get_profiling_information(format="json"))
            except Exception:  # profiling output is a bonus; the rows are what matter
                seconds = memory = None
        # DuckDB's peak buffer memory leaves out allocations outside its buffer manager, so
        # it goes to `extra`: the worker's measured RSS stays the memory figure, comparable
        # with the other embedded engines.
        extra = {"peak_buffer_memory": memory} if memory is not None else {}
        return QueryOutcome(rows=[tuple(row) for row in rows], engine_seconds=seconds,
                            extra=extra)

    def explain(self, query_number: int, text: str) -> str | None:
        rows = self.con.execute(f"EXPLAIN {text}").fetchall()
        return "\n".join(str(row[-1]) for row in rows)

    def cancel(self) -> None:
        with contextlib.suppress(Exception):
            self.con.interrupt()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()


class DuckDBAnalytics(AnalyticsAdapter):
    engine: DuckDBEngine
    variants = VARIANTS
    retains_structure = True
    # One DuckDB row group (122,880 rows) per batch: a full row group is compressed and
    # written straight to the database file at commit, a partial one waits for a checkpoint
    # (100,000-line batches loaded ~25% slower).
    load_batch_size = 122_880

    # ----- loading -------------------------------------------------------------------------
    def create(self) -> None:
        # A fresh file, so that sizes never include blocks freed by an earlier load.
        self.engine.remove_database()
        (self.engine.workdir / BATCH_FILE_NAME).unlink(missing_ok=True)
        con = self.engine.connection()
        for statement in read_sql_statements(self.engine.folder() / "ddl.sql"):
            con.execute(render(statement, **self.variant.settings))
        con.execute("CHECKPOINT")

    def loader(self) -> Loader:
        return DuckDBLoader(self)

    def finish_load(self) -> None:
        # Write everything from the WAL into the database file so sizes are final.
        self.finish_step("CHECKPOINT", lambda: self.engine.connection().execute("CHECKPOINT"))

    def native_load(self, files: list[Path]) -> None:
        """`INSERT INTO documents SELECT json FROM read_ndjson_objects([...files])`: one
        statement over all files, as a person would type it."""
        statement = read_sql_statements(self.engine.folder() / "load.sql")[0]
        self.engine.connection().execute(statement, {"path": [str(p) for p in files]})

    def count(self) -> int:
        con = self.engine.connection()
        return int(con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])

    def storage(self) -> StorageSize:
        con = self.engine.connection()
        con.execute("CHECKPOINT")
        cursor = con.execute("SELECT * FROM pragma_database_size()")
        names = [d[0] for d in cursor.description]
        size = dict(zip(names, cursor.fetchone(), strict=True))
        block_size = int(size["block_size"])
        table_blocks = con.execute(
            f"""SELECT count(DISTINCT block) FROM (
                  SELECT block_id AS block FROM pragma_storage_info('{TABLE}')
                  WHERE persistent AND block_id >= 0
                  UNION ALL
                  SELECT unnest(additional_block_ids) FROM pragma_storage_info('{TABLE}')
                  WHERE persistent)"""
        ).fetchone()[0]
        data = int(table_blocks) * block_size
        path = self.engine.path
        used = int(size["used_blocks"]) * block_size
        detail = {
            "block_size": block_size,
            "total_blocks": int(size["total_blocks"]),
            "used_blocks": int(size["used_blocks"]),
            "free_blocks": int(size["free_blocks"]),
            "table_blocks": int(table_blocks),
            "metadata_bytes": max(used - data, 0),
            "database_file_bytes": path.stat().st_size if path.exists() else None,
            "wal_size": size.get("wal_size"),
            "compression": [r[0] for r in con.execute(
                f"SELECT DISTINCT compression FROM pragma_storage_info('{TABLE}') ORDER BY 1"
            ).fetchall()],
        }
        return StorageSize(total=used, data=data, index=0,
                           on_disk=directory_size(self.engine.workdir), detail=detail)

    # ----- queries -------------------------------------------------------------------------
    def session_spec(self) -> dict[str, Any]:
        return {"workdir": str(self.engine.workdir)}

    @classmethod
    def open_session(cls, spec: dict[str, Any]) -> QuerySession:
        return DuckDBSession(spec)


ADAPTER = DuckDBAnalytics
