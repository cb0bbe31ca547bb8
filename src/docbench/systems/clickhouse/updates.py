"""ClickHouse (chDB) in the updates workload: ``docbench.ycsb (ycsb_key String DEFAULT
data.ycsb_key, data JSON)``, a MergeTree ORDERed BY ycsb_key (the sparse primary index is
ClickHouse's natural key index). The key has its own column because a column in the sorting
key cannot be updated, and the bulk update rewrites ``data``.

ClickHouse has no in-place partial update of a JSON value: both styles assign
``data = CAST(jsonMergePatch(toJSONString(data), '{"field11": ...}') AS JSON)``:

* ``lightweight``: ``UPDATE ... SET ... WHERE 1`` (lightweight updates, 25.7+; the table has
  ``enable_block_number_column`` / ``enable_block_offset_column``): writes *patch parts* with
  the new values, applied on read until a merge materializes them (OPTIMIZE FINAL);
* ``mutation``: ``ALTER TABLE ... UPDATE ... WHERE 1`` with ``mutations_sync = 2``: rewrites
  the column in every part (a heavy, asynchronous operation in normal use; waited for here).

Point updates are lightweight updates (one patch part each); point reads apply pending patches.
Maintenance: ``OPTIMIZE TABLE FINAL`` (merges to one part, patches applied), then waits for
the replaced parts to leave the disk. chDB keeps one session per process (engine.py): the
key-value session shares it (its close() leaves it open).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import ClassVar

import orjson

from docbench.contracts.common import StorageSize, Variant, directory_size
from docbench.contracts.updates import KeyValueSession, UpdatesTarget
from docbench.core.jsontypes import JsonObject, as_object, as_str
from docbench.systems.clickhouse.engine import ClickHouseEngine, chdb_module, sql_string, write_lines

VARIANTS: list[Variant] = [
    Variant(
        "default",
        "JSON column + ycsb_key String column (DEFAULT data.ycsb_key), MergeTree ORDER BY ycsb_key",
        settings={"type": "JSON", "index": "order-by"},
    ),
]
DATABASE = "docbench"
TABLE = "ycsb"
QUALIFIED = f"{DATABASE}.{TABLE}"


def _patch(field: str, value: str) -> str:
    text = sql_string(json.dumps({field: value}))
    return f"CAST(jsonMergePatch(toJSONString(data), '{text}') AS JSON)"


# Sessions of one process share its chDB server; their queries run one at a time.
_QUERIES = threading.Lock()


class ClickHouseKeyValueSession(KeyValueSession):
    def __init__(self, spec: JsonObject) -> None:
        self.engine = ClickHouseEngine(Path(as_str(spec["workdir"], "workdir")))

    def _query(self, sql: str, fmt: str):
        with _QUERIES:
            return self.engine.connect().query(sql, fmt)

    def read(self, key: str) -> JsonObject | None:
        text = str(
            self._query(
                f"SELECT toJSONString(data) FROM {QUALIFIED} WHERE ycsb_key = '{sql_string(key)}' LIMIT 1",
                "TSVRaw",
            )
        ).strip()
        return as_object(json.loads(text), "document") if text else None

    def update_field(self, key: str, field: str, value: str) -> int:
        """chDB reports no row count for UPDATE (rows_written() is 0 whether or not the key
        exists), so the key's rows are counted first, under the same lock: the documents
        changed, at the price of one more point read per update."""
        where = f"WHERE ycsb_key = '{sql_string(key)}'"
        with _QUERIES:
            session = self.engine.connect()
            matched = int(str(session.query(f"SELECT count() FROM {QUALIFIED} {where}", "TSV")).strip())
            if matched:
                session.query(f"UPDATE {QUALIFIED} SET data = {_patch(field, value)} {where}", "TSV")
        return matched

    def insert(self, doc: dict[str, str]) -> None:
        self._query(f"INSERT INTO {QUALIFIED} (data) FORMAT JSONAsObject {json.dumps(doc)}", "TSV")

    def close(self) -> None:
        """The process's chDB session stays open (the target uses it too)."""


