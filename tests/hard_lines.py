"""Lines that try an engine's JSON reader, written once and named: each system's tests pick the
ones its engine refuses and the ones it stores (``pick``), and say why where the engine differs.
Accepted lines are loaded beside real events, so the answers must still equal the oracle's."""

from __future__ import annotations

LINES: dict[str, bytes] = {
    # not JSON, or not one JSON document
    "invalid_json": b'{"did": "did:plc:x", "kind": ',
    "invalid_utf8": b'{"did": "did:plc:\xff\xfe", "kind": "commit"}',
    "raw_control_character": b'{"did": "did:plc:x\x01x"}',
    "trailing_garbage": b'{"did": "did:plc:x"} x',
    "two_objects": b'{"did": "did:plc:x"} {"did": "did:plc:y"}',
    "byte_order_mark": b'\xef\xbb\xbf{"did": "did:plc:bom"}',
    "utf8_encoded_surrogate": b'{"did": "did:plc:\xed\xa0\xbd"}',
    # JSON, but no object
    "not_an_object": b"[1, 2]",
    "json_string": b'"did:plc:x"',
    # JSON5 and other leniencies
    "nan": b'{"did": "did:plc:nan", "n": NaN}',
    "trailing_comma": b'{"did": "did:plc:comma",}',
    "json5_unquoted_key": b"{did: 'did:plc:x'}",
    "json5_nan": b'{"did": "did:plc:x", "n": NaN}',
    "json5_trailing_comma": b'{"did": "did:plc:x",}',
    # valid JSON objects with odd content
    "lone_surrogate": b'{"did": "did:plc:x", "text": "\\ud83d"}',
    "nul_escape": b'{"did": "did:plc:nul", "text": "a\\u0000b"}',
    "int_beyond_64_bits": b'{"did": "did:plc:big", "kind": "commit", "n": 123456789012345678901234567890}',
    "overflowing_number": b'{"did": "did:plc:inf", "n": 1e1000000}',
    # 1001 levels with the object; 1000 without
    "deep_1000": b'{"did": "did:plc:deep", "a": ' + b"[" * 1000 + b"]" * 1000 + b"}",
    "deep_999": b'{"did": "did:plc:deep", "a": ' + b"[" * 999 + b"]" * 999 + b"}",
    "raw_carriage_return": b'{"did": "did:plc:cr",\r"kind": "identity"}',
    "duplicate_keys": b'{"did": "did:plc:dup", "did": "did:plc:dup2"}',
    "empty_object": b"{}",
    "backslashes": b'{"did": "did:plc:bs", "text": "a\\\\b \\"q\\" \\n \\t \\u00e9 \\ud83d\\ude00"}',
    # posts with odd time_us: "no time" (hour NULL, ignored by Q4/Q5) unless a 64-bit integer
    "time_us_fraction": b'{"did": "did:plc:frac", "time_us": 1.5, "kind": "commit", '
    b'"commit": {"operation": "create", "collection": "app.bsky.feed.post"}}',
    "time_us_string": b'{"did": "did:plc:str", "time_us": "1732206349000167", "kind": "commit", '
    b'"commit": {"operation": "create", "collection": "app.bsky.feed.post"}}',
    "time_us_beyond_64_bits": b'{"did": "did:plc:huge", "time_us": 9223372036854775808, '
    b'"kind": "commit", "commit": {"operation": "create", '
    b'"collection": "app.bsky.feed.like"}}',
    "time_us_negative": b'{"did": "did:plc:neg", "time_us": -1, "kind": "commit", '
    b'"commit": {"operation": "create", "collection": "app.bsky.feed.post"}}',
    "collection_number": b'{"did": "did:plc:num", "kind": "commit", "commit": '
    b'{"operation": "create", "collection": 42}}',
}

#: Lines every strict JSON reader refuses.
NOT_JSON = ("invalid_json", "invalid_utf8", "raw_control_character", "trailing_garbage", "two_objects")

#: Valid objects every JSON-column engine here stores.
ODD_BUT_VALID = (
    "nul_escape",
    "int_beyond_64_bits",
    "overflowing_number",
    "raw_carriage_return",
    "empty_object",
    "backslashes",
    "time_us_fraction",
    "time_us_string",
    "time_us_beyond_64_bits",
    "collection_number",
)


def pick(*names: str) -> dict[str, bytes]:
    """The named lines, in the order given."""
    return {name: LINES[name] for name in names}
