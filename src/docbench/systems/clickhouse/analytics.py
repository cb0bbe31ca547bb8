"""ClickHouse (chDB) in the analytics workload: one JSON column with the five JSONBench paths
typed, a MergeTree sorted by them, in the engine's database directory.

DDL, load statements and queries are plain SQL files next to this module (``ddl.sql``,
``load.sql``, ``queries.sql``). chDB opens ONE database directory per process (engine.py): the
parent creates and loads the table, then ``release()`` closes its session so that the query
worker can open the directory; the parent reopens it lazily when it needs it again (count,
storage).
"""

from __future__ import annotations

import contextlib
import math
import re
import shutil
from pathlib import Path
from typing import Any

import orjson

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QueryOutcome, QuerySession
from docbench.contracts.common import BatchRejected, StorageSize, Variant, directory_size
from docbench.core.sqlfiles import read_sql_statements, render
from docbench.dataset.lines import read_numbered_lines
from docbench.systems.clickhouse.engine import (
    ClickHouseEngine,
    error_text,
    is_content_error,
    sql_string,
    write_lines,
)

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

# Q2-Q5 filter on the leading sort key columns: their plan must show the primary key in use.
INDEXED_QUERIES = frozenset({2, 3, 4, 5})


def _result_stats(result) -> dict[str, Any]:
    stats: dict[str, Any] = {}
    for name in ("rows_read", "bytes_read", "storage_rows_read", "storage_bytes_read"):
        method = getattr(result, name, None)
        if method is not None:
            with contextlib.suppress(Exception):
                stats[name] = int(method())
    return stats


# ----- loading --------------------------------------------------------------------------------


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
        statements = read_sql_statements(adapter.engine.folder() / "load.sql")
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
        self._insert(self.skipping_statement, path, self.target,
                     errors=sql_string(str(self.errors_path)))
        skipped = self._skipped_rows()
        loaded = self._staged_rows()
        if loaded + len(skipped) != documents or any(not 1 <= n <= documents for n in skipped):
            self._discard_staged()
            raise BatchRejected(f"chDB loaded {loaded} rows and skipped {len(skipped)} of "
                                f"{documents} lines: the skipped lines cannot be named")
        reasons = self._reasons(path, skipped)
        if reasons is None:
            self._discard_staged()
            raise BatchRejected("a line chDB skipped parses on its own: the skipped rows' "
                                "numbers are not their lines")
        return reasons

    def _reasons(self, path: Path, skipped: list[int]) -> dict[int, str] | None:
        """The first MAX_PROBED skipped lines are offered alone for their reason (one chDB
        query each); beyond, the count check vouches for the numbers and the log says that
        chDB gave no reason."""
        probed = skipped[:MAX_PROBED]
        lines = read_numbered_lines(path, probed)
        reasons = {number: (f"skipped by chDB's parser, which gives no reason (the first "
                            f"{MAX_PROBED} skipped lines of the file were checked one by one)")
                   for number in skipped[MAX_PROBED:]}
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
            self.engine.query(f"ALTER TABLE {DATABASE}.{STAGING} MOVE PARTITION ID 'all' "
                              f"TO TABLE {QUALIFIED}")
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


# ----- queries ----------------------------------------------------------------------------------


