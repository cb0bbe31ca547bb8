"""Parsing a line into a document: orjson first, then fallbacks for valid JSON it refuses.

Lines orjson refuses are tried again with the standard ``json`` module (strict UTF-8,
``NaN``/``Infinity`` refused), which accepts valid JSON that orjson does not (lone surrogate
escapes such as ``"\\ud83d"``, numbers beyond a double such as ``1e400``, integers beyond 64
bits where orjson refuses them, nesting deeper than orjson's 1024 levels — beyond Python's
recursion limit the iterative :func:`parse_deep` takes over). What counts as a document is
in :mod:`.semantics`.
"""

from __future__ import annotations

import json
import re
from _json import scanstring  # (json.decoder's own, which its stubs do not export)
from dataclasses import dataclass
from typing import Any, Final

import orjson


class _Invalid:
    """The value of a line that is not JSON. It has no ``.get``: the scan's hot loop tells
    it from a document by that (see :func:`.scan.scan_lines`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "INVALID"


INVALID: Final = _Invalid()

Line = bytes | bytearray  # a line without its newline (a bytearray: a slice of a read block)

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _parse_int(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:  # beyond Python's int-from-str digit limit: still a valid number
        return float(text)


def _skip_ws(s: str, i: int) -> int:
    """The index of the first non-whitespace character at or after ``i``."""
    match = _WS.match(s, i)
    return match.end() if match else i  # (the pattern matches the empty string: always)


def _read_key(s: str, i: int) -> tuple[str, int]:
    """An object's key and the index of its value (after the ``:``)."""
    if s[i : i + 1] != '"':
        raise ValueError(f"expected a key at {i}")
    key, i = scanstring(s, i + 1, True)
    i = _skip_ws(s, i)
    if s[i : i + 1] != ":":
        raise ValueError(f"expected ':' at {i}")
    return key, _skip_ws(s, i + 1)


def _scalar(s: str, i: int) -> tuple[object, int]:
    """The string, literal or number starting at ``i``, and the index after it."""
    if s[i : i + 1] == '"':
        return scanstring(s, i + 1, True)
    for literal, value in (("true", True), ("false", False), ("null", None)):
        if s.startswith(literal, i):
            return value, i + len(literal)
    m = _NUMBER.match(s, i)
    if not m or m.end() == i:
        raise ValueError(f"unexpected character at {i}")
    text = m.group()
    return (float(text) if (m.group(1) or m.group(2)) else _parse_int(text)), m.end()


@dataclass(slots=True)
class _Open:
    """A container :func:`parse_deep` is filling: an object (``key``: where its next value
    goes) or an array."""

    container: dict[str, object] | list[object]
    key: str = ""


def parse_deep(s: str) -> object:
    """An iterative JSON parser (no recursion), for documents nested beyond Python's limit.

    Returns the value, or raises ``ValueError``.
    """
    n = len(s)
    stack: list[_Open] = []
    i = _skip_ws(s, 0)
    value: object
    while True:
        # a value starts at i: open a container, or read a scalar
        c = s[i : i + 1]
        if c == "{":
            i = _skip_ws(s, i + 1)
            if s[i : i + 1] != "}":
                key, i = _read_key(s, i)
                stack.append(_Open({}, key))
                continue
            value, i = {}, i + 1
        elif c == "[":
            i = _skip_ws(s, i + 1)
            if s[i : i + 1] != "]":
                stack.append(_Open([]))
                continue
            value, i = [], i + 1
        else:
            value, i = _scalar(s, i)
        # attach the value to its parents, closing containers as they end
        while True:
            if not stack:
                if _skip_ws(s, i) != n:
                    raise ValueError("extra data")
                return value
            top = stack[-1]
            container = top.container
            is_object = isinstance(container, dict)
            if isinstance(container, dict):
                container[top.key] = value
            else:
                container.append(value)
            i = _skip_ws(s, i)
            ch = s[i : i + 1]
            if ch == ",":
                i = _skip_ws(s, i + 1)
                if is_object:
                    top.key, i = _read_key(s, i)
                break
            if ch == ("}" if is_object else "]"):
                stack.pop()
                value, i = container, i + 1
                continue
            raise ValueError(f"expected ',' or a closing bracket at {i}")


def parse_fallback(line: Line) -> Any:
    """Parse a line orjson refused: a JSON value, or :data:`INVALID`."""
    try:
        text = line.decode("utf-8")  # strict: encoded surrogates and bad bytes are invalid
    except UnicodeDecodeError:
        return INVALID
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int)
    except RecursionError:
        pass
    except ValueError:
        return INVALID
    try:
        return parse_deep(text)
    except (ValueError, IndexError):
        return INVALID


def parse_document(line: Line) -> Any:
    """A line's document (a dict), ``None`` for an empty line, :data:`INVALID` otherwise.
    (The scan's hot loop inlines this.)"""
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError:
        if not line.strip(b" \t\r\n"):
            return None
        doc = parse_fallback(line)
    return doc if type(doc) is dict else INVALID


def json_text(value: object) -> str | None:
    """The grouping key of a non-string JSON value: its compact JSON text (``None`` stays)."""
    if value is None:
        return None
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=True)
