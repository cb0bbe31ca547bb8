"""Spark's analytics loader: each batch of lines goes to the server as an Arrow table through
the Spark Connect session (so a cluster reached by URL needs no shared file system), and
``load.sql`` finds the lines that are not one JSON object, then inserts the others."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import orjson

from docbench.contracts.analytics import Loader
from docbench.contracts.common import BatchRejected
from docbench.contracts.engine import system_folder
from docbench.core.sqlfiles import read_sql_statements, render
from docbench.systems.spark.engine import TABLE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from docbench.systems.spark.analytics import SparkAnalytics

BATCH_VIEW = "docbench_batch"
WHY = {
    "several": "more than one JSON value on the line (Spark's parse_json keeps the first one and "
    "drops the rest without a word: docbench refuses the line)",
    "not_object": "not a JSON object",
}


# Spark's message is asked for this many refused lines of a batch, one query each (its
# try_parse_json, which finds them all in one pass, says only NULL).
PROBED_PER_BATCH = 10
UNPROBED = (
    "Spark's parse_json refuses it (its message was asked for the first "
    f"{PROBED_PER_BATCH} such lines of the batch only)"
)


def trailing_content(line: bytes) -> bool:
    """Whether something follows the line's first JSON value (orjson's word)."""
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError as error:
        message = str(error).lower()
        return "after document" in message or "trailing" in message
    return False


def first_line(text: str) -> str:
    """An error's first line, without the JVM's stack trace."""
    return text.strip().splitlines()[0][:300] if text.strip() else text


class SparkLoader(Loader):
    """Every line Spark's parse_json takes as one JSON object is loaded; each other line is
    named with Spark's reason, in the same pass (O(1) per refusal: nothing is sent twice).
    Each batch is one INSERT (all of it or nothing); a file loaded in batches is committed
    batch by batch."""

    def __init__(self, adapter: SparkAnalytics) -> None:
        self.adapter = adapter
        self.spark = adapter.session()
        # A random sentinel per loader, so that no line can imitate it (load.sql).
        self.sentinel = "docbench-end-" + secrets.token_hex(8)
        self.check, self.insert = (
            render(statement, sentinel=self.sentinel, document=adapter.stored_document())
            for statement in read_sql_statements(system_folder(adapter.engine) / "load.sql")
        )
        # Lines of the current batch at Spark's depth limit, taken alone (load.sql).
        self.rescued: list[int] = []
        # The lines Spark refused in this loader's batches, and why; the lines of the last
        # refused batch (all checked) and those of them taken alone (load_batch): the driver
        # bisects a refused batch, and its parts need no check again.
        self.known_refused: dict[bytes, str] = {}
        self.checked: set[bytes] = set()
        self.checked_rescued: set[bytes] = set()

    def load_batch(self, lines: list[bytes]) -> None:
        """All the lines or none (one refused line: nothing is inserted). A line refused
        before is refused again without asking Spark (its parse is deterministic), and a part
        of the last refused batch goes in unchecked: bisecting a refused batch then costs one
        INSERT per good part."""
        refused = {
            index: self.known_refused[line] for index, line in enumerate(lines) if line in self.known_refused
        }
        if not refused:
            refused = self._undecodable(lines)
        if not refused:
            self._view(lines, refused)
            if self.checked.issuperset(lines):
                # every line was checked in the refused batch this one is a part of
                self.rescued = [index for index, line in enumerate(lines) if line in self.checked_rescued]
            else:
                refused = self._refused_lines(lines)
                self.known_refused.update((lines[index], why) for index, why in refused.items())
                if refused:
                    self.checked = set(lines)
                    self.checked_rescued = {lines[index] for index in self.rescued}
        if refused:
            index, why = min(refused.items())
            raise BatchRejected(f"line {index + 1} of the batch: {why}")
        self._insert([])

    def load_batch_skipping(self, lines: list[bytes]) -> dict[int, str] | None:
        refused = self._undecodable(lines)
        refused.update(self._send(lines, refused))
        return refused

    # ----- the steps ------------------------------------------------------------------------
    @staticmethod
    def _undecodable(lines: list[bytes]) -> dict[int, str]:
        """Lines that are not UTF-8: Spark's strings are UTF-8, its text reader would put
        U+FFFD in their place (a silent change), so they are refused here, with the reason."""
        refused = {}
        for index, line in enumerate(lines):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as error:
                refused[index] = (
                    f"not UTF-8 ({error.reason} at byte {error.start}): Spark's strings are UTF-8"
                )
        return refused

    def _view(self, lines: list[bytes], skip: dict[int, str]) -> None:
        import pyarrow as pa

        indexes = [index for index in range(len(lines)) if index not in skip]
        texts = [lines[index].decode("utf-8") for index in indexes]
        table = pa.table({"i": pa.array(indexes, pa.int64()), "line": pa.array(texts, pa.large_string())})
        self.spark.createDataFrame(table).createOrReplaceTempView(BATCH_VIEW)

    def _refused_lines(self, lines: list[bytes]) -> dict[int, str]:
        found: dict[int, str] = {}
        unparsed = []
        for index, why in self.spark.sql(self.check).collect():
            if str(why) in WHY:
                found[int(index)] = WHY[str(why)]
            else:
                unparsed.append(int(index))
        self.rescued = self._taken_alone(unparsed, lines)
        probed = 0
        for index in unparsed:
            if index in self.rescued:
                continue
            if trailing_content(lines[index]):
                found[index] = WHY["several"]
                continue
            probed += 1
            found[index] = self._parse_error(lines[index]) if probed <= PROBED_PER_BATCH else UNPROBED
        return found

    def _taken_alone(self, indexes: list[int], lines: list[bytes]) -> list[int]:
        """Of the lines that did not parse inside load.sql's array, those Spark takes alone as
        one object (a line at its depth limit: the array adds a level) with nothing after the
        value (orjson says: Spark ignores what follows), in one query."""
        if not indexes:
            return []
        objects = self.spark.sql(
            f"SELECT i FROM {BATCH_VIEW} WHERE i IN ({', '.join(map(str, indexes))}) "
            "AND startswith(schema_of_variant(try_parse_json(line)), 'OBJECT')"
        ).collect()
        return [int(row[0]) for row in objects if not trailing_content(lines[int(row[0])])]

    def _parse_error(self, line: bytes) -> str:
        """Spark's own message for a line parse_json refuses (asked for that line alone)."""
        try:
            self.spark.createDataFrame([(line.decode("utf-8"),)], "line string").selectExpr(
                "parse_json(line)"
            ).collect()
        except Exception as error:  # noqa: BLE001 - the engine's message is the reason
            return first_line(str(error))
        return "Spark's parse_json did not take it as one JSON value"

    def _insert(self, refused: list[int]) -> None:
        self.spark.sql(
            render(
                self.insert,
                refused=", ".join(map(str, refused)) or "-1",
                rescued=", ".join(map(str, self.rescued)) or "-1",
            )
        ).collect()

    def _send(self, lines: list[bytes], skip: dict[int, str]) -> dict[int, str]:
        if len(skip) == len(lines):
            return {}
        self._view(lines, skip)
        found = self._refused_lines(lines)
        if len(found) + len(skip) < len(lines):
            self._insert(sorted(found))
        return found

    def close(self) -> None:
        self.spark.catalog.dropTempView(BATCH_VIEW)


