"""Checking a system's answers to Q1-Q5 against the oracle (:mod:`docbench.dataset.oracle`).

Every system adapter returns a query's rows as Python values in the canonical column order
(:data:`QUERY_COLUMNS`)::

    Q1  collection, count
    Q2  collection, count, distinct_dids
    Q3  collection, hour, count
    Q4  did, first_time         (int µs; int ms if the system keeps ms; datetime; ISO string)
    Q5  did, span_ms            (MILLISECONDS, int or float, truncated or rounded)

:func:`check_answer` normalises them (a missing collection may come as ``None``, ``''`` or
``'null'``; counts as int/float/Decimal/str; times as int µs/ms, datetime — naive means UTC —
or ISO strings) and compares them with the oracle's answer document, returning an
:class:`AnswerCheck` whose ``status`` is:

- ``ok``: the exact answer. Rows tied on the ordering value may come in any order (Q1/Q2 equal
  counts); at the Q4/Q5 cut-off any did sharing the 3rd value is accepted (the oracle's
  ``q4_ties`` / ``q5_ties``). Q5 accepts the span in ms truncated, rounded or exact.
- ``precision``: differs only by what the system's declared timestamp precision explains
  (``time_precision_us=1000`` for MongoDB / Elasticsearch dates): Q4 times within it, Q5 spans
  within 1 ms plus it, and the Q4/Q5 choice of dids among values that close.
- ``approximate``: the system declared the query approximate (e.g. Elasticsearch's
  ``cardinality``) and every value is within 5%; beyond that it is ``wrong``.
- ``wrong``: anything else: missing / extra / different rows, bad order, unreadable values.
- ``error``: the query failed (:meth:`AnswerCheck.error`).

``detail`` is one short line naming the first differences, e.g.
``"q2: app.bsky.feed.like distinct 117616 != 117617"``.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

QUERY_TITLES: dict[int, str] = {
    1: "events per collection (all documents), by count",
    2: "creates per collection: count and exact distinct users",
    3: "creates of post/repost/like per collection and hour of day (UTC)",
    4: "the 3 users whose first post is earliest",
    5: "the 3 users with the longest span between first and last post (ms)",
}

QUERY_COLUMNS: dict[int, tuple[str, ...]] = {
    1: ("collection", "count"),
    2: ("collection", "count", "distinct_dids"),
    3: ("collection", "hour", "count"),
    4: ("did", "first_time_us"),
    5: ("did", "span_ms"),
}

STATUSES = ("ok", "precision", "approximate", "wrong", "error")
_RANK = {"ok": 0, "precision": 1, "approximate": 2, "wrong": 3, "error": 4}
APPROXIMATE_TOLERANCE = 0.05
MAX_DETAIL_ITEMS = 3
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


@dataclass
class AnswerCheck:
    """The verdict on one query's answer."""

    status: str  # one of STATUSES
    detail: str = ""
    rows: list | None = None  # the normalised rows (JSON-serialisable), None on error

    @classmethod
    def error(cls, message: str) -> AnswerCheck:
        """For a query that failed (exception, timeout, crash)."""
        return cls("error", str(message), None)

    @property
    def acceptable(self) -> bool:
        """ok, precision or approximate: a correct answer up to what the system declared."""
        return self.status in ("ok", "precision", "approximate")

    def as_dict(self) -> dict:
        return asdict(self)


class _Unreadable(ValueError):
    pass


# --------------------------------------------------------------------------------------------
# Normalising values


def normalize_collection(value: Any) -> str | None:
    """``None``, ``''`` and ``'null'`` are the missing collection; other non-strings become
    their JSON text (as the oracle groups them)."""
    if isinstance(value, bytes | bytearray | memoryview):
        value = bytes(value).decode("utf-8", "surrogateescape")
    if value is None or value == "" or value == "null":
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, Decimal):
        value = int(value) if value == value.to_integral_value() else float(value)
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


normalize_did = normalize_collection


def _number(value: Any) -> int | float:
    """An int when integral, else a float; raises _Unreadable."""
    if isinstance(value, bool) or value is None:
        raise _Unreadable(repr(value))
    if isinstance(value, int):
        return value
    if isinstance(value, bytes | bytearray):
        value = bytes(value).decode("ascii", "replace")
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            value = Decimal(text)
        except ArithmeticError as exc:
            raise _Unreadable(repr(value)) from exc
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise _Unreadable(repr(value))
        return int(value) if value == value.to_integral_value() else float(value)
    if hasattr(value, "__index__"):  # numpy integers
        return operator.index(value)
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise _Unreadable(repr(value)) from exc
    if math.isnan(number) or math.isinf(number):
        raise _Unreadable(repr(value))
    return int(number) if number.is_integer() else number


