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
from docbench.systems.clickhouse.engine import (
    ClickHouseEngine,
    error_text,
    is_content_error,
    sql_string,
    write_lines,
)

BATCH_FILE_NAME = "load-batch.ndjson"
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
    """Each batch is written to a temporary ndjson file in the work dir and inserted with
    ``INSERT ... FROM INFILE ... FORMAT JSONAsObject`` as one insert block: all or nothing."""

    def __init__(self, adapter: ClickHouseAnalytics) -> None:
        self.engine = adapter.engine
        self.batch_size = adapter.load_batch_size
        self.batch_path = adapter.engine.workdir / BATCH_FILE_NAME
        self.template = read_sql_statements(adapter.engine.folder() / "load.sql")[0]
        self.rows_written = 0

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        write_lines(self.batch_path, lines)
        self._insert_file(self.batch_path)

    def load_file(self, path: Path, documents: int) -> bool:
        """The whole file with INSERT ... FROM INFILE, as by hand; the statement's settings
        make it one insert block, so it is all or nothing like a batch."""
        if documents > self.batch_size:
            return False  # keep the memory of one insert block bounded, as for batches
        self._insert_file(path)
        return True

    def _insert_file(self, path: Path) -> None:
        con = self.engine.connect()
        statement = render(self.template, path=sql_string(str(path)))
        try:
            result = con.query(statement, "TSV")
        except Exception as error:
            if is_content_error(error):
                raise BatchRejected(error_text(error)) from error
            raise
        with contextlib.suppress(Exception):
            self.rows_written += int(result.rows_written())

    def close(self) -> None:
        self.batch_path.unlink(missing_ok=True)


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


VARIANTS: list[Variant] = [
    _variant("lz4", "JSON column with the JSONBench paths typed, CODEC(LZ4) (JSONBench's "
             "LZ4 configuration; ClickHouse 26.9 without a codec writes parts of 100 MB or "
             "more with ZSTD(3))", "default", "", "CODEC(LZ4)"),
    _variant("zstd", "the same with CODEC(ZSTD(3)), the smallest measured (JSONBench's "
             "published DDL, ZSTD(1) with max_dynamic_paths = 0, was 3% larger)", "best",
             "", "CODEC(ZSTD(3))"),
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
        """Merge every part into one (JSONBench does not, its server merges in the background;
        one part makes sizes and query times independent of merge timing), then wait until
        the replaced parts are gone from the disk."""
        self.finish_step("OPTIMIZE TABLE FINAL",
                         lambda: self.engine.query(f"OPTIMIZE TABLE {QUALIFIED} FINAL"))
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
                con.query(render(first, path=literal))
            except Exception as error:
                if not is_content_error(error):
                    raise
                con.query(render(second, path=literal))

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
