"""DuckDB adapter against the real embedded engine (no mocks)."""

from __future__ import annotations

import gzip
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
from docbench.systems.duckdb.analytics import DuckDBAnalytics
from docbench.systems.duckdb.engine import DuckDBEngine
from docbench.systems.duckdb.session import _profile_metrics
from docbench.workloads.analytics.load import load_files

pytestmark = pytest.mark.skipif(not DuckDBEngine.availability().ok,
                                reason="the duckdb package is not installed")

# Lines DuckDB refuses (-> BatchRejected), by name.
REFUSED = {
    "invalid_json": b'{"did": "did:plc:x", "kind": ',
    "invalid_utf8": b'{"did": "did:plc:\xff\xfe", "kind": "commit"}',
    "lone_surrogate": b'{"did": "did:plc:x", "text": "\\ud83d"}',
    "utf8_encoded_surrogate": b'{"did": "did:plc:\xed\xa0\xbd"}',
    "raw_control_character": b'{"did": "did:plc:x\x01x"}',
    # (A line starting with a UTF-8 BOM is not here: DuckDB 2.0.1 takes a BOM at the start of
    # a file, 2.0.0 did not; the load driver refuses such a line itself, for every system,
    # before any engine sees it -- tests/test_documents.py.)
    "trailing_garbage": b'{"did": "did:plc:x"} x',
    "two_objects": b'{"did": "did:plc:x"} {"did": "did:plc:y"}',
    "not_an_object": b"[1, 2]",
    "json_string": b'"did:plc:x"',
}
# Valid JSON objects DuckDB stores; after loading them the answers must still match the oracle.
ACCEPTED = {
    "nul_escape": b'{"did": "did:plc:nul", "text": "a\\u0000b"}',
    "int_beyond_64_bits": b'{"did": "did:plc:big", "kind": "commit", "n": 123456789012345678901234567890}',
    "overflowing_number": b'{"did": "did:plc:inf", "n": 1e1000000}',
    "deep_1000": b'{"did": "did:plc:deep", "a": ' + b"[" * 1000 + b"]" * 1000 + b"}",
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
# Not JSON, but DuckDB's parser is lenient about them (the oracle counts them as invalid lines).
LENIENT = {
    "nan": b'{"did": "did:plc:nan", "n": NaN}',
    "trailing_comma": b'{"did": "did:plc:comma",}',
}


def _non_empty_lines(files: list[Path]) -> list[bytes]:
    return [line for path in files for line in iter_lines(path) if line.strip()]


@pytest.fixture(scope="module")
def real_files(real_data_dir: Path) -> list[Path]:
    return dataset_files(real_data_dir)


@pytest.fixture(scope="module")
def loaded(real_files: list[Path], tmp_path_factory: pytest.TempPathFactory):
    system = open_adapter("duckdb", "analytics", tmp_path_factory.mktemp("duckdb") / "work",
                          "default")
    system.create()
    report = load_files(system.loader(), real_files, DuckDBAnalytics.load_batch_size)
    assert report.refused_count == 0, report.refused
    system.finish_load()
    yield system
    system.engine.stop()


def _fresh(tmp_path: Path) -> DuckDBAnalytics:
    system = DuckDBAnalytics(DuckDBEngine(tmp_path / "work"), DuckDBAnalytics.variants[0])
    system.create()
    return system


def test_registered_and_available():
    assert engine_class("duckdb") is DuckDBEngine
    assert adapter_class("duckdb", "analytics") is DuckDBAnalytics
    availability = DuckDBEngine.availability()
    assert availability.ok and availability.version
    assert [(v.name, v.role) for v in DuckDBAnalytics.variants] == [("default", "default")]
    assert DuckDBAnalytics.load_batch_size == 122_880  # one DuckDB row group


def test_count_and_round_trip(loaded: DuckDBAnalytics, real_files: list[Path]):
    lines = _non_empty_lines(real_files)
    assert loaded.count() == len(lines)
    stored = [row[0] for row in loaded.engine.connection().execute(
        "SELECT doc FROM documents").fetchall()]
    assert sorted(json.dumps(json.loads(s), sort_keys=True) for s in stored) == sorted(
        json.dumps(json.loads(line), sort_keys=True) for line in lines)


def test_no_network_settings(loaded: DuckDBAnalytics):
    con = loaded.engine.connection()
    for name in ("autoinstall_known_extensions", "autoload_known_extensions"):
        assert con.execute(f"SELECT current_setting('{name}')").fetchone()[0] is False


def test_queries_match_the_oracle(loaded: DuckDBAnalytics, real_files: list[Path]):
    expected = compute_answers(real_files)
    spec = json.loads(json.dumps(loaded.session_spec()))  # picklable and plain
    loaded.release()
    session = DuckDBAnalytics.open_session(spec)
    try:
        for number, text in enumerate(loaded.queries(), start=1):
            outcome = session.execute(number, text)
            check = check_answer(number, outcome.rows, expected,
                                 time_precision_us=DuckDBAnalytics.time_precision_us)
            assert check.status == "ok", (number, check.detail, outcome.rows)
            assert outcome.engine_seconds is not None and 0 <= outcome.engine_seconds < 30
            assert outcome.engine_memory is None  # the worker's RSS is the memory figure
            assert outcome.extra.get("peak_buffer_memory", 1) > 0
            plan = session.explain(number, text)
            assert plan and "documents" in plan
            assert loaded.check_plan(number, plan) is None
        # the worker's connection is read-only
        with pytest.raises(Exception, match="read-only"):
            session.con.execute("INSERT INTO documents VALUES ('{}')")
    finally:
        session.close()


def test_profile_metrics_formats():
    assert _profile_metrics('{"query": {"total_time": 0.5}, "system": '
                            '{"peak_buffer_memory": 1024}}') == (0.5, 1024)
    assert _profile_metrics('{"latency": 0.25, "system_peak_buffer_memory": 0}') == (0.25, None)
    assert _profile_metrics("not json") == (None, None)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_documents(loaded: DuckDBAnalytics, name: str):
    loader = loaded.loader()
    before = loaded.count()
    try:
        with pytest.raises(BatchRejected) as refused:
            loader.load_batch([REFUSED[name]])
        assert str(refused.value)
        # All or nothing: a good document in the same batch is not kept either.
        good = b'{"did": "did:plc:good", "kind": "commit"}'
        with pytest.raises(BatchRejected):
            loader.load_batch([good, REFUSED[name], good])
    finally:
        loader.close()
    assert loaded.count() == before


def test_refusal_messages_are_duckdbs(loaded: DuckDBAnalytics):
    loader = loaded.loader()
    try:
        with pytest.raises(BatchRejected, match="Malformed JSON"):
            loader.load_batch([REFUSED["invalid_json"]])
        with pytest.raises(BatchRejected, match="invalid UTF-8"):
            loader.load_batch([REFUSED["invalid_utf8"]])
        with pytest.raises(BatchRejected, match="not a JSON object"):
            loader.load_batch([REFUSED["not_an_object"]])
    finally:
        loader.close()


def test_hard_documents_and_answers(real_files: list[Path], tmp_path: Path):
    """Real events + the accepted hard documents + refused lines, through the generic driver:
    exactly the refused lines are isolated and the answers still match the oracle."""
    hard = tmp_path / "hard.jsonl"
    lines = list(ACCEPTED.values()) + list(REFUSED.values())
    hard.write_bytes(b"\n".join(lines) + b"\n")
    system = _fresh(tmp_path)
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
        session = DuckDBAnalytics.open_session(spec)
        try:
            for number, query in enumerate(system.queries(), start=1):
                rows = session.execute(number, query).rows
                check = check_answer(number, rows, expected)
                assert check.status == "ok", (number, check.detail, rows)
        finally:
            session.close()
    finally:
        system.engine.stop()


def test_lenient_parser(tmp_path: Path):
    system = _fresh(tmp_path)
    loader = system.loader()
    try:
        for line in LENIENT.values():
            loader.load_batch([line])
    finally:
        loader.close()
    assert system.count() == len(LENIENT)
    system.engine.stop()


def test_storage(loaded: DuckDBAnalytics):
    size = loaded.storage()
    assert size.total and size.data and size.index == 0
    assert size.total >= size.data
    assert size.on_disk and size.on_disk >= size.total
    assert size.detail["block_size"] > 0 and size.detail["table_blocks"] > 0
    assert size.detail["compression"]


def test_native_load(real_files: list[Path], tmp_path: Path):
    plain = real_files[0]
    packed = tmp_path / (plain.name + ".gz")
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    system = _fresh(tmp_path)
    try:
        system.native_load([plain, packed])
        assert system.count() == 2 * len(_non_empty_lines([plain]))
    finally:
        system.engine.stop()


def test_create_starts_empty_and_release_is_safe(tmp_path: Path):
    system = _fresh(tmp_path)
    loader = system.loader()
    loader.load_batch([b'{"did": "did:plc:a"}'])
    loader.close()
    assert system.count() == 1
    assert not (system.engine.workdir / "load-batch.ndjson").exists()
    system.create()
    assert system.count() == 0
    system.release()
    system.release()
    system.engine.stop()


def test_cancel(loaded: DuckDBAnalytics):
    loaded.release()
    session = DuckDBAnalytics.open_session(loaded.session_spec())
    try:
        timer = threading.Timer(0.5, session.cancel)
        timer.start()
        started = time.monotonic()
        with pytest.raises(Exception, match="(?i)interrupt"):
            session.execute(0, "SELECT sum(a.range * b.range) FROM range(1000000) a, "
                               "range(1000000) b")
        assert time.monotonic() - started < 10
    finally:
        session.close()
