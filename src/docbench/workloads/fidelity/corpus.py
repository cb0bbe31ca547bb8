"""The fidelity corpus: documents that stress how an engine holds JSON, one stress each.

Every document is one ndjson line whose first key is ``"id"`` (its name, by which it is found
again when read back). The lines are bytes, written here exactly as they are sent: escapes,
whitespace and number notation are part of what is tested.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CorpusDocument:
    name: str
    # What the document stresses (shown in the fidelity table).
    stress: str
    line: bytes


def _doc(name: str, stress: str, body: str) -> CorpusDocument:
    """``body``: the document's members after its id, as JSON text."""
    separator = ", " if body else ""
    return CorpusDocument(name, stress, f'{{"id": "{name}"{separator}{body}}}'.encode())


def _deep_array_objects(depth: int) -> str:
    return '[{"a": ' * depth + "1" + "}]" * depth


def _nested(depth: int) -> str:
    return '{"a": ' * (depth - 1) + "1" + "}" * (depth - 1)


LONG_KEY_CHARACTERS = 10_000
LONG_KEY = "k" * LONG_KEY_CHARACTERS
LONG_STRING_CHARACTERS = 1 << 20
LONG_STRING = "x" * LONG_STRING_CHARACTERS

MIXED_TYPE_VALUES = {
    "integer": "1",
    "string": '"1"',
    "float": "1.5",
    "boolean": "true",
    "null": "null",
    "array": "[1, 2]",
    "object": '{"a": 1}',
}


def corpus() -> list[CorpusDocument]:
    documents = [
        _doc("key_order", "keys not in alphabetical order", '"z": 1, "a": 2, "m": {"y": 1, "b": 2}'),
        _doc("whitespace", "spaces and no spaces", '"a" :[ 1,2 ] ,"b":{ }'),
        _doc("duplicate_keys", "one key twice (RFC 8259: names SHOULD be unique)", '"a": 1, "a": 2'),
        _doc("int_2_53_plus_1", "integer beyond a double's exact range", '"n": 9007199254740993'),
        _doc("int64_max", "2^63 - 1", '"n": 9223372036854775807'),
        _doc("int_2_63", "2^63 (beyond signed 64-bit)", '"n": 9223372036854775808'),
        _doc("int64_min_minus_1", "-2^63 - 1", '"n": -9223372036854775809'),
        _doc("uint64_max", "2^64 - 1", '"n": 18446744073709551615'),
        _doc("int_2_64", "2^64 (beyond unsigned 64-bit)", '"n": 18446744073709551616'),
        _doc("int_30_digits", "a 30-digit integer", '"n": 123456789012345678901234567890'),
        _doc("float_0_1", "0.1 (not exact in binary)", '"x": 0.1'),
        _doc("float_1e_minus_7", "1e-7", '"x": 1e-7'),
        _doc("negative_zero", "-0.0", '"x": -0.0'),
        _doc("smallest_subnormal", "5e-324", '"x": 5e-324'),
        _doc("double_max", "1.7976931348623157e308", '"x": 1.7976931348623157e308'),
        _doc("float_overflow", "1e400 (beyond a double)", '"x": 1e400'),
        _doc("exponents", "exponent notations", '"a": 1E2, "b": 1e+2, "c": 2.5e-3'),
        _doc("trailing_zeros", "trailing zeros", '"a": 1.50, "b": 100.0, "c": 1.0'),
        _doc("unicode_escape", "\\u escape of a BMP character, and the raw one", '"s": "\\u00e9", "t": "é"'),
        _doc("surrogate_pair", "an emoji as an escaped surrogate pair", '"s": "\\ud83d\\ude00"'),
        _doc("lone_surrogate", "an unpaired surrogate escape", '"s": "\\ud800"'),
        _doc("nul_escape", "\\u0000 in a string", '"s": "a\\u0000b"'),
        _doc("escapes", "every short escape", '"s": "\\" \\\\ \\/ \\b \\f \\n \\r \\t"'),
        _doc("nested_20", "20 nested objects", f'"d": {_nested(20)}'),
        _doc("nested_100", "100 nested objects", f'"d": {_nested(100)}'),
        _doc("nested_arrays_500", "500 nested arrays", '"d": ' + "[" * 500 + "]" * 500),
        _doc("empty_containers", "empty object, array and string", '"o": {}, "a": [], "s": ""'),
        _doc("literals", "null, true, false", '"n": null, "t": true, "f": false'),
        _doc("mixed_array", "an array of mixed types", '"a": [1, "a", null, true, {"b": []}, [2.5]]'),
        _doc("dotted_key", "a key with a dot beside the path it spells", '"a.b": 1, "a": {"b": 2}'),
        _doc("empty_key", "an empty key", '"": 1'),
        _doc("unicode_key", "a non-ASCII key", '"clé": 1'),
        _doc("long_string", f"{LONG_STRING_CHARACTERS:,} characters", f'"s": "{LONG_STRING}"'),
    ]
    documents += [
        _doc(f"mixed_type_{kind}", f"the path v as {kind} (one type per document)", f'"v": {value}')
        for kind, value in MIXED_TYPE_VALUES.items()
    ]
    documents += [
        _doc(
            "array_objects_differing_keys",
            "an array of objects whose keys and types differ",
            '"ao": [{"x": 1}, {"y": "s"}, {"x": "t", "z": null}]',
        ),
        _doc("long_key", f"a key of {LONG_KEY_CHARACTERS:,} characters", f'"{LONG_KEY}": 1'),
        _doc(
            "keys_10k",
            "10,000 keys in one object",
            '"o": {' + ", ".join(f'"k{i}": {i}' for i in range(10_000)) + "}",
        ),
        _doc("deep_array_objects", "50 levels of arrays of objects", f'"d": {_deep_array_objects(50)}'),
        _doc("case_keys", "keys that differ only in case", '"Key": 1, "key": 2, "KEY": 3'),
        _doc(
            "unicode_normalization_keys",
            "keys that differ only in Unicode normalization (NFC and NFD of é)",
            '"\\u00e9": 1, "e\\u0301": 2',
        ),
    ]
    # One path across documents: sharing is the stress (a per-path state meets them in turn).
    documents += [
        _doc(
            f"flip_{name}",
            f"the path flip as {what} (a number, then a string, then back)",
            f'"flip": {value}',
        )
        for name, what, value in (
            ("number", "a number", "1"),
            ("string", "a string", '"1"'),
            ("back", "a number", "2"),
        )
    ]
    documents += [
        _doc(f"time_{name}", f"the path ts as {what}", f'"ts": {value}')
        for name, what, value in (
            ("iso8601", "ISO 8601 text", '"2024-01-02T03:04:05Z"'),
            ("epoch_s", "epoch seconds", "1704164645"),
            ("epoch_ms", "epoch milliseconds", "1704164645000"),
            ("rfc2822", "RFC 2822 text", '"Tue, 02 Jan 2024 03:04:05 +0000"'),
        )
    ]
    documents += [
        _doc(f"empty_{name}", f"the path e as {what}", f'"e": {value}')
        for name, what, value in (
            ("string", "an empty string", '""'),
            ("null", "null", "null"),
            ("object", "an empty object", "{}"),
            ("array", "an empty array", "[]"),
        )
    ]
    return documents
