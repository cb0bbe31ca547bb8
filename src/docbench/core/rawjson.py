"""Values of a JSON text taken out as the bytes they are written with, without parsing them
into Python values (which would round numbers beyond a double and drop duplicate keys): e.g.
each ``_source`` of a search response, which the engine copies verbatim from what it stored."""

from __future__ import annotations


def raw_values_of(text: bytes, key: bytes) -> list[bytes]:
    """The raw bytes of every value whose member name is ``key`` (at any depth, outside
    those values themselves), in order."""
    found: list[bytes] = []
    name = b'"' + key + b'"'
    position = 0
    length = len(text)
    while position < length:
        byte = text[position]
        if byte == 0x22:  # a string: a member name or a value
            end = _string_end(text, position)
            if text[position:end] == name:
                colon = _skip_space(text, end)
                if colon < length and text[colon] == 0x3A:
                    start = _skip_space(text, colon + 1)
                    stop = _value_end(text, start)
                    found.append(text[start:stop])
                    position = stop
                    continue
            position = end
        else:
            position += 1
    return found


def _skip_space(text: bytes, position: int) -> int:
    while position < len(text) and text[position] in b" \t\r\n":
        position += 1
    return position


def _string_end(text: bytes, start: int) -> int:
    """The index after the closing quote of the string that opens at ``start``."""
    position = start + 1
    while position < len(text):
        byte = text[position]
        if byte == 0x5C:
            position += 2
            continue
        if byte == 0x22:
            return position + 1
        position += 1
    raise ValueError("unterminated string")


def _value_end(text: bytes, start: int) -> int:
    """The index after the value that starts at ``start``."""
    if text[start] == 0x22:
        return _string_end(text, start)
    if text[start] not in b"{[":
        position = start
        while position < len(text) and text[position] not in b",}] \t\r\n":
            position += 1
        return position
    depth = 0
    position = start
    while position < len(text):
        byte = text[position]
        if byte == 0x22:
            position = _string_end(text, position)
            continue
        if byte in b"{[":
            depth += 1
        elif byte in b"}]":
            depth -= 1
            if depth == 0:
                return position + 1
        position += 1
    raise ValueError("unterminated value")
