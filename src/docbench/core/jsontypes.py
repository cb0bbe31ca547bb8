"""JSON as the type checker sees it: values read from files, engines and the wire.

A value parsed from JSON is one of `JsonValue`'s cases, never `Any`: code that walks it narrows
each step (`as_object(doc["load"])["offered"]`), so a wrong guess about a document's shape is a
type error here or a clear `TypeError` at run time, not a silent `None` three calls later.
Documents whose shape is known have a model instead (`docbench.results.models`, TypedDicts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias, TypeGuard

JsonScalar: TypeAlias = str | int | float | bool | None
JsonValue: TypeAlias = "JsonScalar | list[JsonValue] | dict[str, JsonValue]"
JsonObject: TypeAlias = "dict[str, JsonValue]"
JsonArray: TypeAlias = "list[JsonValue]"
# What a reader accepts: any mapping of JSON values (a dict of floats is one; dict is invariant).
JsonMapping: TypeAlias = "Mapping[str, JsonValue]"


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def is_object(value: object) -> TypeGuard[JsonObject]:
    return isinstance(value, dict)


def as_object(value: object, what: str = "value") -> JsonObject:
    """`value` as a JSON object, or a TypeError naming `what` was expected."""
    if isinstance(value, dict):
        return value
    raise TypeError(f"{what}: expected a JSON object, got {_kind(value)}")


def as_array(value: object, what: str = "value") -> JsonArray:
    if isinstance(value, list):
        return value
    raise TypeError(f"{what}: expected a JSON array, got {_kind(value)}")


def as_str(value: object, what: str = "value") -> str:
    if isinstance(value, str):
        return value
    raise TypeError(f"{what}: expected a string, got {_kind(value)}")


def as_int(value: object, what: str = "value") -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(f"{what}: expected an integer, got {_kind(value)}")


def as_float(value: object, what: str = "value") -> float:
    """A JSON number (an integer too) as a float."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise TypeError(f"{what}: expected a number, got {_kind(value)}")


def object_or_empty(value: object) -> JsonObject:
    """An optional object: `{}` when absent (None), the object otherwise."""
    return {} if value is None else as_object(value)


def optional_float(value: object, what: str = "value") -> float | None:
    return None if value is None else as_float(value, what)


def optional_int(value: object, what: str = "value") -> int | None:
    return None if value is None else as_int(value, what)


def optional_str(value: object, what: str = "value") -> str | None:
    return None if value is None else as_str(value, what)


def as_json(value: object, what: str = "value") -> JsonValue:
    """`value` when it is JSON all the way down (a TypeError naming the first part that is not)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list):
        return [as_json(item, f"{what}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, dict):
        return {as_str(key, what): as_json(item, f"{what}.{key}") for key, item in value.items()}
    raise TypeError(f"{what}: not a JSON value: {_kind(value)}")


def json_record(record: Mapping[str, object], what: str = "record") -> JsonObject:
    """A record of a fixed shape (a TypedDict) as the JSON object a result holds: the same keys
    in the same order, each value checked (the type checker does not take a TypedDict for a
    JsonObject, and a copy key by key would repeat the TypedDict)."""
    return as_object(as_json(dict(record), what), what)
