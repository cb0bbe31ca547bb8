"""ClickHouse (chDB) in the analytics workload: one JSON column with the five JSONBench paths
typed, a MergeTree sorted by them, in the engine's database directory.

DDL, load statements and queries are plain SQL files next to this module (``ddl.sql``,
``load.sql``, ``queries.sql``). chDB opens ONE database directory per process (engine.py): the
parent creates and loads the table, then ``release()`` closes its session so that the query
worker can open the directory; the parent reopens it lazily when it needs it again (count,
storage).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import ClassVar

import orjson

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QuerySession
from docbench.contracts.capabilities import BlueskyQueries, LiveIngest, NativeLoad, ReadBack
from docbench.contracts.common import StorageSize, Variant, directory_size
from docbench.contracts.engine import system_folder
from docbench.core.jsontypes import JsonObject, as_str
from docbench.core.ownership import remove_owned_directory
from docbench.core.sqlfiles import read_sql_statements, render
from docbench.systems.clickhouse.engine import (
    ClickHouseEngine,
    chdb_module,
    is_content_error,
    sql_string,
)
from docbench.systems.clickhouse.loader import (
    BATCH_FILE_NAME,
    DATABASE,
    QUALIFIED,
    TABLE,
    ClickHouseLiveLoader,
    ClickHouseLoader,
)
from docbench.systems.clickhouse.session import ClickHouseSession

# Q2-Q5 filter on the leading sort key columns: their plan must show the primary key in use.
INDEXED_QUERIES = frozenset({2, 3, 4, 5})


# ----- the adapter ----------------------------------------------------------------------------


def _variant(
    name: str,
    description: str,
    role: str,
    json_parameters: str,
    codec: str,
    table_settings: str = "",
    max_parts_to_merge_at_once: int = 20,
    server_settings: str = "",
    representation: JsonObject | None = None,
    non_default: str = "",
) -> Variant:
    settings = {
        **({"non_default": non_default} if non_default else {}),
        "json_parameters": json_parameters,
        "codec": codec,
        "max_parts_to_merge_at_once": max_parts_to_merge_at_once,
        "table_settings": table_settings,
        "server_settings": server_settings,
        **(representation or {}),
    }
    return Variant(name, description, role=role, settings=settings)


#: JSONBench's current DDL (clickhouse/ddl.sql since 2025-11-15): the JSON type's v3
#: serializations and the "advanced" shared data (per-path substreams in buckets).
JSONBENCH_TABLE_SETTINGS = (
    ", object_serialization_version = 'v3', dynamic_serialization_version = 'v3', "
    "object_shared_data_serialization_version = 'advanced', "
    "object_shared_data_serialization_version_for_zero_level_parts = 'map_with_buckets'"
)


#: The most parts a merge of the jsonbench variant reads. With the default 1024 dynamic paths a
#: wide part of Bluesky events is ~1,500 files (~750 data files, each held open while a merge
#: reads the part; the part a merge or an insert writes holds all ~1,500), and this machine
#: allows 20,000 open files per process: a 100m load with merges of up to 100 parts failed at
#: 55m documents.
JSONBENCH_MAX_PARTS_TO_MERGE = 5

#: chDB runs up to 4 merges at once (background_pool_size 2 x concurrency ratio 2): 4 merges
#: of 5 wide parts (~5,300 files each) plus an insert would pass 20,000 (two ran at once at
#: 20m documents: 10,759 open files). Ratio 1 keeps at most 2 merges, one per pool thread (a
#: thread runs one merge at a time either way), so at most ~12,500 open files by construction.
JSONBENCH_MERGE_SETTINGS = "background_merges_mutations_concurrency_ratio=1"

#: The ClickHouse version of JSONBench's published ClickHouse results (25.11, 2025-11-15).
#: chDB 26.9 with ``compatibility`` at that version takes its defaults where they changed
#: since: ``date_time_input_format`` 'basic', not 'best_effort' (with best_effort the JSON type
#: types commit.record.createdAt as DateTime64(9), 28% bigger than the string), and the JSON
#: type's v2 and 'map' serializations, not v3 and 'advanced' (little difference here). At 1m:
#: 102.6 MB against 26.9's own defaults' 103.5 MB (README).
JSONBENCH_CLICKHOUSE_VERSION = "25.11"
JSONBENCH_SERVER_SETTINGS = f"{JSONBENCH_MERGE_SETTINGS}&compatibility={JSONBENCH_CLICKHOUSE_VERSION}"

#: One 25.11 default ``compatibility`` does not restore in 26.9: 25.11 wrote String with a
#: separate size stream only where a String is a column of its own (passing the version on
#: to the types inside JSON came in 26.3), and every String of this table is inside the JSON
#: column. JSONBench's 1m size is the same under 25.9 and 25.11 (98.53 MB); with size
#: streams the generated 1m takes 1.8% more (102.6 against 100.7 MB).
JSONBENCH_PUBLISHED_TABLE_SETTINGS = ", string_serialization_version = 'single_stream'"


# lz4 and zstd use JSONBench's published JSON type parameters (max_dynamic_paths = 0: the
# paths beyond the five typed ones go to the JSON type's shared data). With the default (1024
# dynamic paths) a part of Bluesky events is ~1,500 files against ~220, and a 100m load hit
# this machine's limit of 20,000 open files per process at 55m documents (merges and the
# insert hold every file of their parts open); the data is 1.5% larger at 1m. The five typed
# paths, the only ones the queries read, are the same either way.
JSONBENCH_JSON_PARAMETERS = "max_dynamic_paths = 0,"
#: What a report says beside lz4 and zstd: ClickHouse's own default is 1024 dynamic paths.
NOT_CLICKHOUSE_DEFAULT = (
    "max_dynamic_paths = 0, not ClickHouse's default (1024 dynamic paths): measured +1% storage "
    "at 1m and +66% at 10m against the default; x1.59/x2.00 (lz4, 10m/100m) and x1.64/x2.11 (zstd, "
    "10m/100m) "
    "of JSONBench's published bytes in the same codec (systems/clickhouse/README.md); kept until "
    "the default paths with 5-part merges (the jsonbench variant's, within the open-files limit "
    "at 100m) are measured in these codecs"
)

VARIANTS: list[Variant] = [
    _variant(
        "lz4",
        "JSON column with the JSONBench paths typed (max_dynamic_paths = 0, as "
        "JSONBench), CODEC(LZ4) (JSONBench's LZ4 configuration; ClickHouse 26.9 without a "
        "codec writes parts of 100 MB or more with ZSTD(3))",
        "default",
        JSONBENCH_JSON_PARAMETERS,
        "CODEC(LZ4)",
        non_default=NOT_CLICKHOUSE_DEFAULT,
    ),
    _variant(
        "zstd",
        "the same with CODEC(ZSTD(3)), the smallest measured (JSONBench's published DDL has ZSTD(1))",
        "best",
        JSONBENCH_JSON_PARAMETERS,
        "CODEC(ZSTD(3))",
        non_default=NOT_CLICKHOUSE_DEFAULT,
    ),
    _variant(
        "jsonbench",
        "JSONBench's published storage configuration: its DDL (CODEC(ZSTD(1)), the JSON type's "
        f"default 1024 dynamic paths) with ClickHouse {JSONBENCH_CLICKHOUSE_VERSION}'s defaults "
        f"(compatibility = '{JSONBENCH_CLICKHOUSE_VERSION}', the version of its published sizes, "
        "and its String serialization inside JSON: single_stream); "
        "a merge reads at most 5 parts (docbench's others: 20) and at most 2 merges run at once "
        "(concurrency ratio 1), so that merges hold fewer than this machine's 20,000 open files",
        "alt",
        "",
        "CODEC(ZSTD(1))",
        JSONBENCH_PUBLISHED_TABLE_SETTINGS,
        max_parts_to_merge_at_once=JSONBENCH_MAX_PARTS_TO_MERGE,
        server_settings=JSONBENCH_SERVER_SETTINGS,
    ),
    _variant(
        "jsonbench_current",
        "JSONBench's current DDL (max_dynamic_paths = 0, v3 serializations, 'advanced' shared "
        "data, CODEC(ZSTD(1))); its published sizes were measured before it",
        "alt",
        JSONBENCH_JSON_PARAMETERS,
        "CODEC(ZSTD(1))",
        JSONBENCH_TABLE_SETTINGS,
    ),
    _variant(
        "string",
        "each document as its text in a String column (checked by isValidJSON), the paths "
        "extracted with JSONExtract* at query time; sorted by the five paths as expressions; "
        "CODEC(ZSTD(1)) (ddl-string.sql, queries-string.sql)",
        "representation",
        "",
        "CODEC(ZSTD(1))",
        representation={
            "ddl": "ddl-string.sql",
            "queries": "queries-string.sql",
            "input_format": "JSONAsString",
            "representation": "String (the text), JSONExtract at query time",
        },
    ),
    _variant(
        "columns",
        "the document's text (String) and the five JSONBench paths as typed columns beside it, "
        "MATERIALIZED at insert, sorted and queried by the columns; CODEC(ZSTD(1)) "
        "(ddl-columns.sql, queries-columns.sql): a schema by hand, beyond JSONBench's rules",
        "representation",
        "",
        "CODEC(ZSTD(1))",
        representation={
            "ddl": "ddl-columns.sql",
            "queries": "queries-columns.sql",
            "input_format": "JSONAsString",
            "representation": "String + five typed columns",
            "schema_by_hand": True,
        },
    ),
]


class ClickHouseAnalytics(AnalyticsAdapter, BlueskyQueries, LiveIngest, ReadBack, NativeLoad):
    engine: ClickHouseEngine
    variants = VARIANTS
    retains_structure = True
    representation = "JSON type (paths as dynamic subcolumns)"
    # No codec (ClickHouse's size-aware default), 1024 dynamic paths, merges of up to 100 parts.
    engine_defaults: ClassVar[JsonObject] = {
        "codec": "",
        "json_parameters": "",
        "table_settings": "",
        "max_parts_to_merge_at_once": 100,
        "server_settings": "",
    }
    # JSONBench inserts 1M-row blocks. Smaller batches mean more, smaller parts and more
    # merging: 100k-line batches loaded a 1M-document file 1.85x slower than the native insert
    # (2.4x with OPTIMIZE FINAL), 1M-line batches 0.96-1.19x (README).
    load_batch_size = 1_000_000
    refused_hard_kinds = frozenset({"lone_surrogate"})
    native_refusals = "skips"  # input_format_allow_errors_num + the record-errors file
    # chDB's engine is one per process: a second process opening the same path fails
    # ("Error initializing EmbeddedServer", BAD_ARGUMENTS); connections of one process to
    # the same path run queries in parallel.
    concurrent_clients = "threads"

    def __init__(self, engine: ClickHouseEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        engine.server_settings = str(variant.settings.get("server_settings", ""))
        # How the insert reads a line: into the JSON type, or as the document's text.
        self.input_format = str(variant.settings.get("input_format", "JSONAsObject"))

    # ----- loading -------------------------------------------------------------------------
    def create(self) -> None:
        # A fresh directory: no leftovers of an earlier load in the sizes.
        self.engine.release()
        remove_owned_directory(self.engine.path)
        (self.engine.workdir / BATCH_FILE_NAME).unlink(missing_ok=True)
        con = self.engine.connect()
        ddl = str(self.variant.settings.get("ddl", "ddl.sql"))
        for statement in read_sql_statements(system_folder(self.engine) / ddl):
            con.query(render(statement, **{k: str(v) for k, v in self.variant.settings.items()}))

    def loader(self) -> Loader:
        return ClickHouseLoader(self)

    def finish_load(self) -> None:
        """No forced merge. OPTIMIZE FINAL grew 15x for 10x the data (12.4 s at 1m, 180.7 s at
        10m) and would take hours at 1000m; JSONBench and ClickHouse's users leave merging to
        the server. So, at every scale alike: let the background merges ClickHouse starts by
        itself settle (no merge running for a few seconds), wait until the parts they
        replaced are gone from the disk, and record the number of active parts (storage
        detail ``parts``)."""
        self.finish_step(
            "let the background merges settle (no OPTIMIZE FINAL)",
            lambda: self.engine.wait_for_merges(DATABASE, TABLE),
        )
        self.finish_step(
            "wait for replaced parts to be removed",
            lambda: self.engine.wait_for_outdated_parts(DATABASE, TABLE),
        )

    def native_load(self, files: list[Path]) -> None:
        """JSONBench's load_data.sh: ``INSERT INTO ... FORMAT JSONAsObject`` per file (here
        ``FROM INFILE``, read by chDB itself); a file whose insert fails is inserted again with
        the bad rows skipped (``input_format_allow_errors_num``)."""
        statements = read_sql_statements(system_folder(self.engine) / "load.sql")
        first, second = statements[1], statements[2]
        con = self.engine.connect()
        for path in files:
            literal = sql_string(str(Path(path).resolve()))
            try:
                con.query(render(first, path=literal, table=QUALIFIED, format=self.input_format))
            except Exception as error:
                if not is_content_error(error):
                    raise
                con.query(render(second, path=literal, table=QUALIFIED, format=self.input_format))

    def count(self) -> int:
        return int(self.engine.query(f"SELECT count() FROM {QUALIFIED}").strip())

    # Live ingest: the loader, the probe and the query clients are threads of this process,
    # each on a chDB connection of its own to the process's one embedded server (small
    # inserts: each batch a part, merged in the background as a live table's are).

    def live_loader(self) -> Loader:
        return ClickHouseLiveLoader(self)

    def visible_count(self) -> int:
        """The count on a connection of its own (the loader's is busy in another thread)."""
        self.engine.connect()  # the process's embedded server, with the variant's settings
        con = chdb_module().connect(self.engine.connection_string())
        try:
            return int(str(con.query(f"SELECT count() FROM {QUALIFIED}", "TSVRaw")).strip())
        finally:
            con.close()

    def read_back(self) -> list[str]:
        """The JSON type as ClickHouse writes it back (toJSONString); a String as stored."""
        expression = "data" if self.input_format == "JSONAsString" else "toJSONString(data)"
        text = self.engine.query(f"SELECT {expression} AS document FROM {QUALIFIED}", "JSONEachRow")
        # One {"document": "<the document's text>"} per line; json, not orjson: the text may
        # hold an escaped lone surrogate.
        return [json.loads(line)["document"] for line in text.splitlines() if line]

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
            "JSONCompact",
        )
        row = orjson.loads(text)["data"][0]
        parts, rows, total, data, uncompressed, pk, marks, pk_memory, part_types, part_codecs = row
        codec = self.engine.query(
            f"SELECT compression_codec FROM system.columns WHERE database = '{DATABASE}' "
            f"AND table = '{TABLE}' AND name = 'data'"
        ).strip()
        settings = self.variant.settings
        detail: JsonObject = {
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
            "json_parameters": as_str(settings.get("json_parameters", ""), "json_parameters").strip(" ,"),
            "table_settings": as_str(settings.get("table_settings", ""), "table_settings").strip(" ,"),
            "server_settings": self.engine.server_settings,
        }
        return StorageSize(
            total=int(total),
            data=int(data),
            index=int(pk) + int(marks),
            on_disk=directory_size(self.engine.workdir),
            detail=detail,
        )

    # ----- queries -------------------------------------------------------------------------
    def session_spec(self) -> JsonObject:
        return {"workdir": str(self.engine.workdir), "server_settings": self.engine.server_settings}

    @classmethod
    def open_session(cls, spec: JsonObject) -> QuerySession:
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
