"""ClickHouse's dialect of the portable queries: JSONExtract* over the document's text (the
String representations' column; a JSON-type column through toJSONString, which is what
ClickHouse stores of it: no path holding null, typed values as it inferred them)."""

from __future__ import annotations

from typing import Any

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

    def exact(self) -> str | None:
        if self.document() == "data":
            return None
        return (
            "the JSON type keeps no path that holds null, and a path it types (a typed path, "
            "or a type it inferred) reads as that type's default where a document lacks it"
        )

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


ADAPTER = ClickHousePortable
