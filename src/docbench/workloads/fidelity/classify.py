"""How a document came back from an engine, against what was sent.

Four outcomes (in the order of the fidelity table):

* ``identical``  -- the same bytes;
* ``same_value`` -- the same JSON value written differently (whitespace, key order, number
  notation such as 1E2 -> 100 or 1.50 -> 1.5): the notes say which;
* ``changed``    -- a different value: a duplicate key dropped, a number rounded or re-typed,
  a string altered, a key added or removed, the structure flattened: the notes say which and
  where (the first few differences);
* ``refused``    -- the engine refused the document (its reason); ``missing`` -- accepted but
  not found when read back.

Both texts are parsed keeping what Python's json would lose: every member of an object in
order (duplicates too) and every number as its exact decimal with its kind (integer or not).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

OUTCOMES = ("identical", "same_value", "changed", "refused", "missing")
MAX_NOTES = 5


@dataclass(frozen=True)
class Number:
    integer: bool  # written without fraction or exponent
    value: Decimal
    text: str


@dataclass(frozen=True)
class Members:
    """A JSON object: its members in order, duplicates kept."""

    pairs: tuple[tuple[str, Any], ...]


@dataclass
class Verdict:
    outcome: str
    notes: list[str] = field(default_factory=list)


def parse_exact(text: str | bytes) -> Any:
    """The JSON value with members in order (duplicates kept) and exact numbers."""
    return json.loads(
        text,
        object_pairs_hook=lambda pairs: Members(tuple(pairs)),
        parse_int=lambda s: Number(True, Decimal(s), s),
        parse_float=lambda s: Number(False, Decimal(s), s),
        parse_constant=lambda s: Number(False, Decimal(s.replace("Infinity", "Inf")), s),
    )


def classify(sent: bytes, returned: str | None, refused: str | None = None) -> Verdict:
    if refused is not None:
        return Verdict("refused", [refused])
    if returned is None:
        return Verdict("missing", ["accepted, but not found when read back"])
    if returned.encode("utf-8", "surrogatepass") == sent:
        return Verdict("identical")
    try:
        back = parse_exact(returned)
    except (ValueError, InvalidOperation) as error:
        return Verdict("changed", [f"not JSON when read back: {error}"])
    changes: list[str] = []
    spelling: set[str] = set()
    _compare(parse_exact(sent), back, "$", changes, spelling)
    if changes:
        return Verdict("changed", changes[:MAX_NOTES] + _more(changes))
    return Verdict("same_value", sorted(spelling) or ["whitespace"])


def _more(changes: list[str]) -> list[str]:
    return [f"... and {len(changes) - MAX_NOTES} more"] if len(changes) > MAX_NOTES else []


def _kind(value: Any) -> str:
    if isinstance(value, Members):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Number):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    return "null"


def _compare(sent: Any, back: Any, path: str, changes: list[str], spelling: set[str]) -> None:
    if _kind(sent) != _kind(back):
        changes.append(f"{path}: {_kind(sent)} became {_kind(back)} ({_short(back)})")
    elif isinstance(sent, Members):
        _compare_objects(sent, back, path, changes, spelling)
    elif isinstance(sent, list):
        if len(sent) != len(back):
            changes.append(f"{path}: array of {len(sent)} became {len(back)} elements")
        for index, (a, b) in enumerate(zip(sent, back, strict=False)):
            _compare(a, b, f"{path}[{index}]", changes, spelling)
    elif isinstance(sent, Number):
        _compare_numbers(sent, back, path, changes, spelling)
    elif sent != back:
        changes.append(f"{path}: {_short(sent)} became {_short(back)}")


def _compare_objects(sent: Members, back: Members, path: str, changes: list[str], spelling: set[str]) -> None:
    sent_keys = [k for k, _ in sent.pairs]
    back_keys = [k for k, _ in back.pairs]
    last = dict(sent.pairs)  # the last member of each name
    first = dict(reversed(sent.pairs))
    for key in sorted({k for k in sent_keys if sent_keys.count(k) > 1}):
        kept = [v for k, v in back.pairs if k == key]
        if len(kept) == sent_keys.count(key):
            continue
        which = "none"
        if len(kept) == 1:
            which = "another"
            if _same(kept[0], last[key]):
                which = "the last"
            elif _same(kept[0], first[key]):
                which = "the first"
        changes.append(f"{path}.{key}: duplicate key, {which} of {sent_keys.count(key)} kept")
    back_first = dict(reversed(back.pairs))
    for key in dict.fromkeys(sent_keys):
        if key not in back_first:
            changes.append(f"{path}: key {key!r} removed")
        elif sent_keys.count(key) == 1:
            _compare(last[key], back_first[key], f"{path}.{key}", changes, spelling)
    for key in dict.fromkeys(back_keys):
        if key not in last:
            changes.append(f"{path}: key {key!r} added ({_short(back_first[key])})")
    common_sent = [k for k in dict.fromkeys(sent_keys) if k in back_first]
    common_back = [k for k in dict.fromkeys(back_keys) if k in last]
    if common_sent != common_back:
        spelling.add("key order")


def _compare_numbers(sent: Number, back: Number, path: str, changes: list[str], spelling: set[str]) -> None:
    equal = sent.value == back.value and _sign(sent.value) == _sign(back.value)
    if not equal:
        changes.append(f"{path}: number {sent.text} became {back.text}")
    elif sent.integer != back.integer:
        changes.append(
            f"{path}: number {sent.text} became {back.text} ({'integer' if sent.integer else 'fraction'} "
            f"re-typed as {'integer' if back.integer else 'fraction'})"
        )
    elif sent.text != back.text:
        spelling.add("number notation")


def _sign(value: Decimal) -> bool:
    return value.is_signed() if not value.is_nan() else False


def _same(a: Any, b: Any) -> bool:
    changes: list[str] = []
    _compare(a, b, "", changes, set())
    return not changes


def _short(value: Any, limit: int = 40) -> str:
    if isinstance(value, Number):
        text = value.text
    elif isinstance(value, Members):
        text = "{" + ", ".join(k for k, _ in value.pairs) + "}"
    elif isinstance(value, list):
        text = f"[{len(value)} elements]"
    else:
        text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"
