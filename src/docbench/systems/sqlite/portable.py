"""SQLite's dialect of the portable queries: ``->`` gives a path's value as JSON text (NULL
when missing, 'null' for JSON null), of a JSON text or a JSONB blob column alike."""

from __future__ import annotations

from typing import Any

from docbench.systems.sql.jsonpath import json_path
from docbench.systems.sql.portable import SqlDialect


class SQLitePortable(SqlDialect):
    type_names = {
        "number": ("integer", "real"),
        "string": ("text",),
        "boolean": ("true", "false"),
        "null": ("null",),
        "array": ("array",),
        "object": ("object",),
    }

    # Not read once per row: `->` on a JSONB blob reads no text, and a materialized subquery
    # costs a whole table's copy, even for a point lookup.
    project_paths = False

    def source(self) -> str:
        return "documents"

    def document(self) -> str:
        return "doc"

    def child(self, value: str, keys: tuple[str, ...]) -> str:
        return f"({value} -> {self.quote(json_path(keys))})"

    def type_name(self, value: str) -> str:
        return f"json_type({value})"

    def number(self, value: str) -> str:
        return f"({value} ->> '$')"

    def string(self, value: str) -> str:
        return f"({value} ->> '$')"

    def json_text(self, value: str) -> str:
        return value

    def boolean_is(self, value: str, literal: bool) -> str:
        return f"(json_type({value}) = {self.quote('true' if literal else 'false')})"

    def contains(self, text: str, part: str) -> str:
        return f"(instr({text}, {self.quote(part)}) > 0)"

    def unnest(self, value: str, alias: str) -> tuple[str, str]:
        array = f"CASE WHEN json_type({value}) = 'array' THEN {value} END"
        return f"JOIN json_each({array}) AS unnested", f"({value} -> ('$[' || unnested.key || ']'))"

    def epoch_of_iso(self, text: str) -> str:
        return f"unixepoch({text})"

    def to_integer(self, number: str) -> str:
        return f"CAST({number} AS INTEGER)"

    def array_contains(self, value: str, literal: Any) -> str:
        if literal is None:
            test = "item.type = 'null'"
        elif isinstance(literal, bool):
            test = f"item.type = '{'true' if literal else 'false'}'"
        elif isinstance(literal, int | float):
            test = f"item.type IN ('integer', 'real') AND item.value = {self.number_literal(literal)}"
        else:
            test = f"item.type = 'text' AND item.value = {self.quote(literal)}"
        return f"EXISTS (SELECT 1 FROM json_each({value}) AS item WHERE {test})"


ADAPTER = SQLitePortable