class ClickHouseUpdates(UpdatesTarget):
    engine: ClickHouseEngine
    styles: ClassVar[list[str]] = ["lightweight", "mutation"]
    # Throughput workload: one embedded server per process, bound to one directory.
    max_client_processes: ClassVar[int] = 1
    concurrency_note: ClassVar[str] = (
        "chDB: one embedded ClickHouse per process, bound to one path; the clients are threads "
        "of one worker process and their queries run one at a time (a process-wide lock: the "
        "chDB session is not safe for concurrent queries)"
    )

    def q(self, sql: str, fmt: str = "TSVRaw") -> str:
        return self.engine.query(sql, fmt).strip()

    def engine_info(self) -> JsonObject:
        return {"chdb": chdb_module().__version__, "clickhouse": self.q("SELECT version()")}

    def create(self) -> None:
        self.q(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
        self.q(f"DROP TABLE IF EXISTS {QUALIFIED} SYNC")
        self.q(f"""CREATE TABLE {QUALIFIED} (
                     ycsb_key String DEFAULT data.ycsb_key::String,
                     data JSON)
                   ENGINE = MergeTree ORDER BY ycsb_key
                   SETTINGS enable_block_number_column = 1, enable_block_offset_column = 1,
                            cleanup_delay_period = 1, max_cleanup_delay_period = 1,
                            cleanup_delay_period_random_add = 0""")

    def load(self, docs: list[bytes]) -> None:
        batch = self.engine.workdir / "load.ndjson"
        write_lines(batch, docs)
        try:
            self.q(
                f"INSERT INTO {QUALIFIED} (data) FROM INFILE '{sql_string(str(batch))}' "
                "SETTINGS max_insert_block_size = 1000000000, "
                "min_insert_block_size_rows = 1000000000, min_insert_block_size_bytes = 0 "
                "FORMAT JSONAsObject"
            )
        finally:
            batch.unlink(missing_ok=True)

    def create_key_index(self) -> None:
        """The sorting key (ORDER BY ycsb_key) is the index; nothing to build."""

    def count(self) -> int:
        return int(self.q(f"SELECT count() FROM {QUALIFIED}"))

    def count_field(self, field: str, value: str) -> int:
        return int(
            self.q(f"SELECT count() FROM {QUALIFIED} WHERE toString(data.`{field}`) = '{sql_string(value)}'")
        )

    def bulk_update_styles(self) -> list[str]:
        return list(self.styles)

    def bulk_add_field(self, style: str, field: str, value: str) -> int:
        if style == "lightweight":
            self.q(f"UPDATE {QUALIFIED} SET data = {_patch(field, value)} WHERE 1")
        elif style == "mutation":
            self.q(
                f"ALTER TABLE {QUALIFIED} UPDATE data = {_patch(field, value)} WHERE 1 "
                "SETTINGS mutations_sync = 2"
            )
        else:
            raise ValueError(f"unknown style {style!r}")
        return -1  # ClickHouse does not report rows changed by an update

    def maintain(self) -> str:
        self.q(f"OPTIMIZE TABLE {QUALIFIED} FINAL")
        self.engine.wait_for_outdated_parts(DATABASE, TABLE)
        return "OPTIMIZE TABLE FINAL"

    def sizes(self) -> StorageSize:
        row = orjson.loads(
            self.q(
                "SELECT count(), sum(bytes_on_disk), sum(data_compressed_bytes), "
                "sum(primary_key_size) + sum(marks_bytes), countIf(startsWith(name, 'patch-')), "
                "sumIf(bytes_on_disk, startsWith(name, 'patch-')) "
                f"FROM system.parts WHERE database = '{DATABASE}' AND table = '{TABLE}' AND active",
                "JSONCompact",
            )
        )["data"][0]
        parts, total, data, index, patches, patch_bytes = row
        return StorageSize(
            total=int(total),
            data=int(data),
            index=int(index),
            on_disk=directory_size(self.engine.path),
            detail={"parts": int(parts), "patch_parts": int(patches), "patch_bytes": int(patch_bytes)},
        )

    def extra_stats(self) -> JsonObject:
        return {
            "mutations": int(
                self.q(
                    f"SELECT count() FROM system.mutations WHERE database = '{DATABASE}' "
                    f"AND table = '{TABLE}'"
                )
                or 0
            )
        }

    def session_spec(self) -> JsonObject:
        return {"workdir": str(self.engine.workdir)}

    @classmethod
    def open_session(cls, spec: JsonObject) -> ClickHouseKeyValueSession:
        return ClickHouseKeyValueSession(spec)


ADAPTER = ClickHouseUpdates
