"""JSON path text (``$."a"."b"``) for the SQL engines that read paths so: each key quoted, so
that a key with a dot, a space or a quote is one key."""

from __future__ import annotations


def json_path(keys: tuple[str, ...]) -> str:
    return "$" + "".join('."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"' for key in keys)
