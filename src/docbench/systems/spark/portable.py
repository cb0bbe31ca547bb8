"""Spark's dialect of the portable queries, on the VARIANT column (the JSON text's variant is
parsed once per row, in the FROM clause): paths read with ``variant_get``, JSON types from the
first character of ``to_json`` (Spark has no JSON type function: ``schema_of_variant`` spells
numbers as INT, BIGINT, DECIMAL(p,s), DOUBLE...), arrays unnested with ``explode`` of the
array as ``ARRAY<VARIANT>``."""

from __future__ import annotations

import re
from typing import Any

from docbench.contracts.portable import NotExpressible
from docbench.systems.sql.portable import SqlDialect

TABLE = "docbench.documents"
PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class SparkPortable(SqlDialect):
    type_names = {name: (name,) for name in ("number", "string", "boolean", "null", "array", "object")}

    def quote(self, text: str) -> str:
        # Spark's string literals read backslash escapes.
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    def check_representation(self) -> None:
        if self.variant.settings.get("inferred_schema"):
            raise NotExpressible(
                f"spark/{self.variant.name}: the documents are columns inferred from the first batch, "
                "not JSON: a path it did not see has no column"
            )

    def source(self) -> str:
        if self.variant.settings.get("column_type") == "STRING":
            return f"(SELECT parse_json(doc) AS doc FROM {TABLE}) AS documents"
        return TABLE

    def document(self) -> str:
        return "doc"

    def child(self, value: str, keys: tuple[str, ...]) -> str:
        steps = []
        for key in keys:
            if PLAIN_KEY.match(key):
                steps.append("." + key)
            elif "'" not in key and "\\" not in key:
                steps.append(f"['{key}']")
            else:
                raise NotExpressible(f"spark: the key {key!r} cannot be written in a variant path")
        # variant_get's path is itself a string literal: its brackets' quotes escaped there.
        path = "$" + "".join(steps)
        return f"variant_get({value}, {self.quote(path)})"

    def type_name(self, value: str) -> str:
        first = f"substr(to_json({value}), 1, 1)"
        return (
            f"CASE WHEN {value} IS NULL THEN NULL ELSE CASE {first} WHEN '{{' THEN 'object' "
            "WHEN '[' THEN 'array' WHEN '\"' THEN 'string' WHEN 't' THEN 'boolean' "
            "WHEN 'f' THEN 'boolean' WHEN 'n' THEN 'null' ELSE 'number' END END"
        )

    def number(self, value: str) -> str:
        return f"try_variant_get({value}, '$', 'double')"

    def string(self, value: str) -> str:
        return f"try_variant_get({value}, '$', 'string')"

    def json_text(self, value: str) -> str:
        return f"to_json({value})"

    def from_json_text(self, text: str) -> str:
        return f"parse_json({text})"

    def boolean_is(self, value: str, literal: bool) -> str:
        return f"(try_variant_get({value}, '$', 'boolean') = {'TRUE' if literal else 'FALSE'})"

    def starts_with(self, text: str, prefix: str) -> str:
        return f"startswith({text}, {self.quote(prefix)})"

    def contains(self, text: str, part: str) -> str:
        return f"contains({text}, {self.quote(part)})"

    def group_value(self, value: str) -> str:
        # Spark cannot group by a VARIANT: its JSON text is the key.
        return f"to_json({value})"

    def key_text(self, column: str) -> str:
        return column

    def unnest(self, value: str, alias: str) -> tuple[str, str]:
        # An array as ARRAY<VARIANT> (NULL for anything else: no rows), exploded.
        array = f"try_variant_get({value}, '$', 'array<variant>')"
        return f"LATERAL VIEW explode({array}) unnested AS value", "unnested.value"

    def epoch_of_iso(self, text: str) -> str:
        return f"unix_micros(try_to_timestamp({text})) / 1000000.0"

    def array_contains(self, value: str, literal: Any) -> str:
        element = self.truth(self.compare("element", "eq", literal))
        return f"exists(try_variant_get({value}, '$', 'array<variant>'), element -> {element})"


ADAPTER = SparkPortable
