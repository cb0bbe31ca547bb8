"""check_answer: normalising a system's rows and judging them against the oracle's answers."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from docbench.core.answers import (
    QUERY_COLUMNS,
    QUERY_TITLES,
    AnswerCheck,
    check_answer,
    expected_display_rows,
    expected_for,
    normalize_time_us,
    parse_iso_us,
)
from docbench.dataset.oracle import compute_answers

LIKE = "app.bsky.feed.like"
FOLLOW = "app.bsky.graph.follow"
POST = "app.bsky.feed.post"
REPOST = "app.bsky.feed.repost"
BLOCK = "app.bsky.graph.block"
T = 1732206349000167  # 2024-11-21 16:25:49.000167 UTC

# A hand-made answer document in the oracle's canonical format (figures from methodology §3).
DOC = {
    "format": 1,
    "files": [],
    "documents": 1_000_000,
    "invalid_lines": 0,
    "empty_lines": 0,
    "q1": [[LIKE, 448944], [FOLLOW, 360374], [POST, 90816], [None, 5328], [BLOCK, 5328]],
    "q2": [[LIKE, 444523, 117617], [FOLLOW, 337978, 63957], [POST, 86812, 50464], [None, 12, 7]],
    "q3": [
        [LIKE, 16, 300000],
        [POST, 16, 60000],
        [REPOST, 16, 40000],
        [LIKE, 17, 144523],
        [POST, 17, 26812],
        [REPOST, 17, 16993],
    ],
    "q4": [["did:a", T], ["did:b", T + 1738], ["did:c", T + 3740]],
    "q4_ties": {
        "value": T + 3740,
        "count": 2,
        "dids": ["did:c", "did:d"],
        "next": [["did:d", T + 3740], ["did:e", T + 3800], ["did:f", T + 90000]],
    },
    "q5": [["did:x", 3369979712203], ["did:y", 6677], ["did:z0", 0]],
    # 5000 dids posted once (span 0); the oracle lists only some of them
    "q5_ties": {
        "value": 0,
        "count": 5000,
        "dids": ["did:z0", "did:z1", "did:z2"],
        "next": [["did:z1", 0], ["did:z2", 0]],
    },
}


def exact_rows(q: int) -> list[list]:
    rows = [list(r) for r in DOC[f"q{q}"]]
    if q == 5:
        rows = [[d, s // 1000] for d, s in rows]  # systems answer in ms
    return rows


def check(q, rows, **kw) -> AnswerCheck:
    return check_answer(q, rows, DOC, **kw)


def test_titles_and_columns():
    assert set(QUERY_TITLES) == set(QUERY_COLUMNS) == {1, 2, 3, 4, 5}
    assert QUERY_COLUMNS[5] == ("did", "span_ms")
    assert expected_for(2, DOC) is DOC["q2"]
    assert expected_display_rows(5, DOC)[0] == ["did:x", 3369979712.203]


@pytest.mark.parametrize("q", [1, 2, 3, 4, 5])
def test_exact_answers_are_ok(q):
    result = check(q, exact_rows(q))
    assert result.status == "ok", result.detail
    assert result.acceptable
    json.dumps(result.as_dict())


def test_ties_in_any_order_and_null_collection_spellings():
    rows = [[LIKE, 448944], [FOLLOW, 360374], [POST, 90816], [BLOCK, 5328], ["", 5328]]
    assert check(1, rows).status == "ok"
    rows[4][0] = "null"
    assert check(1, rows).status == "ok"
    rows[4][0] = None
    assert check(1, rows).status == "ok"
    # Q2 rows from a system: Decimal, str and float numbers, '' for the missing collection
    rows = [
        (LIKE, Decimal(444523), "117617"),
        (FOLLOW, 337978.0, 63957),
        (POST, 86812, Decimal("50464")),
        ("", 12, 7),
    ]
    result = check(2, rows)
    assert result.status == "ok", result.detail
    assert result.rows[3] == [None, 12, 7]
    assert json.dumps(result.rows)


def test_one_count_off_is_wrong_with_a_useful_detail():
    rows = exact_rows(2)
    rows[0][2] = 117616
    result = check(2, rows)
    assert result.status == "wrong"
    assert result.detail == "q2: app.bsky.feed.like distinct 117616 != 117617"
    rows = exact_rows(1)
    rows[2][1] = 90815
    assert check(1, rows).detail == "q1: app.bsky.feed.post count 90815 != 90816"


def test_missing_extra_and_malformed_rows_are_wrong():
    rows = exact_rows(1)[:-1]
    result = check(1, rows)
    assert result.status == "wrong"
    assert "missing app.bsky.graph.block (5328)" in result.detail
    rows = exact_rows(1) + [["app.bsky.graph.list", 1]]
    assert "extra app.bsky.graph.list (1)" in check(1, rows).detail
    rows = exact_rows(1) + [[POST, 90816]]
    assert "duplicate row" in check(1, rows).detail
    rows = [r + [0] for r in exact_rows(1)]
    result = check(1, rows)
    assert result.status == "wrong" and "3 columns, expected 2" in result.detail
    result = check(2, [[LIKE, "many", 3]])
    assert result.status == "wrong" and "cannot read" in result.detail


def test_order_is_checked():
    rows = exact_rows(1)
    rows[0], rows[1] = rows[1], rows[0]
    result = check(1, rows)
    assert result.status == "wrong" and "not ordered by count desc" in result.detail
    rows = exact_rows(3)
    rows[0], rows[3] = rows[3], rows[0]  # hour 17 before hour 16
    assert "not ordered by hour" in check(3, rows).detail
    rows = exact_rows(3)
    rows[0], rows[1] = rows[1], rows[0]  # post before like within hour 16
    assert check(3, rows).status == "wrong"


def test_q3_hours_as_strings_or_datetimes():
    rows = [[c, str(h), Decimal(n)] for c, h, n in DOC["q3"]]
    assert check(3, rows).status == "ok"
    rows = [[c, datetime(2024, 11, 21, h, tzinfo=UTC), n] for c, h, n in DOC["q3"]]
    assert check(3, rows).status == "ok"
    # an aware datetime in another zone is converted to UTC first
    cet = timezone(timedelta(hours=1))
    rows = [[c, datetime(2024, 11, 21, h + 1, tzinfo=cet), n] for c, h, n in DOC["q3"]]
    assert check(3, rows).status == "ok"


def test_approximate_distinct_counts():
    rows = exact_rows(2)
    rows[0][2] = 117000  # -0.5%
    assert check(2, rows, approximate=True).status == "approximate"
    assert check(2, rows).status == "wrong"  # not declared approximate
    rows[0][2] = 100000  # -15%
    result = check(2, rows, approximate=True)
    assert result.status == "wrong" and "100000 != 117617" in result.detail
    # declared approximate but exact: ok
    assert check(2, exact_rows(2), approximate=True).status == "ok"


def test_q4_times_in_every_representation():
    iso = ["2024-11-21T16:25:49.000167Z", "2024-11-21 16:25:49.001905", "2024-11-21T17:25:49.003907+01:00"]
    rows = [["did:a", iso[0]], ["did:b", iso[1]], ["did:c", iso[2]]]
    assert check(4, rows).status == "ok"
    naive = datetime(2024, 11, 21, 16, 25, 49, 167)
    aware = datetime(2024, 11, 21, 16, 25, 49, 1905, tzinfo=UTC)
    rows = [["did:a", naive], ["did:b", aware], ["did:c", str(T + 3740)]]
    assert check(4, rows).status == "ok"
    assert parse_iso_us("2024-11-21T16:25:49.000167891Z") == T  # ns truncated
    assert parse_iso_us("2024-11-21 16:25:49.000167+00") == T


def test_q4_millisecond_precision():
    ms_rows = [[d, t // 1000] for d, t in DOC["q4"]]  # what a ms system returns
    result = check(4, ms_rows, time_precision_us=1000)
    assert result.status == "precision", result.detail
    assert result.rows[0] == ["did:a", T - 167]
    # the same values from a system that claims µs precision: wrong
    assert check(4, [[d, (t // 1000) * 1000] for d, t in DOC["q4"]]).status == "wrong"
    # ms as datetimes (MongoDB / Elasticsearch dates)
    rows = [[d, datetime(1970, 1, 1) + timedelta(milliseconds=t // 1000)] for d, t in DOC["q4"]]
    assert check(4, rows, time_precision_us=1000).status == "precision"
    # a ms system that returns exact µs is simply ok
    assert check(4, exact_rows(4), time_precision_us=1000).status == "ok"
    # at ms precision did:e (T+3800) is in the same millisecond as did:c (T+3740)
    rows = [["did:a", T // 1000], ["did:b", (T + 1738) // 1000], ["did:e", (T + 3800) // 1000]]
    assert check(4, rows, time_precision_us=1000).status == "precision"
    # but did:f (T+90000) is not a tie at any precision
    rows[2] = ["did:f", (T + 90000) // 1000]
    assert check(4, rows, time_precision_us=1000).status == "wrong"


def test_q4_ties_at_the_cut_off():
    rows = [["did:a", T], ["did:b", T + 1738], ["did:d", T + 3740]]  # d ties with c
    assert check(4, rows).status == "ok"
    rows[2] = ["did:e", T + 3800]  # the 4th, not a tie
    result = check(4, rows)
    assert result.status == "wrong" and "where" in result.detail
    rows[2] = ["did:q", T + 3740]  # a did the oracle never saw at that value
    assert check(4, rows).status == "wrong"
    assert check(4, exact_rows(4)[:2]).status == "wrong"  # a row missing
    rows = exact_rows(4)
    rows[0], rows[1] = rows[1], rows[0]
    assert "not ordered" in check(4, rows).detail


def test_q5_spans_truncated_rounded_or_exact():
    for spans in ([3369979712, 6, 0], [3369979712, 7, 0], [3369979712.203, 6.677, 0.0]):
        rows = [[d, s] for (d, _), s in zip(DOC["q5"], spans, strict=True)]
        result = check(5, rows)
        assert result.status == "ok", (spans, result.detail)
    # intervals (PostgreSQL) are accepted too
    rows = [["did:x", timedelta(microseconds=3369979712203)], ["did:y", 6.677], ["did:z0", 0]]
    assert check(5, rows).status == "ok"
    # within 1 ms + the timestamp precision
    rows = [["did:x", 3369979713], ["did:y", 6], ["did:z0", 0]]  # x: 0.797 ms over
    assert check(5, rows, time_precision_us=1000).status == "precision"
    rows = [["did:x", 3369979717], ["did:y", 6], ["did:z0", 0]]  # 4.8 ms off
    result = check(5, rows, time_precision_us=1000)
    assert result.status == "wrong" and "did:x span 3369979717 ms" in result.detail


def test_q5_ties_beyond_the_listed_dids():
    # 5000 dids share span 0; the oracle lists 3 of them; any is a valid 3rd row
    rows = [["did:x", 3369979712], ["did:y", 6], ["did:z2", 0]]
    assert check(5, rows).status == "ok"
    rows[2] = ["did:unlisted", 0]
    assert check(5, rows).status == "ok"
    rows[2] = ["did:unlisted", 5]
    assert check(5, rows).status == "wrong"
    rows = [["did:x", 3369979712], ["did:z1", 0], ["did:y", 6]]
    assert check(5, rows).status == "wrong"  # y is due 2nd, not a tie


def test_errors():
    result = AnswerCheck.error("timeout after 600 s")
    assert (result.status, result.detail, result.rows) == ("error", "timeout after 600 s", None)
    assert not result.acceptable
    assert check(1, None).status == "error"
    with pytest.raises(ValueError):
        check(6, [])


def test_normalize_time_us_reads_ms_only_for_ms_systems():
    assert normalize_time_us(T) == T
    assert normalize_time_us(T // 1000, time_precision_us=1000) == (T // 1000) * 1000
    assert normalize_time_us(T, time_precision_us=1000, reference_us=T) == T
    assert normalize_time_us(str(T)) == T
    assert normalize_time_us((T // 1000) / 1, time_precision_us=1000) == (T // 1000) * 1000


def test_against_real_oracle_answers(real_data_dir):
    doc = compute_answers([real_data_dir / "jsonbench_file_0001_first1000.jsonl"])
    # a ClickHouse-like answer: exact
    for q in range(1, 6):
        rows = [list(r) for r in doc[f"q{q}"]]
        if q == 5:
            rows = [[d, s / 1000] for d, s in rows]
        assert check_answer(q, rows, doc).status == "ok"
    # an Elasticsearch-like answer: ms dates, '' for the missing collection, any tied did
    q1 = [["" if c is None else c, n] for c, n in doc["q1"]]
    assert check_answer(1, q1, doc, time_precision_us=1000).status == "ok"
    q4 = [[d, datetime.fromtimestamp(t // 1000 / 1000, UTC)] for d, t in doc["q4"]]
    assert check_answer(4, q4, doc, time_precision_us=1000).status == "precision"
    tied = doc["q5_ties"]["dids"]
    q5 = [[d, 0] for d in tied[-3:]]  # 93 dids posted once: any three are right
    assert check_answer(5, q5, doc).status == "ok"


def test_numpy_and_pandas_values():
    np = pytest.importorskip("numpy")
    rows = [[d, np.datetime64(t, "us")] for d, t in DOC["q4"]]
    assert check(4, rows).status == "ok"
    rows = [[d, np.datetime64(t // 1000, "ms")] for d, t in DOC["q4"]]
    assert check(4, rows, time_precision_us=1000).status == "precision"
    rows = [[d, np.timedelta64(s, "us")] for d, s in DOC["q5"]]
    assert check(5, rows).status == "ok"
    rows = [[c, np.int64(n), np.float64(k)] for c, n, k in DOC["q2"]]
    assert check(2, rows).status == "ok"
