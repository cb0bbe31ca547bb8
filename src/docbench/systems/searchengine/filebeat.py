"""The documents as JSONBench's Filebeat sent them to Elasticsearch (the variants
``jsonbench`` and ``jsonbench_no_source``).

JSONBench (https://github.com/ClickHouse/JSONBench, ``elasticsearch/config/filebeat.yml``,
Filebeat 8.17.0) does not index the raw lines: Filebeat decodes each one (ndjson parser, keys at
the root), runs its processors and encodes the event again. What changes the stored bytes:

* ``rename``: ``commit.record.subject`` becomes ``commit.record.subject.value`` when it has
  no ``cid`` (a string in follows and blocks: one mapping can then hold every document), the
  same for ``commit.record.embed.images.data`` (never met: ``images`` is an array, which a
  field path does not enter);
* ``drop_fields``: ``log``, ``agent``, ``ecs``, ``host``, ``input`` (Filebeat's own fields);
* ``script``: ``time_us`` becomes the string of the JavaScript number ``time_us / 1000``
  (milliseconds, e.g. ``"1732206349000.167"``), which the index maps as a ``date``;
* ``@timestamp``: the time Filebeat read the line, first in the document;
* key order: Filebeat's encoder walks Go maps, whose order Go randomises per map (one of the
  rotations of the insertion order for up to 8 keys, hash buckets beyond). The order of the
  keys changes how well ``_source`` compresses, so it is reproduced (:func:`go_map_order`,
  from a seeded generator: the same lines get the same orders).

A line this cannot read (not JSON, nesting deeper than Python recurses) is passed on as it is:
Elasticsearch then refuses it with its own reason, as it would have refused Filebeat's event.
"""

from __future__ import annotations

import json
import random
import re
from datetime import UTC, datetime
from decimal import Decimal

import orjson

from docbench.core.jsontypes import JsonObject, JsonValue, as_object

# Filebeat's own fields, dropped by JSONBench's drop_fields processor.
DROPPED = ("log", "agent", "ecs", "host", "input")
# Go's maps (before Go 1.24, Filebeat 8.17's): 8 slots per bucket, grown past 6.5 per bucket.
BUCKET_SLOTS = 8
LOAD_FACTOR = 6.5
INT64 = 1 << 63


class FilebeatEvents:
    """Raw lines in, the bytes Filebeat would have sent out; one per loader (its own seed)."""

    def __init__(self, seed: int = 1) -> None:
        self.random = random.Random(seed)

    def event(self, line: bytes, timestamp: str | None = None) -> bytes:
        """The line as Filebeat's event, ``@timestamp`` now (or ``timestamp``)."""
        try:
            document = _decode(line)
            if not isinstance(document, dict):
                return line
            process(document)
            ordered = {"@timestamp": timestamp or now_timestamp(), **self.reordered_event(document)}
            return orjson.dumps(ordered)
        except (ValueError, RecursionError, TypeError, OverflowError):
            return line

    def events(self, lines: list[bytes]) -> list[bytes]:
        stamp = now_timestamp()  # one read time per batch: Filebeat's clock in milliseconds
        return [self.event(line, stamp) for line in lines]

    def reordered_event(self, document: JsonObject) -> JsonObject:
        """The event's keys in Go's order: the decoded line's keys (in its map's order) were
        put into the event's map between Filebeat's own fields (``log`` before them, ``input``,
        ``agent``, ``ecs``, ``host`` after), which JSONBench's drop_fields deleted again."""
        keys = go_map_order(go_map_order(list(document), self.random), self.random, 1, len(DROPPED) - 1)
        return {key: self.reordered(document[key]) for key in keys}

    def reordered(self, value: JsonValue) -> JsonValue:
        """``value`` with every object's keys in an order Go's map iteration gives."""
        if isinstance(value, dict):
            return {key: self.reordered(value[key]) for key in go_map_order(list(value), self.random)}
        if isinstance(value, list):
            return [self.reordered(item) for item in value]
        return value


def process(document: JsonObject) -> None:
    """JSONBench's Filebeat processors, in their order, on the decoded event."""
    if has_field(document, "commit.record.subject") and not has_field(document, "commit.record.subject.cid"):
        rename(document, "commit.record.subject", "commit.record.subject.value")
    if has_field(document, "commit.record.embed.images.data") and not has_field(
        document, "commit.record.subject.cid"
    ):
        rename(document, "commit.record.embed.images.data", "commit.record.embed.images.data.value")
    for name in DROPPED:
        document.pop(name, None)
    milliseconds(document)


def has_field(document: JsonObject, path: str) -> bool:
    """Filebeat's ``has_fields``: the dotted path leads through objects to a value."""
    value: JsonValue = document
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    return True


