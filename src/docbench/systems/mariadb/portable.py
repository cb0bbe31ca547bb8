"""MariaDB's dialect of the portable queries: JSON_EXTRACT on the document column (JSON text),
strings compared as binary (its collations fold case)."""

from __future__ import annotations

from typing import Any

from docbench.systems.sql.jsonpath import json_path
from docbench.systems.sql.portable import SqlDialect


class MariaDBPortable(SqlDialect):
    type_names = {
        "number": ("INTEGER", "DOUBLE", "DECIMAL"),
        "string": ("STRING",),
        "boolean": ("BOOLEAN",),
        "null": ("NULL",),
        "array": ("ARRAY",),
        "object": ("OBJECT",),
    }

    project_paths = True

    def paths_from(self, inner: str) -> tuple[str, str]:
        # a LIMIT keeps the derived table apart (merged, each path would be read per use)
        return "", f"({inner} LIMIT 18446744073709551615) AS docs"

    def source(self) -> str:
        return f"bluesky_{self.variant.name}"

    def document(self) -> str:
        return "doc"

    def child(self, value: str, keys: tuple[str, ...]) -> str:
        return f"JSON_EXTRACT({value}, {self.quote(json_path(keys))})"

    def type_name(self, value: str) -> str:
        return f"JSON_TYPE({value})"

    def number(self, value: str) -> str:
        return f"CAST(JSON_VALUE({value}, '$') AS DOUBLE)"

    def string(self, value: str) -> str:
        return f"JSON_UNQUOTE({value})"

    def json_text(self, value: str) -> str:
        return value

    def boolean_is(self, value: str, literal: bool) -> str:
        return f"({value} = '{'true' if literal else 'false'}')"

    def quote(self, text: str) -> str:
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    def exact_text(self, text: str) -> str:
        return f"CAST({text} AS BINARY)"

    def starts_with(self, text: str, prefix: str) -> str:
        return f"(CAST(LEFT({text}, {len(prefix)}) AS BINARY) = CAST({self.quote(prefix)} AS BINARY))"

    def contains(self, text: str, part: str) -> str:
        return f"(LOCATE(CAST({self.quote(part)} AS BINARY), CAST({text} AS BINARY)) > 0)"

    def unnest(self, value: str, alias: str) -> tuple[str, str]:
        array = f"CASE WHEN JSON_TYPE({value}) = 'ARRAY' THEN {value} END"
        table = f"JSON_TABLE({array}, '$[*]' COLUMNS (element JSON PATH '$'))"
        return f"CROSS JOIN {table} AS unnested", "unnested.element"

    def to_integer(self, number: str) -> str:
        return f"CAST({number} AS SIGNED)"

    def array_contains(self, value: str, literal: Any) -> str:
        # not JSON_CONTAINS: it looks into nested arrays too ([["x"]] would contain "x")
        items = f"JSON_TABLE({value}, '$[*]' COLUMNS (element JSON PATH '$')) AS item"
        return (
            f"EXISTS (SELECT 1 FROM {items} WHERE {self.truth(self.compare('item.element', 'eq', literal))})"
        )


ADAPTER = MariaDBPortable
