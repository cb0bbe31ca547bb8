"""ClickHouse's dialect of the portable queries: JSONExtract* over the document's text (the
String representations' column; a JSON-type column through toJSONString, which is what
ClickHouse stores of it: no path holding null, typed values as it inferred them)."""

from __future__ import annotations

import re
from typing import Any

from docbench.contracts.engine import system_file
from docbench.contracts.portable import CompiledQuery
from docbench.queries.spec import BUCKET_CYCLES, BUCKET_UNITS, Query
from docbench.systems.sql.portable import SqlDialect, sql_literal_json


class ClickHousePortable(SqlDialect):
    type_names = {
        "number": ("Int64", "UInt64", "Double"),
        "string": ("String",),
        "boolean": ("Bool",),
        "null": ("Null",),
        "array": ("Array",),
        "object": ("Object",),
    }

    project_paths = True

    def source(self) -> str:
        return "docbench.bluesky"

    def document(self) -> str:
        ddl = str(self.variant.settings.get("ddl", "ddl.sql"))
        return "data" if ddl in ("ddl-string.sql", "ddl-columns.sql") else "toJSONString(data)"

    def child(self, value: str, keys: tuple[str, ...]) -> str:
        return f"JSONExtractRaw({value}, {', '.join(self.quote(k) for k in keys)})"

    def present(self, value: str) -> str:
        return f"({value} != '')"

    def is_type(self, value: str, *json_types: str) -> str:
        names = ", ".join(self.quote(n) for t in json_types for n in self.type_names[t])
        return f"({value} != '' AND toString(JSONType({value})) IN ({names}))"

    def type_name(self, value: str) -> str:
        return f"toString(JSONType({value}))"

    def number(self, value: str) -> str:
        return f"JSONExtract({value}, 'Float64')"

    def string(self, value: str) -> str:
        return f"JSONExtractString({value})"

    def json_text(self, value: str) -> str:
        return f"nullIf({value}, '')"

    def from_json_text(self, text: str) -> str:
        return f"ifNull({text}, '')"

    def boolean_is(self, value: str, literal: bool) -> str:
        return f"({value} = '{'true' if literal else 'false'}')"

    def quote(self, text: str) -> str:
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    def starts_with(self, text: str, prefix: str) -> str:
        return f"startsWith({text}, {self.quote(prefix)})"

    def contains(self, text: str, part: str) -> str:
        return f"(position({text}, {self.quote(part)}) > 0)"

    def unnest(self, value: str, alias: str) -> tuple[str, str]:
        return f"ARRAY JOIN JSONExtractArrayRaw({value}) AS unnested_element", "unnested_element"

    def epoch_of_iso(self, text: str) -> str:
        return f"toUnixTimestamp(parseDateTime64BestEffortOrNull({text}, 6, 'UTC'))"

    def to_integer(self, number: str) -> str:
        return f"toInt64({number})"

    def array_contains(self, value: str, literal: Any) -> str:
        return f"has(JSONExtractArrayRaw({value}), {self.quote(sql_literal_json(literal))})"


# A typed path of the JSON column (`kind LowCardinality(String)` in ddl.sql's JSON(...)).
TYPED_PATH = re.compile(
    r"^\s*([A-Za-z_][\w.]*) (LowCardinality\(String\)|String|UInt64|Int64|Float64)(?!\w)", re.M
)
DATES = ("DateTime", "DateTime64(9)", "Date")
NUMBERS = ("Int64", "UInt64", "Float64", "Int32", "UInt32", "Int16", "UInt16", "Int8", "UInt8")