def rename(document: JsonObject, source: str, target: str) -> None:
    """Filebeat's ``rename``: take the value out, then put it at the target path. A target
    under the source (``a.b`` -> ``a.b.value``) makes ``a.b`` an object holding the value, in
    the slot ``a.b`` had (Go puts a key back into the first free slot of its bucket: the one
    the delete freed)."""
    *parents, last = source.split(".")
    holder = document
    for part in parents:
        holder = as_object(holder[part], part)
    if target.startswith(source + "."):
        nested: JsonValue = holder[last]
        for part in reversed(target[len(source) + 1 :].split(".")):
            nested = {part: nested}
        holder[last] = nested
        return
    value = holder.pop(last)
    holder = document
    *parents, last = target.split(".")
    for part in parents:
        holder = as_object(holder.setdefault(part, {}), part)
    holder[last] = value


def milliseconds(document: JsonObject) -> None:
    """JSONBench's script processor: a number ``time_us`` becomes the string of the JavaScript
    number ``time_us / 1000``; a string one makes the script throw (``BigInt(s) / 1000`` mixes
    types), which Filebeat marks with its ``_js_exception`` tag; any other value stays."""
    time_us = document.get("time_us")
    if isinstance(time_us, bool) or time_us is None:
        return
    if isinstance(time_us, str):
        tags = document.get("tags", [])
        if not isinstance(tags, list | str | dict):  # what unpacking [*tags] refuses
            raise TypeError(f"tags: cannot add a tag to a {'null' if tags is None else type(tags).__name__}")
        document["tags"] = [*tags, "_js_exception"]
        return
    if isinstance(time_us, int | float):
        document["time_us"] = js_number_string(float(time_us) / 1000)


def js_number_string(value: float) -> str:
    """JavaScript's ``Number.prototype.toString()``: the shortest digits that read back as
    ``value`` (as Python's repr), positional from 1e-7 up to 1e21, an exponent beyond."""
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if 1e-7 <= abs(value) < 1e21:
        return format(Decimal(text), "f") if "e" in text else text
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", text if "e" in text else f"{value:e}")


def go_map_order(
    keys: list[str], rng: random.Random, deleted_before: int = 0, deleted_after: int = 0
) -> list[str]:
    """The order Go's ``for k := range m`` visits a map built by inserting ``keys`` in this
    order (after ``deleted_before`` and before ``deleted_after`` other keys, deleted since):
    the keys fall into 2^B buckets of 8 slots (B the smallest that held them all at Go's load
    factor; a bucket's 9th key goes to an overflow bucket), the hash seed is random per map
    (here: each key's bucket at random); iteration starts at a random bucket and visits each
    bucket's slots from a random offset, wrapping around, skipping empty ones."""
    held = deleted_before + len(keys) + deleted_after
    if held < 2:
        return keys
    bucket_bits = 0
    while held > BUCKET_SLOTS and held > LOAD_FACTOR * (1 << bucket_bits):
        bucket_bits += 1
    buckets: list[list[str | None]] = [[] for _ in range(1 << bucket_bits)]
    inserted: list[str | None] = [None] * deleted_before + list(keys) + [None] * deleted_after
    for key in inserted:  # None: a slot a deleted key leaves empty
        buckets[rng.randrange(len(buckets)) if bucket_bits else 0].append(key)
    start = rng.randrange(len(buckets))
    offset = rng.randrange(BUCKET_SLOTS)
    order: list[str] = []
    for step in range(len(buckets)):
        chained = buckets[(start + step) % len(buckets)]
        for first in range(0, len(chained), BUCKET_SLOTS):  # the bucket, then its overflow
            slots = chained[first : first + BUCKET_SLOTS]
            for slot in range(BUCKET_SLOTS):
                index = (slot + offset) % BUCKET_SLOTS
                key = slots[index] if index < len(slots) else None
                if key is not None:
                    order.append(key)
    return order


def now_timestamp() -> str:
    """Filebeat's ``@timestamp``: UTC, milliseconds, ``Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _decode(line: bytes) -> JsonValue:
    """The line decoded as Filebeat's JSON decoder does: orjson, else (an integer beyond 64 bits,
    which Go decodes as a float64; a lone surrogate, which Go replaces by U+FFFD) Python's."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return _replaced_surrogates(json.loads(line.decode("utf-8", "replace"), parse_int=_go_integer))


def _go_integer(text: str) -> int | float:
    number = int(text)
    return number if -INT64 <= number < INT64 else float(number)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _replaced_surrogates(value: JsonValue) -> JsonValue:
    """Every lone surrogate (which Python's decoder keeps) as U+FFFD, as Go decodes it."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_SURROGATE.sub("\ufffd", k): _replaced_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replaced_surrogates(item) for item in value]
    return value