# The inferred columns' corrupt-record column (PERMISSIVE mode: a document whose values do not
# fit the schema is held there, its fields NULL); a name no document's key should take.
CORRUPT_COLUMN = "_docbench_corrupt_record"
MISFIT = (
    "its values do not fit the columns spark.read.json inferred from the first batch "
    "(PERMISSIVE mode put it in the corrupt-record column)"
)
SAMPLE_FILE = "spark-inferred-schema-sample.json"
# The Spark Connect client receives a schema as nested protobuf messages (three per level of
# objects), and protobuf's recursion limit (100) stops it at about 30 levels ("Exception
# deserializing response!"). Where the first batch's schema cannot be received, its lines that
# nest deeper than this are refused and the schema is inferred from the others.
STRUCT_DEPTH_LIMIT = 30
TOO_DEEP = (
    "nests {depth} levels: the columns spark.read.json infers for it are deeper than the Spark "
    "Connect client can receive (protobuf's recursion limit)"
)


def nesting_depth(line: bytes) -> int:
    """The deepest nesting of objects and arrays in a JSON text (brackets in strings ignored)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in line:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x7B, 0x5B):  # { [
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x7D, 0x5D):  # } ]
            depth -= 1
    return deepest


class InferredSchemaLoader(SparkLoader):
    """The variant ``struct``: no document column but the columns ``spark.read.json`` infers.

    The first batch's good lines go to a file the server reads (docbench's own server: the
    same machine), the schema is inferred from all of them (a conflict of types widens to a
    string holding the value's JSON text) and the table is created with it. Every batch is
    read with that schema by ``from_json`` in PERMISSIVE mode: a key the schema lacks is
    dropped, and a document whose values do not fit it lands in the corrupt-record column and
    is refused, with that reason, in the same pass as load.sql's refusals."""

    def __init__(self, adapter: SparkAnalytics) -> None:
        super().__init__(adapter)
        self.sample_path = adapter.engine.workdir / SAMPLE_FILE
        self.schema: StructType | None = None

    def _refused_lines(self, lines: list[bytes]) -> dict[int, str]:
        from pyspark.sql import functions as F

        found = super()._refused_lines(lines)
        if len(found) < len(lines):
            self._ensure_table(lines, found)
        if self.schema is None or len(found) == len(lines):
            return found
        misfits = self._parsed(sorted(found)).where(F.col(f"d.{CORRUPT_COLUMN}").isNotNull()).select("i")
        found.update((int(row[0]), MISFIT) for row in misfits.collect())
        return found

    def _ensure_table(self, lines: list[bytes], refused: dict[int, str]) -> None:
        """The table's schema: the existing table's, or inferred from this batch's lines not
        ``refused`` (and the table created with it). Lines too deep for the client to receive
        their schema are added to ``refused``."""
        if self.schema is not None:
            return
        if self.spark.catalog.tableExists(TABLE):
            self.schema = self.spark.table(TABLE).schema
            return
        good = {index: line for index, line in enumerate(lines) if index not in refused}
        try:
            self.schema = self._infer(list(good.values()))
        except Exception:
            depths = {index: nesting_depth(line) for index, line in good.items()}
            deep = {index: depth for index, depth in depths.items() if depth > STRUCT_DEPTH_LIMIT}
            if not deep:
                raise
            refused.update((index, TOO_DEEP.format(depth=depth)) for index, depth in deep.items())
            rest = [line for index, line in good.items() if index not in deep]
            if not rest:
                return
            self.schema = self._infer(rest)
        location = self.adapter.engine.table_location
        writer = self.spark.createDataFrame([], self.schema).write.format("parquet")
        if location is not None:
            writer = writer.option("path", str(location))
        writer.saveAsTable(TABLE)

    def _infer(self, lines: list[bytes]) -> StructType:
        """The schema spark.read.json infers from the lines (in a file the server reads)."""
        from pyspark.sql.types import StructType

        self.sample_path.parent.mkdir(parents=True, exist_ok=True)
        self.sample_path.write_bytes(b"\n".join(lines) + b"\n")
        try:
            reader = self.spark.read.option("columnNameOfCorruptRecord", CORRUPT_COLUMN)
            inferred = reader.json(str(self.sample_path)).schema
        finally:
            self.sample_path.unlink(missing_ok=True)
        return StructType([field for field in inferred.fields if field.name != CORRUPT_COLUMN])

    def _parsed(self, refused: list[int]) -> DataFrame:
        """The batch's lines but ``refused``: ``i``, and ``d``, the line read with the schema
        and the corrupt-record column."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StringType, StructField, StructType

        assert self.schema is not None
        schema = StructType([*self.schema.fields, StructField(CORRUPT_COLUMN, StringType())])
        batch = self.spark.table(BATCH_VIEW)
        if refused:
            batch = batch.where(~F.col("i").isin(refused))
        options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT_COLUMN}
        return batch.select("i", F.from_json("line", schema, options).alias("d"))

    def _insert(self, refused: list[int]) -> None:
        from pyspark.sql import functions as F

        rows = self._parsed(refused).where(F.col(f"d.{CORRUPT_COLUMN}").isNull()).select("d.*")
        rows.drop(CORRUPT_COLUMN).write.insertInto(TABLE)