class ClickHouseJSONPortable(ClickHousePortable):
    """The JSON type read through its own subcolumns (``data.a.b``: a Dynamic, or the type a
    typed path declares), not through its text: the form a person writes, and the fast one.
    A value is the subcolumn cast to Dynamic (typed paths too), so that ``dynamicType`` says
    what it holds ('None' where the document has nothing, or an object: ``data.^a.b``). A
    query that unnests is compiled over the document's text (ClickHousePortable): an array of
    objects has no subcolumns to join."""

    project_paths = False  # subcolumns are read as columns: nothing to parse per use

    def exact(self) -> str | None:
        return (
            "the JSON type keeps no path that holds null; a typed path reads as its type's default "
            "where a document lacks it (a typed string's '' is read as missing)"
        )

    def __init__(self, engine: Any, variant: Any) -> None:
        super().__init__(engine, variant)
        self.text = ClickHousePortable(engine, variant)
        ddl = system_file(self.engine, str(variant.settings.get("ddl", "ddl.sql"))).read_text()
        self.typed = {tuple(m.group(1).split(".")): m.group(2) for m in TYPED_PATH.finditer(ddl)}

    def compile(self, query: Query) -> CompiledQuery:
        if query.unnest is not None:
            return self.text.compile(query)
        compiled = super().compile(query)
        # toJSONString writes 64-bit integers as numbers (as they were sent), not strings; a
        # Dynamic value is a group key (grouped by its type and value)
        settings = (
            " SETTINGS output_format_json_quote_64bit_integers = 0, allow_suspicious_types_in_group_by = 1"
        )
        return CompiledQuery(compiled.text + settings, compiled.json_columns)

    def key_text(self, column: str) -> str:
        return f"toJSONString({column})"

    def document(self) -> str:
        return "data"

    def child(self, value: str, keys: tuple[str, ...]) -> str:
        column = "data." + ".".join(f"`{k}`" for k in keys)
        return f"CAST({column} AS Dynamic)" if keys not in self.typed else column

    def typed_type(self, value: str) -> str | None:
        for keys, declared in self.typed.items():
            if value == "data." + ".".join(f"`{k}`" for k in keys):
                return declared
        return None

    @staticmethod
    def object_of(value: str) -> str:
        """The sub-object at the value's path (``data.^a.b``)."""
        return value.replace("CAST(data.", "data.^", 1).removesuffix(" AS Dynamic)")

    def present(self, value: str) -> str:
        declared = self.typed_type(value)
        if declared:
            # A typed path reads as its default where a document lacks it: a typed string's ''
            # is taken for missing (as JSONBench's queries take it), a typed number's 0 is not.
            return "1" if declared in NUMBERS else f"({value} != '')"
        return f"(dynamicType({value}) != 'None' OR notEmpty(JSONAllPaths({self.object_of(value)})))"

    def is_type(self, value: str, *json_types: str) -> str:
        declared = self.typed_type(value)
        if declared is not None:
            kind = "number" if declared in NUMBERS else "string"
            return ("1" if kind == "number" else self.present(value)) if kind in json_types else "0"
        tests = []
        for json_type in json_types:
            if json_type == "number":
                tests.append(f"dynamicType({value}) IN ({', '.join(self.quote(n) for n in NUMBERS)})")
            elif json_type == "string":
                tests.append(f"dynamicType({value}) IN ('String', 'LowCardinality(String)')")
            elif json_type == "boolean":
                tests.append(f"dynamicType({value}) = 'Bool'")
            elif json_type == "array":
                tests.append(f"startsWith(dynamicType({value}), 'Array')")
            elif json_type == "object":
                tests.append(
                    f"(dynamicType({value}) = 'None' AND notEmpty(JSONAllPaths({self.object_of(value)})))"
                )
            else:  # null: the JSON type keeps no path that holds null
                tests.append("0")
        return "(" + " OR ".join(tests) + ")"

    def number(self, value: str) -> str:
        return value if self.typed_type(value) else f"toFloat64OrNull(toString({value}))"

    def string(self, value: str) -> str:
        return value if self.typed_type(value) else f"toString({value})"

    def boolean_is(self, value: str, literal: bool) -> str:
        return f"(toString({value}) = '{'true' if literal else 'false'}')"

    def json_text(self, value: str) -> str:
        declared = self.typed_type(value)
        if declared:
            return (
                f"toJSONString({value})"
                if declared in NUMBERS
                else f"if({value} = '', NULL, toJSONString({value}))"
            )
        inner = self.object_of(value)
        whole = f"if(notEmpty(JSONAllPaths({inner})), toJSONString({inner}), NULL)"
        return f"if(dynamicType({value}) = 'None', {whole}, toJSONString({value}))"

    def order_terms(self, query: Query, column: str, desc: bool) -> list[str]:
        return self.text.order_terms(query, column, desc)  # the output columns are JSON text

    def array_contains(self, value: str, literal: Any) -> str:
        return self.text.array_contains(f"ifNull(toJSONString({value}), '')", literal)

    def epoch_of_iso(self, text: str) -> str:
        return self.text.epoch_of_iso(text)

    def bucket(self, key: Any, value: str) -> str:
        """ISO 8601 text may have been typed as a date at insert (date_time_input_format =
        'best_effort', ClickHouse's default since 26.5): its seconds are read from the date."""
        if key.time_format != "iso8601" or self.typed_type(value):
            return super().bucket(key, value)
        dates = " OR ".join(f"dynamicType({value}) = '{t}'" for t in DATES)
        seconds = ", ".join(
            [f"toUnixTimestamp(parseDateTime64BestEffortOrNull(dynamicElement({value}, 'String'), 6, 'UTC'))"]
            + [f"toUnixTimestamp(dynamicElement({value}, '{t}'))" for t in DATES]
        )
        width = BUCKET_UNITS[key.unit]
        start = f"(toInt64(FLOOR(coalesce({seconds}) / {width})) * {width})"
        if key.unit in BUCKET_CYCLES:
            start = f"(toInt64(FLOOR(coalesce({seconds}) / {width})) % {BUCKET_CYCLES[key.unit]})"
        return f"CASE WHEN {self.is_type(value, 'string')} OR {dates} THEN {start} END"


def adapter_for(engine: Any, variant: Any) -> ClickHousePortable:
    """The JSON type's subcolumns, or the text for the String representations."""
    ddl = str(variant.settings.get("ddl", "ddl.sql"))
    if ddl in ("ddl-string.sql", "ddl-columns.sql"):
        return ClickHousePortable(engine, variant)
    return ClickHouseJSONPortable(engine, variant)


ADAPTER = adapter_for