def normalize_count(value: Any) -> int | float:
    return _number(value)


_ISO = re.compile(
    r"^\s*(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?"
    r"\s*(Z|z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?\s*$"
)


def _datetime_us(value: datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return (value - _EPOCH) // _US


def parse_iso_us(text: str) -> int:
    """Microseconds since the epoch of an ISO-8601 timestamp (no zone = UTC; fractions
    beyond µs are truncated)."""
    m = _ISO.match(text)
    if not m:
        raise _Unreadable(repr(text))
    year, month, day, hh, mi, ss, frac, zone = m.groups()
    try:
        dt = datetime(int(year), int(month), int(day), int(hh or 0), int(mi or 0), int(ss or 0), tzinfo=UTC)
    except ValueError as exc:
        raise _Unreadable(repr(text)) from exc
    us = (dt - _EPOCH) // _US + (int((frac or "0")[:6].ljust(6, "0")))
    if zone and zone[0] in "+-":
        digits = zone[1:].replace(":", "")
        offset = int(digits[:2]) * 3600 + (int(digits[2:4]) * 60 if len(digits) >= 4 else 0)
        us -= (1 if zone[0] == "+" else -1) * offset * 1_000_000
    return us


def normalize_time_us(value: Any, *, time_precision_us: int = 1, reference_us: int | None = None) -> int:
    """A timestamp as int microseconds UTC.

    Numbers are microseconds, or milliseconds when the system keeps milliseconds
    (``time_precision_us >= 1000``) and reading them as ms lands nearer ``reference_us``
    (an expected value) — so a ms system that still returns µs is read right.
    """
    if isinstance(value, datetime):
        return _datetime_us(value)
    if isinstance(value, date):
        return _datetime_us(datetime(value.year, value.month, value.day))
    if isinstance(value, str | bytes | bytearray):
        text = value.decode("ascii", "replace") if not isinstance(value, str) else value
        try:
            number = _number(text)
        except _Unreadable:
            return parse_iso_us(text)
    else:
        if hasattr(value, "isoformat") and not isinstance(value, int | float | Decimal):
            return parse_iso_us(value.isoformat())
        try:
            number = _number(value)
        except _Unreadable:
            return parse_iso_us(str(value))  # e.g. numpy.datetime64
    candidates = [number]
    if time_precision_us >= 1000:
        candidates.append(number * 1000)
    if reference_us is not None and len(candidates) > 1:
        chosen = min(candidates, key=lambda c: abs(c - reference_us))
    elif time_precision_us >= 1000 and abs(number) < 10**14:  # ms-sized (before year 5138)
        chosen = candidates[-1]
    else:
        chosen = candidates[0]
    return int(round(chosen))


def normalize_span_ms(value: Any) -> int | float:
    """A span in milliseconds (int when integral)."""
    if isinstance(value, timedelta):
        value = value / timedelta(milliseconds=1)
    elif type(value).__name__ == "timedelta64":  # numpy
        value = int(value.astype("timedelta64[us]").astype("int64")) / 1000
    return _number(value)


def normalize_hour(value: Any) -> int | float | None:
    if value is None or value == "" or value == "null":
        return None
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC)
        return value.hour
    return _number(value)


# --------------------------------------------------------------------------------------------
# Helpers


def expected_for(query: int, answers_doc: dict) -> list[list]:
    """The oracle's rows for a query (canonical columns; Q5 spans in µs)."""
    if query not in QUERY_COLUMNS:
        raise ValueError(f"no query Q{query}")
    return answers_doc[f"q{query}"]


def expected_display_rows(query: int, answers_doc: dict) -> list[list]:
    """The oracle's rows in the units systems answer in (Q5 span in ms, as a float)."""
    rows = expected_for(query, answers_doc)
    if query == 5:
        return [[d, s / 1000] for d, s in rows]
    return [list(r) for r in rows]


def _label(value) -> str:
    return "null" if value is None else str(value)


class _Issues:
    """Differences found, by severity; the worst one decides the status."""

    def __init__(self, query: int) -> None:
        self.query = query
        self.items: list[tuple[str, str]] = []

    def add(self, status: str, message: str) -> None:
        self.items.append((status, message))

    def result(self, rows: list, ok_detail: str) -> AnswerCheck:
        if not self.items:
            return AnswerCheck("ok", ok_detail, rows)
        worst = max(self.items, key=lambda item: _RANK[item[0]])[0]
        messages = [m for s, m in self.items if s == worst]
        text = "; ".join(messages[:MAX_DETAIL_ITEMS])
        if len(messages) > MAX_DETAIL_ITEMS:
            text += f"; +{len(messages) - MAX_DETAIL_ITEMS} more"
        others = len(self.items) - len(messages)
        if others:
            text += f" (+{others} smaller differences)"
        return AnswerCheck(worst, f"q{self.query}: {text}", rows)


