"""Which docbench system and variant each JSONBench configuration corresponds to.

JSONBench (https://github.com/ClickHouse/JSONBench) names a configuration by the ``system`` of
its result files ("ClickHouse", "PostgreSQL (pglz)", "Elasticsearch (no source)"). This is the
one table that says which docbench system/variant measures the same thing, and in docbench's
terms what JSONBench's DDL set (``settings``, compared with the variant's ``variant_settings``
by ``docbench compare``; None where the published DDL is not known for that name). It lives
among the systems because it names them (nothing outside ``systems/`` does).

Rows for unqualified names describe the DDL of the JSONBench commit shipped with docbench
(``report/published/jsonbench.json``), except ClickHouse's, whose published sizes were measured
with its earlier DDL (``CODEC(ZSTD(1))``, the default dynamic paths); PostgreSQL ``JSONB
COMPRESSION lz4`` with its index created before the load (docbench's variant ``jsonbench``,
JSONBench's DDL), MongoDB ``block_compressor=zstd``, Elasticsearch's index templates with
``codec: best_compression`` fed by Filebeat (the variants ``jsonbench`` and
``jsonbench_no_source``). A configuration docbench has no variant for (another system,
Elasticsearch's lz4/zstd codecs, MongoDB's covered-index query variants) is not in the table:
``docbench compare`` lists it as unmatched, with its name.
"""

from __future__ import annotations

from dataclasses import dataclass

from docbench.core.jsontypes import JsonObject


@dataclass(frozen=True)
class Counterpart:
    jsonbench: str  # JSONBench's `system`, exactly as its result files spell it
    system: str  # docbench's registry name
    variant: str  # the docbench variant of that system
    settings: JsonObject | None  # JSONBench's configuration in the variant's terms
    note: str = ""  # what still differs between the two


# JSONBench's ClickHouse sizes of its shipped commit are those measured with its DDL before
# 2025-11-15 (default dynamic paths): its commit b910b4d changed the DDL (max_dynamic_paths = 0,
# v3 serializations) and kept the sizes byte for byte. docbench's clickhouse/jsonbench is that
# DDL on ClickHouse 25.11's defaults (the version of the sizes; chDB is 26.9), with merges of at
# most 5 parts (this machine's open files).
_CLICKHOUSE_NOTE = (
    "JSONBench's sizes predate its current DDL (max_dynamic_paths = 0, v3: docbench's "
    "clickhouse/jsonbench_current); docbench runs its DDL on ClickHouse 25.11's defaults "
    "(compatibility, String inside JSON in one stream) and merges at most 5 parts (open files)"
)
# JSONBench's DuckDB figures are DuckDB 1.1.3's (the CLI), which stores a row group uncompressed
# when one of its documents is 4 KiB or longer; the project's DuckDB (the duckdb system, 2.x) is
# not paired with them: each JSONBench name has one counterpart here.
_DUCKDB_NOTE = (
    "JSONBench: the DuckDB 1.1.3 CLI, its chunk of 100k lines lost whole on a refused document "
    "(docbench: only that document); docbench's queries; current DuckDB: the duckdb system"
)
# postgresql/jsonbench's settings
_PG_JSONBENCH: JsonObject = {"compression": "lz4", "ddl": "ddl-jsonbench.sql"}
_PG_NOTE = "JSONBench: PostgreSQL 16 with the package's settings"
# elasticsearch/jsonbench's settings without its _source and codec (JSONBench's template, the
# documents as its Filebeat sent them, time_us a millisecond date).
_ES_JSONBENCH: JsonObject = {
    "index": "index-jsonbench.json",
    "queries": "queries-jsonbench.json",
    "documents": "filebeat",
    "time_precision_us": 1000,
}
_ES_SOURCE: JsonObject = {"source": True, "codec": "best_compression", **_ES_JSONBENCH}
_ES_NO_SOURCE: JsonObject = {
    "source": False,
    "codec": "best_compression",
    **_ES_JSONBENCH,
    "retains_structure": False,
}
_ES_NOTE = "JSONBench: a data stream (one backing index) under ILM, loaded by Filebeat 8.17"
_ES_DEFAULT = (
    "no jsonbench variant has the default codec: docbench's own mapping and raw documents "
    "(time_us a long), not JSONBench's template and Filebeat's"
)
_VL_TOTAL = (
    "total: docbench's is VictoriaLogs' vl_data_size_bytes (storage + indexdb), JSONBench's values + "
    "dictionaries + bloom filters (docbench's detail.jsonbench_total); data and index are measured alike"
)

