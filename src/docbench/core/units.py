"""Counts and sizes as users type them: ``1m``, ``20k``, ``1000m``, ``1b``, ``512MB``, ``2g``."""

from __future__ import annotations

import re

_COUNT = re.compile(r"(\d+(?:\.\d+)?)([kmb]?)")
_COUNT_FACTORS = {"": 1, "k": 1_000, "m": 1_000_000, "b": 1_000_000_000}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*")
_SIZE_FACTORS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_count(text: str | int) -> int:
    """A document count: ``1m``, ``10m``, ``1000m``, ``1b``, ``20k``, ``2_000`` or an int.

    Raises ValueError with the accepted forms for anything else (``7q``, ``-1``, ``0.5``).
    """
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"not a count: {text} (must not be negative)")
        return text
    value = text.strip().lower().replace("_", "")
    match = _COUNT.fullmatch(value)
    if not match:
        raise ValueError(f"not a count: {text!r} (use e.g. 20000, 20k, 1m, 1000m, 1b)")
    number = float(match.group(1)) * _COUNT_FACTORS[match.group(2)]
    if number != int(number):
        raise ValueError(f"not a whole count: {text!r}")
    return int(number)


def count_label(count: int) -> str:
    """The short form of a count, as used in file names: 1m, 100k, 1234."""
    if count and count % 1_000_000 == 0:
        return f"{count // 1_000_000}m"
    if count and count % 1_000 == 0:
        return f"{count // 1_000}k"
    return str(count)


def parse_size(text: str) -> int:
    """A size in bytes: ``512``, ``64k``, ``16MB``, ``2g``, ``1.5GiB`` (binary units)."""
    match = _SIZE.fullmatch(text.lower())
    if not match:
        raise ValueError(f"not a size: {text!r} (use e.g. 512MB, 2g)")
    return int(float(match.group(1)) * _SIZE_FACTORS[match.group(2)])
