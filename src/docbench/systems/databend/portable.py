"""Databend's dialect of the portable queries: paths read with ``[key]`` on the VARIANT column
(binary JSON: no text parsed, so a path is read where it is used), JSON types by
``json_typeof``."""

from __future__ import annotations

from typing import Any

from docbench.systems.sql.portable import SqlDialect, sql_literal_json


class DatabendPortable(SqlDialect):
    type_names = {
        "number": ("number",),
        "string": ("string",),
        "boolean": ("boolean",),
        "null": ("null",),
        "array": ("array",),
        "object": ("object",),
    }

    def quote(self, text: str) -> str:
        # Databend's string literals read backslash escapes.
        return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"

    def source(self) -> str:
        return "documents"

    def document(self) -> str:
        return "doc"

    def child(self, value: str, keys: tuple[str, ...]) -> str:
        # [key] on anything but an object is NULL (missing).
        return value + "".join(f"[{self.quote(key)}]" for key in keys)

    def type_name(self, value: str) -> str:
        return f"json_typeof({value})"

    def number(self, value: str) -> str:
        return f"TRY_CAST({value} AS DOUBLE)"

    def string(self, value: str) -> str:
        return f"as_string({value})"

    def json_text(self, value: str) -> str:
        # ::STRING gives a string's text unquoted; inside an array it is written as JSON.
        array = f"json_array({value})::STRING"
        inner = f"substr({array}, 2, CAST(length({array}) - 2 AS UInt64))"
        return f"CASE WHEN {value} IS NULL THEN NULL ELSE {inner} END"

    def from_json_text(self, text: str) -> str:
        return f"parse_json({text})"

    def boolean_is(self, value: str, literal: bool) -> str:
        return f"(as_boolean({value}) = {'TRUE' if literal else 'FALSE'})"

    def contains(self, text: str, part: str) -> str:
        return f"(position({self.quote(part)} IN {text}) > 0)"

    def unnest(self, value: str, alias: str) -> tuple[str, str]:
        array = f"CASE WHEN json_typeof({value}) = 'array' THEN {value} END"
        return f", LATERAL FLATTEN(input => {array}) AS unnested", "unnested.value"

    def epoch_of_iso(self, text: str) -> str:
        return f"to_unix_timestamp(try_to_timestamp({text}))"

    def array_contains(self, value: str, literal: Any) -> str:
        item = self.quote(sql_literal_json([literal]))
        return f"json_contains_in_left({value}, parse_json({item}))"


ADAPTER = DatabendPortable