class ClickHouseSession(QuerySession):
    """A chDB session in the query worker. Rows come back as JSONCompact (64-bit integers
    unquoted) and are parsed with orjson; the engine time is chDB's own ``elapsed()``."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.engine = ClickHouseEngine(Path(spec["workdir"]))
        self.con = self.engine.connect()
        settings = {
            # No result cache (it is off by default; said explicitly, as JSONBench requires).
            "use_query_cache": 0,
            "output_format_json_quote_64bit_integers": 0,
            "output_format_json_quote_64bit_floats": 0,
        }
        timeout = spec.get("timeout")
        if timeout:
            settings["max_execution_time"] = max(1, math.ceil(float(timeout)))
        for name, value in settings.items():
            self.con.query(f"SET {name} = {value}")

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        result = self.con.query(text, "JSONCompact")
        payload = result.bytes()
        rows = orjson.loads(payload)["data"] if payload else []
        extra = _result_stats(result)
        seconds = None
        with contextlib.suppress(Exception):
            seconds = float(result.elapsed())
        return QueryOutcome(rows=[tuple(row) for row in rows], engine_seconds=seconds,
                            engine_memory=None, extra=extra)

    def explain(self, query_number: int, text: str) -> str | None:
        plan = str(self.con.query(f"EXPLAIN indexes = 1 {text}", "TSVRaw")).rstrip()
        with contextlib.suppress(Exception):
            pipeline = str(self.con.query(f"EXPLAIN PIPELINE {text}", "TSVRaw")).rstrip()
            plan += "\n\n-- EXPLAIN PIPELINE\n" + pipeline
        return plan

    def cancel(self) -> None:
        """chDB has no way to interrupt a running ``query()`` from another thread; the
        session's ``max_execution_time`` (from the spec's ``timeout``) stops it, and the runner
        kills the worker process."""

    def close(self) -> None:
        self.engine.release()


# ----- the adapter ----------------------------------------------------------------------------


def _variant(name: str, description: str, role: str, json_parameters: str, codec: str) -> Variant:
    return Variant(name, description, role=role,
                   settings={"json_parameters": json_parameters, "codec": codec})


# Both variants use JSONBench's published JSON type parameters (max_dynamic_paths = 0: the
# paths beyond the five typed ones go to the JSON type's shared data). With the default (1024
# dynamic paths) a part of Bluesky events is ~1,500 files against ~220, and a 100m load hit
# this machine's limit of 20,000 open files per process at 55m documents (merges and the
# insert hold every file of their parts open); the data is 1.5% larger at 1m. The five typed
# paths, the only ones the queries read, are the same either way.
JSONBENCH_JSON_PARAMETERS = "max_dynamic_paths = 0,"

VARIANTS: list[Variant] = [
    _variant("lz4", "JSON column with the JSONBench paths typed (max_dynamic_paths = 0, as "
             "JSONBench), CODEC(LZ4) (JSONBench's LZ4 configuration; ClickHouse 26.9 without a "
             "codec writes parts of 100 MB or more with ZSTD(3))", "default",
             JSONBENCH_JSON_PARAMETERS, "CODEC(LZ4)"),
    _variant("zstd", "the same with CODEC(ZSTD(3)), the smallest measured (JSONBench's "
             "published DDL has ZSTD(1))", "best", JSONBENCH_JSON_PARAMETERS, "CODEC(ZSTD(3))"),
]


class ClickHouseAnalytics(AnalyticsAdapter):
    engine: ClickHouseEngine
    variants = VARIANTS
    retains_structure = True
    # JSONBench inserts 1M-row blocks. Smaller batches mean more, smaller parts and more
    # merging: 100k-line batches loaded a 1M-document file 1.85x slower than the native insert
    # (2.4x with OPTIMIZE FINAL), 1M-line batches 0.96-1.19x (README).
    load_batch_size = 1_000_000

    # ----- loading -------------------------------------------------------------------------
    def create(self) -> None:
        # A fresh directory: no leftovers of an earlier load in the sizes.
        self.engine.release()
        shutil.rmtree(self.engine.path, ignore_errors=True)
        (self.engine.workdir / BATCH_FILE_NAME).unlink(missing_ok=True)
        con = self.engine.connect()
        for statement in read_sql_statements(self.engine.folder() / "ddl.sql"):
            con.query(render(statement, **self.variant.settings))

    def loader(self) -> Loader:
        return ClickHouseLoader(self)

    def finish_load(self) -> None:
        """No forced merge. OPTIMIZE FINAL grew 15x for 10x the data (12.4 s at 1m, 180.7 s at
        10m) and would take hours at 1000m; JSONBench and ClickHouse's users leave merging to
        the server. So, at every scale alike: let the background merges ClickHouse starts by
        itself settle (no merge running for a few seconds), wait until the parts they
        replaced are gone from the disk, and record the number of active parts (storage
        detail ``parts``)."""
        self.finish_step("let the background merges settle (no OPTIMIZE FINAL)",
                         lambda: self.engine.wait_for_merges(DATABASE, TABLE))
        self.finish_step("wait for replaced parts to be removed",
                         lambda: self.engine.wait_for_outdated_parts(DATABASE, TABLE))

    def native_load(self, files: list[Path]) -> None:
        """JSONBench's load_data.sh: ``INSERT INTO ... FORMAT JSONAsObject`` per file (here
        ``FROM INFILE``, read by chDB itself); a file whose insert fails is inserted again with
        the bad rows skipped (``input_format_allow_errors_num``)."""
        statements = read_sql_statements(self.engine.folder() / "load.sql")
        first, second = statements[1], statements[2]
        con = self.engine.connect()
        for path in files:
            literal = sql_string(str(Path(path).resolve()))
            try:
                con.query(render(first, path=literal, table=QUALIFIED))
            except Exception as error:
                if not is_content_error(error):
                    raise
                con.query(render(second, path=literal, table=QUALIFIED))

    def count(self) -> int:
        return int(self.engine.query(f"SELECT count() FROM {QUALIFIED}").strip())

    def storage(self) -> StorageSize:
        """JSONBench's figures from system.parts (active parts): total = bytes_on_disk, data =
        data_compressed_bytes, index = primary_key_size + marks_bytes (the sparse primary
        index file and the mark files that map it to the column files)."""
        self.engine.wait_for_outdated_parts(DATABASE, TABLE)
        text = self.engine.query(
            "SELECT count(), sum(rows), sum(bytes_on_disk), sum(data_compressed_bytes), "
            "sum(data_uncompressed_bytes), sum(primary_key_size), sum(marks_bytes), "
            "sum(primary_key_bytes_in_memory), groupUniqArray(part_type), "
            "groupUniqArray(default_compression_codec) "
            f"FROM system.parts WHERE database = '{DATABASE}' AND table = '{TABLE}' AND active",
            "JSONCompact")
        row = orjson.loads(text)["data"][0]
        parts, rows, total, data, uncompressed, pk, marks, pk_memory, part_types, part_codecs = row
        codec = self.engine.query(
            f"SELECT compression_codec FROM system.columns WHERE database = '{DATABASE}' "
            f"AND table = '{TABLE}' AND name = 'data'").strip()
        detail = {
            "parts": int(parts),
            "rows": int(rows),
            "part_types": sorted(part_types),
            "data_uncompressed_bytes": int(uncompressed),
            "primary_key_size": int(pk),
            "marks_bytes": int(marks),
            "primary_key_bytes_in_memory": int(pk_memory),
            "outdated_parts": self.engine.outdated_parts(DATABASE, TABLE),
            "codec": codec or "none (size-aware default)",
            "parts_default_codec": sorted(part_codecs),
            "json_parameters": self.variant.settings.get("json_parameters", "").strip(" ,"),
        }
        return StorageSize(total=int(total), data=int(data), index=int(pk) + int(marks),
                           on_disk=directory_size(self.engine.workdir), detail=detail)

    # ----- queries -------------------------------------------------------------------------
    def session_spec(self) -> dict[str, Any]:
        return {"workdir": str(self.engine.workdir)}

    @classmethod
    def open_session(cls, spec: dict[str, Any]) -> QuerySession:
        return ClickHouseSession(spec)

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """Q2-Q5 filter on kind and commit.operation (the sort key's first columns): the
        primary key must appear in the plan with a real condition (not ``true``)."""
        if query_number not in INDEXED_QUERIES or not plan:
            return None
        section = plan.split("-- EXPLAIN PIPELINE")[0]
        match = re.search(r"PrimaryKey\s*\n(.*?)(?:\n\s*Ranges:|\Z)", section, re.S)
        if not match:
            return f"Q{query_number}: the plan does not use the primary key"
        condition = re.search(r"Condition:\s*(.+)", match.group(1))
        if condition is None or condition.group(1).strip() == "true":
            return f"Q{query_number}: the primary key is not used to filter (condition: true)"
        return None


ADAPTER = ClickHouseAnalytics
