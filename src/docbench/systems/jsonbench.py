"""Which docbench system and variant each JSONBench configuration corresponds to.

JSONBench (https://github.com/ClickHouse/JSONBench) names a configuration by the ``system`` of
its result files ("ClickHouse", "PostgreSQL (pglz)", "Elasticsearch (no source)"). This is the
one table that says which docbench system/variant measures the same thing, and in docbench's
terms what JSONBench's DDL set (``settings``, compared with the variant's ``variant_settings``
by ``docbench compare``; None where the published DDL is not known for that name). It lives
among the systems because it names them (nothing outside ``systems/`` does).

Rows for unqualified names describe the DDL of the JSONBench commit shipped with docbench
(``report/published/jsonbench.json``): ClickHouse ``CODEC(ZSTD(1))`` with ``max_dynamic_paths
= 0``, PostgreSQL ``JSONB COMPRESSION lz4``, MongoDB ``block_compressor=zstd``, Elasticsearch's
index templates with ``codec: best_compression``. A configuration docbench has no variant for
(another system, Elasticsearch's lz4/zstd codecs, MongoDB's covered-index query variants) is
not in the table: ``docbench compare`` lists it as unmatched, with its name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Counterpart:
    jsonbench: str  # JSONBench's `system`, exactly as its result files spell it
    system: str  # docbench's registry name
    variant: str  # the docbench variant of that system
    settings: dict[str, Any] | None  # JSONBench's configuration in the variant's terms
    note: str = ""  # what still differs between the two


_CLICKHOUSE_V3 = "JSONBench also sets the v3 object/dynamic serialization settings"
_ES_INDEX = "JSONBench: a data stream with index sorting on kind, operation, collection, did, time"

COUNTERPARTS: tuple[Counterpart, ...] = (
    Counterpart(
        "ClickHouse",
        "clickhouse",
        "zstd",
        {"json_parameters": "max_dynamic_paths = 0,", "codec": "CODEC(ZSTD(1))"},
        f"JSONBench ZSTD(1), docbench ZSTD(3); {_CLICKHOUSE_V3}",
    ),
    Counterpart("ClickHouse (zstd)", "clickhouse", "zstd", None, "an earlier JSONBench DDL"),
    Counterpart("ClickHouse (lz4)", "clickhouse", "lz4", None, "an earlier JSONBench DDL"),
    Counterpart("DuckDB", "duckdb", "default", {}),
    Counterpart("PostgreSQL", "postgresql", "lz4", {"compression": "lz4"}),
    Counterpart("PostgreSQL (lz4)", "postgresql", "lz4", {"compression": "lz4"}),
    Counterpart("PostgreSQL (pglz)", "postgresql", "pglz", {"compression": "pglz"}),
    Counterpart("MongoDB", "mongodb", "zstd", {"compressor": "zstd"}),
    Counterpart("MongoDB (zstd)", "mongodb", "zstd", {"compressor": "zstd"}),
    Counterpart("MongoDB (snappy)", "mongodb", "snappy", {"compressor": "snappy"}),
    Counterpart(
        "Elasticsearch",
        "elasticsearch",
        "best_compression",
        {"source": True, "codec": "best_compression"},
        _ES_INDEX,
    ),
    Counterpart(
        "Elasticsearch (best compression)",
        "elasticsearch",
        "best_compression",
        {"source": True, "codec": "best_compression"},
        _ES_INDEX,
    ),
    Counterpart(
        "Elasticsearch (default)", "elasticsearch", "default", {"source": True, "codec": "default"}, _ES_INDEX
    ),
    Counterpart(
        "Elasticsearch (default compression)",
        "elasticsearch",
        "default",
        {"source": True, "codec": "default"},
        _ES_INDEX,
    ),
    Counterpart(
        "Elasticsearch (no source)",
        "elasticsearch",
        "no_source_best_compression",
        {"source": False, "codec": "best_compression", "retains_structure": False},
        _ES_INDEX,
    ),
    Counterpart(
        "Elasticsearch (no source, best compression)",
        "elasticsearch",
        "no_source_best_compression",
        {"source": False, "codec": "best_compression", "retains_structure": False},
        _ES_INDEX,
    ),
    Counterpart(
        "Elasticsearch (no source, default)",
        "elasticsearch",
        "no_source",
        {"source": False, "codec": "default", "retains_structure": False},
        _ES_INDEX,
    ),
    Counterpart(
        "Elasticsearch (no source, default compression)",
        "elasticsearch",
        "no_source",
        {"source": False, "codec": "default", "retains_structure": False},
        _ES_INDEX,
    ),
    Counterpart("VictoriaLogs", "victorialogs", "default", {}),
)

_BY_NAME = {row.jsonbench: row for row in COUNTERPARTS}


def counterpart(jsonbench_system: str) -> Counterpart | None:
    """The docbench system/variant of a JSONBench configuration, or None when there is none."""
    return _BY_NAME.get(jsonbench_system)
