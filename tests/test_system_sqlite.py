"""SQLite adapter (sqlean.py: SQLite 3.45+ with JSONB) against the real engine (no mocks)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from docbench.answers import check_answer
from docbench.contracts.common import BatchRejected
from docbench.dataset.oracle import compute_answers
from docbench.dataset.reader import dataset_files, iter_lines
from docbench.systems import adapter_class, engine_class, open_adapter
from docbench.systems.sqlite.analytics import INDEX, SQLiteAnalytics
from docbench.systems.sqlite.engine import SQLiteEngine
from docbench.systems.sqlite.session import format_query_plan
from docbench.workloads.analytics.load import load_files

pytestmark = pytest.mark.skipif(not SQLiteEngine.availability().ok,
                                reason="sqlean.py with SQLite 3.45+ is not installed")

VARIANTS = [v.name for v in SQLiteAnalytics.variants]

# Lines both variants refuse (-> BatchRejected), by name.
REFUSED = {
    "invalid_json": b'{"did": "did:plc:x", "kind": ',
    # SQLite does not check UTF-8 itself (invalid text is undefined behaviour): the adapter
    # refuses it before binding.
    "invalid_utf8": b'{"did": "did:plc:\xff\xfe", "kind": "commit"}',
    "utf8_encoded_surrogate": b'{"did": "did:plc:\xed\xa0\xbd"}',
    # SQLite's JSON parser stops at 1000 levels of nesting (this document has 1001).
    "deep_1000": b'{"did": "did:plc:deep", "a": ' + b"[" * 1000 + b"]" * 1000 + b"}",
    "raw_control_character": b'{"did": "did:plc:x\x01x"}',
    "byte_order_mark": b'\xef\xbb\xbf{"did": "did:plc:x"}',
    "trailing_garbage": b'{"did": "did:plc:x"} x',
    "two_objects": b'{"did": "did:plc:x"} {"did": "did:plc:y"}',
    "not_an_object": b"[1, 2]",
    "json_string": b'"did:plc:x"',
    # JSON5, which jsonb() alone would take: refused by the strict json_valid() check
    "json5_unquoted_key": b"{did: 'did:plc:x'}",
    "json5_nan": b'{"did": "did:plc:x", "n": NaN}',
    "json5_trailing_comma": b'{"did": "did:plc:x",}',
}
# Valid JSON objects SQLite stores; after loading them the answers must still match the oracle.
ACCEPTED = {
    "nul_escape": b'{"did": "did:plc:nul", "text": "a\\u0000b"}',
    "lone_surrogate": b'{"did": "did:plc:lone", "text": "\\ud83d"}',
    "int_beyond_64_bits": b'{"did": "did:plc:big", "kind": "commit", "n": 123456789012345678901234567890}',
    "overflowing_number": b'{"did": "did:plc:inf", "n": 1e1000000}',
    "deep_999": b'{"did": "did:plc:deep", "a": ' + b"[" * 999 + b"]" * 999 + b"}",
    "raw_carriage_return": b'{"did": "did:plc:cr",\r"kind": "identity"}',
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


def _non_empty_lines(files: list[Path]) -> list[bytes]:
    return [line for path in files for line in iter_lines(path) if line.strip()]


@pytest.fixture(scope="module")
def real_files(real_data_dir: Path) -> list[Path]:
    return dataset_files(real_data_dir)


@pytest.fixture(scope="module", params=VARIANTS)
def loaded(request: pytest.FixtureRequest, real_files: list[Path],
           tmp_path_factory: pytest.TempPathFactory):
    system = open_adapter("sqlite", "analytics",
                          tmp_path_factory.mktemp(f"sqlite-{request.param}") / "work",
                          request.param)
    system.create()
    report = load_files(system.loader(), real_files, SQLiteAnalytics.load_batch_size)
    assert report.refused_count == 0, report.refused
    system.finish_load()
    yield system
    system.engine.stop()


def _fresh(tmp_path: Path, variant: str) -> SQLiteAnalytics:
    system = SQLiteAnalytics(SQLiteEngine(tmp_path / "work"), SQLiteAnalytics.variant_named(variant))
    system.create()
    return system


def test_registered_and_available():
    assert engine_class("sqlite") is SQLiteEngine
    assert adapter_class("sqlite", "analytics") is SQLiteAnalytics
    availability = SQLiteEngine.availability()
    assert availability.ok
    assert tuple(int(p) for p in availability.version.split(".")[:2]) >= (3, 45)
    assert [(v.name, v.role) for v in SQLiteAnalytics.variants] == [("jsonb", "default"),
                                                                     ("text", "alt")]
    assert set(SQLiteEngine(Path("/nonexistent")).versions()) == {"sqlite", "sqlean.py"}


def test_count_and_round_trip(loaded: SQLiteAnalytics, real_files: list[Path]):
    lines = _non_empty_lines(real_files)
    assert loaded.count() == len(lines)
    stored = [row[0] for row in loaded.engine.connection().execute(
        "SELECT json(doc), typeof(doc) FROM documents").fetchall()]
    assert sorted(json.dumps(json.loads(s), sort_keys=True) for s in stored) == sorted(
        json.dumps(json.loads(line), sort_keys=True) for line in lines)
    kinds = {row[0] for row in loaded.engine.connection().execute(
        "SELECT DISTINCT typeof(doc) FROM documents")}
    assert kinds == ({"blob"} if loaded.variant.name == "jsonb" else {"text"})


def test_load_settings(loaded: SQLiteAnalytics):
    con = loaded.engine.connection()
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    indexes = {row[1] for row in con.execute("PRAGMA index_list(documents)")}
    assert indexes == {INDEX}
    assert con.execute("SELECT count(*) FROM sqlite_stat1").fetchone()[0] > 0  # ANALYZE ran


def test_queries_match_the_oracle_and_use_the_index(loaded: SQLiteAnalytics,
                                                    real_files: list[Path]):
    expected = compute_answers(real_files)
    spec = json.loads(json.dumps(loaded.session_spec()))  # picklable and plain
    loaded.release()
    session = SQLiteAnalytics.open_session(spec)
    try:
        for number, text in enumerate(loaded.queries(), start=1):
            outcome = session.execute(number, text)
            check = check_answer(number, outcome.rows, expected,
                                 time_precision_us=SQLiteAnalytics.time_precision_us)
            assert check.status == "ok", (number, check.detail, outcome.rows)
            assert outcome.engine_seconds is None  # in-process: wall time is engine time
            plan = session.explain(number, text)
            assert f"INDEX {INDEX}" in plan, plan
            assert loaded.check_plan(number, plan) is None
        # the worker's connection is read-only
        with pytest.raises(Exception, match="readonly"):
            session.con.execute("INSERT INTO documents (doc) VALUES ('{}')")
    finally:
        session.close()


def test_index_makes_q1_to_q5_read_no_document(loaded: SQLiteAnalytics):
    """Every query is answered from the index alone (no document parsed): covering scans or
    searches whose values come from the index."""
    plans = []
    loaded.release()
    session = SQLiteAnalytics.open_session(loaded.session_spec())
    try:
        for number, text in enumerate(loaded.queries(), start=1):
            plans.append(session.explain(number, text))
    finally:
        session.close()
    assert "SCAN documents USING COVERING INDEX" in plans[0]  # Q1
    assert "SEARCH documents USING COVERING INDEX" in plans[2]  # Q3
    for plan in (plans[1], plans[3], plans[4]):  # Q2, Q4, Q5
        assert f"SEARCH documents USING INDEX {INDEX}" in plan or (
            f"SEARCH documents USING COVERING INDEX {INDEX}" in plan)


def test_check_plan_warns_without_the_index(loaded: SQLiteAnalytics):
    plan = format_query_plan([(2, 0, 0, "SCAN documents"), (4, 0, 0, "USE TEMP B-TREE")])
    assert plan == "SCAN documents\nUSE TEMP B-TREE"
    warning = loaded.check_plan(2, plan)
    assert warning and INDEX in warning and "SCAN documents" in warning
    assert loaded.check_plan(2, None) is None


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.parametrize("variant", VARIANTS)
def test_refused_documents(tmp_path: Path, variant: str, name: str):
    system = _fresh(tmp_path, variant)
    loader = system.loader()
    try:
        with pytest.raises(BatchRejected) as refused:
            loader.load_batch([REFUSED[name]])
        assert str(refused.value)
        # All or nothing: a good document in the same batch is not kept either.
        good = b'{"did": "did:plc:good", "kind": "commit"}'
        with pytest.raises(BatchRejected):
            loader.load_batch([good, REFUSED[name], good])
        assert system.count() == 0
        loader.load_batch([good])
        assert system.count() == 1
    finally:
        loader.close()
        system.engine.stop()


def test_refusal_messages(tmp_path: Path):
    jsonb = _fresh(tmp_path / "jsonb", "jsonb").loader()
    text = _fresh(tmp_path / "text", "text").loader()
    with pytest.raises(BatchRejected, match="malformed JSON"):
        jsonb.load_batch([REFUSED["invalid_json"]])
    with pytest.raises(BatchRejected, match="CHECK constraint failed"):
        jsonb.load_batch([REFUSED["not_an_object"]])
    with pytest.raises(BatchRejected, match="CHECK constraint failed: json_valid"):
        text.load_batch([REFUSED["invalid_json"]])
    for loader in (jsonb, text):
        with pytest.raises(BatchRejected, match="invalid UTF-8 in line 2"):
            loader.load_batch([b"{}", REFUSED["invalid_utf8"]])


@pytest.mark.parametrize("variant", VARIANTS)
def test_hard_documents_and_answers(real_files: list[Path], tmp_path: Path, variant: str):
    """Real events + the accepted hard documents + refused lines, through the generic driver:
    exactly the refused lines are isolated and the answers still match the oracle."""
    hard = tmp_path / "hard.jsonl"
    lines = list(ACCEPTED.values()) + list(REFUSED.values())
    hard.write_bytes(b"\n".join(lines) + b"\n")
    system = _fresh(tmp_path, variant)
    try:
        report = load_files(system.loader(), [*real_files, hard], 4)
        assert report.refused_count == len(REFUSED)
        assert sorted(r.line for r in report.refused) == list(
            range(len(ACCEPTED) + 1, len(lines) + 1))
        system.finish_load()
        assert system.count() == len(_non_empty_lines(real_files)) + len(ACCEPTED)
        text = system.engine.connection().execute(
            "SELECT doc ->> '$.text' FROM documents WHERE doc ->> '$.did' = 'did:plc:bs'"
        ).fetchone()[0]
        assert text == 'a\\b "q" \n \t \u00e9 \U0001F600'
        accepted = tmp_path / "accepted.jsonl"
        accepted.write_bytes(b"\n".join(ACCEPTED.values()) + b"\n")
        expected = compute_answers([*real_files, accepted])
        assert expected["documents"] == system.count()
        spec = system.session_spec()
        system.release()
        session = SQLiteAnalytics.open_session(spec)
        try:
            for number, query in enumerate(system.queries(), start=1):
                rows = session.execute(number, query).rows
                check = check_answer(number, rows, expected)
                assert check.status == "ok", (number, check.detail, rows)
        finally:
            session.close()
    finally:
        system.engine.stop()


def test_storage(loaded: SQLiteAnalytics):
    size = loaded.storage()
    assert size.total and size.data and size.index
    assert size.total >= size.data + size.index
    assert size.on_disk and size.on_disk >= size.total
    assert size.detail["objects"]["documents"] == size.data
    assert size.detail["wal_bytes"] == 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_native_load(real_files: list[Path], tmp_path: Path, variant: str):
    system = _fresh(tmp_path, variant)
    try:
        system.native_load(real_files)
        system.native_load(real_files[:1])
        assert system.count() == len(_non_empty_lines(real_files)) + len(
            _non_empty_lines(real_files[:1]))
    finally:
        system.engine.stop()


def test_create_starts_empty(tmp_path: Path):
    system = _fresh(tmp_path, "jsonb")
    loader = system.loader()
    loader.load_batch([b'{"did": "did:plc:a"}'])
    assert system.count() == 1
    system.finish_load()
    system.create()
    assert system.count() == 0
    assert sorted(p.name for p in system.engine.workdir.iterdir())[0] == "docbench.sqlite"
    system.release()
    system.release()
    system.engine.stop()


def test_cancel(loaded: SQLiteAnalytics):
    loaded.release()
    session = SQLiteAnalytics.open_session(loaded.session_spec())
    try:
        timer = threading.Timer(0.5, session.cancel)
        timer.start()
        started = time.monotonic()
        with pytest.raises(Exception, match="interrupted"):
            session.execute(0, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
                               "SELECT max(i) FROM n")
        assert time.monotonic() - started < 10
    finally:
        session.close()