def _within(got: float, exp: float, tolerance: float) -> bool:
    return abs(got - exp) <= tolerance * abs(exp)


def _compare_value(issues: _Issues, label: str, got, exp, approximate: bool) -> None:
    if got == exp:
        return
    if approximate and _within(got, exp, APPROXIMATE_TOLERANCE):
        issues.add("approximate", f"{label} {got} ~ {exp}")
    else:
        issues.add("wrong", f"{label} {got} != {exp}")


# --------------------------------------------------------------------------------------------
# Per query


def _check_grouped(
    query: int,
    rows: list[list],
    expected: list[list],
    issues: _Issues,
    approximate: bool,
    key_len: int,
    names: tuple[str, ...],
) -> None:
    """Q1/Q2/Q3: a set of groups keyed by the first ``key_len`` columns."""
    exp = {tuple(r[:key_len]): r[key_len:] for r in expected}
    got: dict[tuple, list] = {}
    for r in rows:
        key = tuple(r[:key_len])
        if key in got:
            issues.add("wrong", f"duplicate row for {'/'.join(map(_label, key))}")
        got[key] = r[key_len:]
    for key in (k for k in exp if k not in got):  # in expected order: deterministic detail
        issues.add("wrong", f"missing {'/'.join(map(_label, key))} ({', '.join(map(str, exp[key]))})")
    for key in (k for k in got if k not in exp):
        issues.add("wrong", f"extra {'/'.join(map(_label, key))} ({', '.join(map(str, got[key]))})")
    for key in (k for k in exp if k in got):  # in expected order
        for name, g, e in zip(names, got[key], exp[key], strict=True):
            _compare_value(issues, f"{'/'.join(map(_label, key))} {name}", g, e, approximate)


def _check_q12_order(rows: list[list], issues: _Issues) -> None:
    for i in range(1, len(rows)):
        if rows[i][1] > rows[i - 1][1]:
            issues.add(
                "wrong",
                f"not ordered by count desc at row {i + 1} "
                f"({_label(rows[i][0])} {rows[i][1]} after {rows[i - 1][1]})",
            )
            return


def _q3_key(row: list) -> tuple:
    hour = row[1]
    return (hour is None, hour if hour is not None else 0, row[0] or "")


def _check_q3_order(rows: list[list], issues: _Issues) -> None:
    for i in range(1, len(rows)):
        if _q3_key(rows[i]) < _q3_key(rows[i - 1]):
            issues.add(
                "wrong",
                f"not ordered by hour, collection at row {i + 1} ({_label(rows[i][0])} {_label(rows[i][1])})",
            )
            return


