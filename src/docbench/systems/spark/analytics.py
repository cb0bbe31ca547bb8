"""Spark in the analytics workload: one column holding the whole document in Parquet files, no
index. DDL, load statements and queries are plain SQL files next to this module (``ddl.sql``,
``load.sql``, ``queries.sql``, ``queries-json-string.sql``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QuerySession
from docbench.contracts.capabilities import BlueskyQueries, ReadBack
from docbench.contracts.common import StorageSize, Variant, directory_size
from docbench.contracts.engine import system_folder
from docbench.core.jsontypes import JsonMapping, JsonObject
from docbench.core.sqlfiles import read_sql_statements, render
from docbench.systems.spark.engine import TABLE, SparkEngine
from docbench.systems.spark.loader import InferredSchemaLoader, SparkLoader
from docbench.systems.spark.session import SparkQuerySession

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession

SHREDDING = "spark.sql.variant.writeShredding.enabled"
# queries.sql's {time_us}: the document's time_us when Spark holds it as an integer (an integer
# type, or a DECIMAL of scale 0: an integer beyond 64 bits, or a shredded 4.1 file's integer
# column) that fits in a BIGINT; else NULL.
TIME_US = (
    "CASE WHEN schema_of_variant(variant_get(doc, '$.time_us')) IN ('TINYINT', 'SMALLINT', 'INT', 'BIGINT') "
    "OR (startswith(schema_of_variant(variant_get(doc, '$.time_us')), 'DECIMAL(') "
    "AND endswith(schema_of_variant(variant_get(doc, '$.time_us')), ',0)')) "
    "THEN try_variant_get(doc, '$.time_us', 'bigint') END"
)

VARIANTS: list[Variant] = [
    Variant(
        "variant",
        "VARIANT column (Spark's binary JSON) in Parquet, Spark 4.1's defaults: the writer "
        "shreds the variant (the paths it finds in each file's first rows also become typed "
        "Parquet columns), snappy, no index",
        role="default",
        settings={"column_type": "VARIANT", "shredding": "true"},
    ),
    Variant(
        "variant_unshredded",
        "VARIANT column in Parquet, not shredded (spark.sql.variant.writeShredding.enabled = "
        "false: each document one binary value, as Spark 4.0 wrote them)",
        role="alt",
        settings={"column_type": "VARIANT", "shredding": "false"},
    ),
    Variant(
        "struct",
        "the columns spark.read.json infers from the first batch loaded (STRUCTs, typed values, "
        "a conflict of types widened to the value's JSON text) in Parquet: a key the schema "
        "lacks is dropped, a document whose values do not fit it is refused (PERMISSIVE mode's "
        "corrupt-record column); no VARIANT column, no index (queries-struct.sql)",
        role="representation",
        settings={
            "inferred_schema": True,
            "queries": "queries-struct.sql",
            "representation": "columns inferred by spark.read.json (STRUCT)",
            "retains_structure": False,
            # Keys that differ only in case ("key", "Key") are two columns, as in the JSON.
            "session_conf": {"spark.sql.caseSensitive": "true"},
        },
        # The schema is inferred from a file the server reads (the loader writes it in
        # docbench's own directory): a server reached by URL does not see it.
        own_server_only=True,
    ),
    Variant(
        "json_string",
        "the JSON text in a STRING column (Parquet, snappy), queried with get_json_object, "
        "which parses each row's text for each path",
        role="alt",
        settings={
            "column_type": "STRING",
            "queries": "queries-json-string.sql",
            "representation": "JSON text (STRING)",
        },
    ),
]


class SparkAnalytics(AnalyticsAdapter, BlueskyQueries, ReadBack):
    engine: SparkEngine
    variants = VARIANTS
    retains_structure = True
    representation = "VARIANT (Spark's binary JSON)"
    engine_defaults = {"shredding": "true"}
    load_batch_size = 100_000
    # Spark's lines are found and named in one pass (load.sql), per batch.
    native_refusals = "skips"
    # parse_json refuses nesting beyond 1000 levels (the generator's deep document has 1001).
    # It takes an escaped lone surrogate, but stores "?" in its place (fidelity shows it).
    refused_hard_kinds = frozenset({"deep_nesting"})

    # ----- loading -------------------------------------------------------------------------
    @property
    def inferred_schema(self) -> bool:
        """The variant ``struct``: columns spark.read.json infers, no document column."""
        return bool(self.variant.settings.get("inferred_schema"))

    def session(self) -> SparkSession:
        """The engine's shared session, with the variant's session settings."""
        spark = self.engine.session()
        for key, value in self.session_conf().items():
            spark.conf.set(key, value)
        return spark

    def session_conf(self) -> dict[str, str]:
        conf = self.variant.settings.get("session_conf") or {}
        return {str(key): str(value) for key, value in dict(conf).items()}  # type: ignore[arg-type]

    def ddl(self) -> list[str]:
        location = self.engine.table_location
        column_type = self.variant.settings.get("column_type")
        return [
            render(
                statement,
                columns=f"(doc {column_type})" if column_type else "",
                location=f"LOCATION '{location}'" if location is not None else "",
            )
            for statement in read_sql_statements(system_folder(self.engine) / "ddl.sql")
        ]

    def stored_document(self) -> str:
        """What load.sql stores of a line: the parsed value, or the line's text."""
        if self.variant.settings.get("column_type") == "VARIANT":
            return "CASE WHEN a IS NULL THEN parse_json(line) ELSE variant_get(a, '$[0]') END"
        return "line"

    def create(self) -> None:
        spark = self.session()
        spark.sql(f"DROP TABLE IF EXISTS {TABLE}").collect()
        self.engine.remove_table_files()
        spark.conf.set(SHREDDING, str(self.variant.settings.get("shredding", "true")))
        # The inferred columns' table is made by the loader, from its first batch's schema.
        statements = self.ddl()[:1] if self.inferred_schema else self.ddl()
        for statement in statements:
            spark.sql(statement).collect()

    def loader(self) -> Loader:
        spark = self.session()
        spark.conf.set(SHREDDING, str(self.variant.settings.get("shredding", "true")))
        if self.inferred_schema:
            return InferredSchemaLoader(self)
        return SparkLoader(self)

    def count(self) -> int:
        return int(self.session().sql(f"SELECT count(*) FROM {TABLE}").collect()[0][0])

    def read_back(self) -> list[str]:
        """Each document as Spark writes it back as JSON text (``to_json`` of the VARIANT,
        or of the row of inferred columns: a NULL field is left out; the stored text of a
        STRING)."""
        column = {"VARIANT": "to_json(doc)", "STRING": "doc"}.get(
            str(self.variant.settings.get("column_type")), "to_json(struct(*))"
        )
        return [str(row[0]) for row in self.session().sql(f"SELECT {column} FROM {TABLE}").collect()]

    def storage(self) -> StorageSize:
        """The table's Parquet files (in docbench's warehouse; by URL, the size Spark's own
        statistics give: ANALYZE TABLE)."""
        location = self.engine.table_location
        if location is not None:
            files = [path for path in location.rglob("*.parquet")] if location.exists() else []
            data = sum(path.stat().st_size for path in files)
            detail: JsonObject = {"files": len(files), "compression": "snappy"}
            return StorageSize(
                total=data, data=data, index=0, on_disk=directory_size(location), detail=detail
            )
        spark = self.session()
        spark.sql(f"ANALYZE TABLE {TABLE} COMPUTE STATISTICS NOSCAN").collect()
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {TABLE}").collect()
        statistics = next((str(row[1]) for row in rows if str(row[0]) == "Statistics"), "0 bytes")
        data = int(statistics.split()[0])
        return StorageSize(total=data, data=data, index=0, on_disk=None, detail={"statistics": statistics})

    # ----- queries -------------------------------------------------------------------------
    def sql_names(self) -> dict[str, str]:
        return {"table": TABLE, "time_us": TIME_US}

    def session_spec(self) -> JsonObject:
        cluster = self.engine.cluster
        return {
            "url": self.engine.base_url(),
            "conf": dict(self.session_conf()),
            "ddl": list(self.ddl()),
            "servers": [str(d) for d in cluster.directories()] if cluster is not None else [],
        }

    @classmethod
    def open_session(cls, spec: JsonMapping) -> QuerySession:
        return SparkQuerySession(spec)


ADAPTER = SparkAnalytics
