"""PostgreSQL's dialect of the portable queries: jsonb operators on the document column (the
json representation is read as jsonb: parsed at every read, as its queries do)."""

from __future__ import annotations

from typing import Any

from docbench.systems.sql.portable import SqlDialect, sql_literal_json

# ISO 8601 text PostgreSQL's timestamptz input reads as ISO 8601 (it has no try-cast: any
# other text would fail the whole query).
ISO_8601 = r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$"


class PostgreSQLPortable(SqlDialect):
    type_names = {t: (t,) for t in ("number", "string", "boolean", "null", "array", "object")}

    project_paths = True

    def paths_from(self, inner: str) -> tuple[str, str]:
        # OFFSET 0: the planner keeps the subquery (pulled up, each path would be read per use)
        return "", f"({inner} OFFSET 0) AS docs"

    def source(self) -> str:
        return f"bluesky_{self.variant.name}"

    def document(self) -> str:
        return "data::jsonb" if self.variant.settings.get("representation") == "json" else "data"

    def child(self, value: str, keys: tuple[str, ...]) -> str:
        # `->` with a text key reads objects only (`#>` would index an array by "0").
        for key in keys:
            value = f"({value} -> {self.quote(key)})"
        return value

    def type_name(self, value: str) -> str:
        return f"jsonb_typeof({value})"

    def number(self, value: str) -> str:
        # guarded here: nothing makes PostgreSQL evaluate the type test of an AND first
        return f"CASE WHEN jsonb_typeof({value}) = 'number' THEN CAST({value} AS numeric) END"

    def string(self, value: str) -> str:
        return f"({value} #>> '{{}}')"

    def json_text(self, value: str) -> str:
        return f"CAST({value} AS text)"

    def from_json_text(self, text: str) -> str:
        return f"CAST({text} AS jsonb)"

    def boolean_is(self, value: str, literal: bool) -> str:
        return f"({value} = '{'true' if literal else 'false'}'::jsonb)"

    def exact_text(self, text: str) -> str:
        return f'({text} COLLATE "C")'

    def unnest(self, value: str, alias: str) -> tuple[str, str]:
        array = f"CASE WHEN jsonb_typeof({value}) = 'array' THEN {value} END"
        return f"CROSS JOIN LATERAL jsonb_array_elements({array}) AS unnested(element)", "unnested.element"

    def epoch_of_iso(self, text: str) -> str:
        return (
            f"CASE WHEN {text} ~ {self.quote(ISO_8601)} "
            f"THEN extract(epoch FROM CAST({text} AS timestamptz)) END"
        )

    def array_contains(self, value: str, literal: Any) -> str:
        return f"({value} @> {self.quote('[' + sql_literal_json(literal) + ']')}::jsonb)"


ADAPTER = PostgreSQLPortable
