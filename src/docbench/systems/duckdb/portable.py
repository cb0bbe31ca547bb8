"""DuckDB's dialect of the portable queries: JSON functions on the document column (a VARIANT
column is read as JSON; the inferred STRUCT columns have no paths to read)."""

from __future__ import annotations

from typing import Any

from docbench.contracts.portable import NotExpressible
from docbench.systems.sql.jsonpath import json_path
from docbench.systems.sql.portable import SqlDialect, sql_literal_json


class DuckDBPortable(SqlDialect):
    type_names = {
        "number": ("BIGINT", "UBIGINT", "DOUBLE", "HUGEINT"),
        "string": ("VARCHAR",),
        "boolean": ("BOOLEAN",),
        "null": ("NULL",),
        "array": ("ARRAY",),
        "object": ("OBJECT",),
    }

    def check_representation(self) -> None:
        if self.variant.settings.get("inferred_schema"):
            raise NotExpressible(
                f"duckdb/{self.variant.name}: the documents are columns inferred from the first file, "
                "not JSON: a path it did not see has no column"
            )

    project_paths = True

    def projections(self, paths: list[tuple[str, ...]]) -> tuple[str, list[str]]:
        """Every path in one json_extract: the document is parsed once per row."""
        listed = ", ".join(self.quote(json_path(keys)) for keys in paths)
        return f"json_extract({self.document()}, [{listed}]) AS v", [
            f"docs.v[{i + 1}]" for i in range(len(paths))
        ]

    def source(self) -> str:
        return "documents"

    def document(self) -> str:
        return "CAST(doc AS JSON)" if self.variant.settings.get("doc_type") == "VARIANT" else "doc"

    def child(self, value: str, keys: tuple[str, ...]) -> str:
        return f"json_extract({value}, {self.quote(json_path(keys))})"

    def type_name(self, value: str) -> str:
        return f"json_type({value})"

    def number(self, value: str) -> str:
        # TRY_CAST: DuckDB evaluates both sides of an AND, the type test does not guard it
        return f"TRY_CAST({value} AS DOUBLE)"

    def string(self, value: str) -> str:
        return f"json_extract_string({value}, '$')"

    def json_text(self, value: str) -> str:
        return f"CAST({value} AS VARCHAR)"

    def from_json_text(self, text: str) -> str:
        return f"CAST({text} AS JSON)"

    def unnest(self, value: str, alias: str) -> tuple[str, str]:
        array = f"CASE WHEN json_type({value}) = 'ARRAY' THEN json_extract({value}, '$[*]') END"
        return f"CROSS JOIN unnest({array}) AS unnested(element)", "unnested.element"

    def epoch_of_iso(self, text: str) -> str:
        return f"epoch(TRY_CAST({text} AS TIMESTAMPTZ))"

    def array_contains(self, value: str, literal: Any) -> str:
        item = f"CAST({self.quote(sql_literal_json(literal))} AS JSON)"
        return f"list_contains(json_extract({value}, '$[*]'), {item})"


ADAPTER = DuckDBPortable