def _span_close(got_ms: float, true_us: int) -> bool:
    """Truncated, rounded (half up or half even) or exact: all ok."""
    if isinstance(got_ms, int):
        return got_ms in (true_us // 1000, (true_us + 500) // 1000, round(true_us / 1000))
    return abs(got_ms * 1000 - true_us) < 0.5 or (got_ms.is_integer() and _span_close(int(got_ms), true_us))


def _check_top(query: int, rows: list[list], doc: dict, issues: _Issues, p: int) -> None:
    """Q4 (ascending first time, µs) and Q5 (descending span; system in ms, oracle in µs)."""
    descending = query == 5
    expected = doc[f"q{query}"]
    ties = doc.get(f"q{query}_ties") or {}
    n = len(expected)
    known: dict = {d: v for d, v in ties.get("next", [])}
    for d in ties.get("dids", []):
        known[d] = ties["value"]
    known.update({d: v for d, v in expected})
    ties_truncated = ties.get("count", 0) > len(ties.get("dids", []))
    noun = "span" if descending else "first time"

    def show(value_us) -> str:  # an oracle value in the query's unit
        if not descending:
            return str(value_us)
        return f"{value_us / 1000:.3f}".rstrip("0").rstrip(".") + " ms"

    def show_got(value) -> str:
        return f"{value} ms" if descending else str(value)

    if len(rows) != n:
        issues.add("wrong", f"{len(rows)} rows, expected {n}")
    seen = set()
    chosen: list[tuple[int, object]] = []  # (true value, did)
    imprecise: list[str] = []
    # tolerance (µs) within which a value only differs by the system's timestamp precision
    value_tol = (1000 + p) if descending else (p if p > 1 else 0)
    for i, (did, got) in enumerate(rows):
        if did in seen:
            issues.add("wrong", f"duplicate did {_label(did)}")
            continue
        seen.add(did)
        if i and (rows[i - 1][1] < got if descending else rows[i - 1][1] > got):
            issues.add("wrong", f"not ordered by {noun} {'desc' if descending else 'asc'} at row {i + 1}")
        got_us = got * 1000 if descending else got
        true = known.get(did)
        if true is None:
            boundary = ties.get("value")
            if (
                ties_truncated
                and boundary is not None
                and (abs(got_us - boundary) <= value_tol or (descending and _span_close(got, boundary)))
            ):
                true = boundary  # one of the many tied dids the oracle did not list
            else:
                last = f"; #{n} is {show(expected[-1][1])}" if expected else ""
                issues.add("wrong", f"{_label(did)} ({noun} {show_got(got)}) is not in the top {n}{last}")
                continue
        chosen.append((true, did))
        if descending and _span_close(got, true) or not descending and got == true:
            continue
        if abs(got_us - true) < value_tol:
            imprecise.append(f"{_label(did)} {show_got(got)} vs {show(true)}")
        else:
            issues.add("wrong", f"{_label(did)} {noun} {show_got(got)} != {show(true)}")
    if imprecise:
        issues.add(
            "precision",
            f"{len(imprecise)} {noun}(s) within the system's precision ({p} µs), e.g. {imprecise[0]}",
        )

    # the choice of dids: their true values must be the top values
    want = sorted((v for _, v in expected), reverse=descending)
    have = sorted(chosen, key=lambda c: c[0], reverse=descending)
    for w, (h, did) in zip(want, have, strict=False):
        if w == h:
            continue
        if descending and (w // 1000 == h // 1000 or (w + 500) // 1000 == (h + 500) // 1000):
            continue  # equal in ms: a tie at the answer's precision
        if p > 1 and abs(w - h) < (2 * p if descending else p):
            issues.add(
                "precision",
                f"{_label(did)} ({noun} {show(h)}) chosen where "
                f"{show(w)} was due: a tie at the system's precision",
            )
        else:
            issues.add("wrong", f"{_label(did)} ({noun} {show(h)}) chosen where {show(w)} was due")


def _normalize(query: int, rows: Sequence[Sequence], doc: dict, p: int) -> list[list]:
    width = len(QUERY_COLUMNS[query])
    out = []
    reference = doc["q4"][-1][1] if query == 4 and doc.get("q4") else None
    for i, row in enumerate(rows):
        if isinstance(row, dict):
            row = list(row.values())
        row = list(row)
        if len(row) != width:
            raise _Unreadable(
                f"row {i + 1} has {len(row)} columns, expected {width} ({', '.join(QUERY_COLUMNS[query])})"
            )
        try:
            if query == 1:
                out.append([normalize_collection(row[0]), normalize_count(row[1])])
            elif query == 2:
                out.append([normalize_collection(row[0]), normalize_count(row[1]), normalize_count(row[2])])
            elif query == 3:
                out.append([normalize_collection(row[0]), normalize_hour(row[1]), normalize_count(row[2])])
            elif query == 4:
                out.append(
                    [
                        normalize_did(row[0]),
                        normalize_time_us(row[1], time_precision_us=p, reference_us=reference),
                    ]
                )
            else:
                out.append([normalize_did(row[0]), normalize_span_ms(row[1])])
        except _Unreadable as exc:
            raise _Unreadable(f"row {i + 1}: cannot read {exc}") from None
    return out


def check_answer(
    query: int,
    rows: Sequence[Sequence] | None,
    expected: dict,
    *,
    time_precision_us: int = 1,
    approximate: bool = False,
) -> AnswerCheck:
    """Compare a system's rows for ``query`` (1-5) with the oracle's answer document.

    ``expected`` is the whole answer document (``answers.json``; the tie information lives
    there). ``time_precision_us`` is the system's timestamp precision (1000 for ms);
    ``approximate`` says the system declared this query approximate.
    """
    if query not in QUERY_COLUMNS:
        raise ValueError(f"no query Q{query}")
    if rows is None:
        return AnswerCheck.error(f"q{query}: no result")
    p = max(1, int(time_precision_us or 1))
    try:
        norm = _normalize(query, rows, expected, p)
    except _Unreadable as exc:
        return AnswerCheck("wrong", f"q{query}: {exc}", None)
    issues = _Issues(query)
    exp_rows = expected_for(query, expected)
    if query in (1, 2):
        names = ("count", "distinct")[: len(QUERY_COLUMNS[query]) - 1]
        _check_grouped(query, norm, exp_rows, issues, approximate, 1, names)
        _check_q12_order(norm, issues)
    elif query == 3:
        _check_grouped(query, norm, exp_rows, issues, approximate, 2, ("count",))
        _check_q3_order(norm, issues)
    else:
        _check_top(query, norm, expected, issues, p)
    return issues.result(norm, f"q{query}: {len(norm)} rows match")