COUNTERPARTS: tuple[Counterpart, ...] = (
    Counterpart(
        "ClickHouse",
        "clickhouse",
        "jsonbench",
        {
            "json_parameters": "",
            "codec": "CODEC(ZSTD(1))",
            "max_parts_to_merge_at_once": 100,
            "table_settings": "",
        },
        _CLICKHOUSE_NOTE,
    ),
    Counterpart("ClickHouse (zstd)", "clickhouse", "zstd", None, "an earlier JSONBench DDL"),
    Counterpart("ClickHouse (lz4)", "clickhouse", "lz4", None, "an earlier JSONBench DDL"),
    Counterpart("DuckDB", "duckdb113", "jsonbench", {}, _DUCKDB_NOTE),
    Counterpart("PostgreSQL", "postgresql", "jsonbench", _PG_JSONBENCH, _PG_NOTE),
    Counterpart(
        "PostgreSQL (lz4)", "postgresql", "jsonbench", _PG_JSONBENCH, f"an earlier JSONBench; {_PG_NOTE}"
    ),
    Counterpart(
        "PostgreSQL (pglz)",
        "postgresql",
        "pglz",
        {"compression": "pglz"},
        "an earlier JSONBench: its DDL (index created before the load) with pglz; docbench's pglz "
        "builds its index after the load (its jsonbench variant, JSONBench's DDL, is lz4)",
    ),
    Counterpart("MongoDB", "mongodb", "zstd", {"compressor": "zstd"}),
    Counterpart("MongoDB (zstd)", "mongodb", "zstd", {"compressor": "zstd"}),
    Counterpart("MongoDB (snappy)", "mongodb", "snappy", {"compressor": "snappy"}),
    Counterpart("Elasticsearch", "elasticsearch", "jsonbench", _ES_SOURCE, _ES_NOTE),
    Counterpart("Elasticsearch (best compression)", "elasticsearch", "jsonbench", _ES_SOURCE, _ES_NOTE),
    Counterpart(
        "Elasticsearch (default)",
        "elasticsearch",
        "default",
        {"source": True, "codec": "default"},
        f"{_ES_NOTE}; {_ES_DEFAULT}",
    ),
    Counterpart(
        "Elasticsearch (default compression)",
        "elasticsearch",
        "default",
        {"source": True, "codec": "default"},
        f"{_ES_NOTE}; {_ES_DEFAULT}",
    ),
    Counterpart("Elasticsearch (no source)", "elasticsearch", "jsonbench_no_source", _ES_NO_SOURCE, _ES_NOTE),
    Counterpart(
        "Elasticsearch (no source, best compression)",
        "elasticsearch",
        "jsonbench_no_source",
        _ES_NO_SOURCE,
        _ES_NOTE,
    ),
    Counterpart(
        "Elasticsearch (no source, default)",
        "elasticsearch",
        "no_source",
        {"source": False, "codec": "default", "retains_structure": False},
        f"{_ES_NOTE}; {_ES_DEFAULT}",
    ),
    Counterpart(
        "Elasticsearch (no source, default compression)",
        "elasticsearch",
        "no_source",
        {"source": False, "codec": "default", "retains_structure": False},
        f"{_ES_NOTE}; {_ES_DEFAULT}",
    ),
    Counterpart("VictoriaLogs", "victorialogs", "default", {}, _VL_TOTAL),
)

_BY_NAME = {row.jsonbench: row for row in COUNTERPARTS}


def counterpart(jsonbench_system: str) -> Counterpart | None:
    """The docbench system/variant of a JSONBench configuration, or None when there is none."""
    return _BY_NAME.get(jsonbench_system)
