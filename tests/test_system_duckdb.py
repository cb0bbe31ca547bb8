"""DuckDB adapter against the real embedded engine (no mocks): the shared cases
(tests/analytics_suite.py) and DuckDB's own."""

from __future__ import annotations

import pytest
from analytics_suite import AnalyticsAdapterSuite, EmbeddedCases, SQLTableCases, same_documents

from docbench.contracts.common import BatchRejected
from docbench.systems.duckdb.analytics import DuckDBAnalytics
from docbench.systems.duckdb.engine import DuckDBEngine
from docbench.systems.duckdb.session import _profile_metrics

pytestmark = pytest.mark.skipif(
    not DuckDBEngine.availability().ok, reason="the duckdb package is not installed"
)

# Not JSON, but DuckDB's parser is lenient about them (the oracle counts them as invalid lines).
LENIENT = {
    "nan": b'{"did": "did:plc:nan", "n": NaN}',
    "trailing_comma": b'{"did": "did:plc:comma",}',
}

REFUSED = {
    "invalid_json": b'{"did": "did:plc:x", "kind": ',
    "invalid_utf8": b'{"did": "did:plc:\xff\xfe", "kind": "commit"}',
    "lone_surrogate": b'{"did": "did:plc:x", "text": "\\ud83d"}',
    "utf8_encoded_surrogate": b'{"did": "did:plc:\xed\xa0\xbd"}',
    "raw_control_character": b'{"did": "did:plc:x\x01x"}',
    # (A line starting with a UTF-8 BOM is not here: DuckDB 2.0.1 takes a BOM at the start
    # of a file, 2.0.0 did not; the load driver refuses such a line itself, for every
    # system, before any engine sees it -- tests/test_documents.py.)
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


class TestDuckDB(EmbeddedCases, SQLTableCases, AnalyticsAdapterSuite):
    system_name = "duckdb"
    engine_type = DuckDBEngine
    adapter_type = DuckDBAnalytics
    variant_roles = [("default", "default")]
    refused = REFUSED
    accepted = ACCEPTED
    slow_query = "SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b"
    cancel_match = "(?i)interrupt"
    cancel_within = 10

    # ----- the shared cases' hooks --------------------------------------------------------
    def check_registration(self):
        assert DuckDBAnalytics.load_batch_size == 122_880  # one DuckDB row group

    def check_stored(self, system, lines):
        same_documents(
            [row[0] for row in system.engine.connection().execute("SELECT doc FROM documents").fetchall()],
            lines,
        )

    def check_outcome(self, number, outcome):
        super().check_outcome(number, outcome)
        assert outcome.engine_memory is None  # the worker's RSS is the memory figure
        assert outcome.extra.get("peak_buffer_memory", 1) > 0

    def check_explain(self, system, number, plan):
        assert plan and "documents" in plan
        assert system.check_plan(number, plan) is None

    def check_session(self, system, session):
        # the worker's connection is read-only
        with pytest.raises(Exception, match="read-only"):
            session.con.execute("INSERT INTO documents VALUES ('{}')")

    def check_storage(self, system, size):
        assert size.index == 0
        assert size.total >= size.data
        assert size.on_disk and size.on_disk >= size.total
        assert size.detail["block_size"] > 0 and size.detail["table_blocks"] > 0
        assert size.detail["compression"]

    def check_one_loaded(self, system):
        assert not (system.engine.workdir / "load-batch.ndjson").exists()

    # ----- DuckDB's own -------------------------------------------------------------------
    def test_no_network_settings(self, loaded: DuckDBAnalytics):
        con = loaded.engine.connection()
        for name in ("autoinstall_known_extensions", "autoload_known_extensions"):
            assert con.execute(f"SELECT current_setting('{name}')").fetchone()[0] is False

    def test_profile_metrics_formats(self):
        assert _profile_metrics('{"query": {"total_time": 0.5}, "system": {"peak_buffer_memory": 1024}}') == (
            0.5,
            1024,
        )
        assert _profile_metrics('{"latency": 0.25, "system_peak_buffer_memory": 0}') == (0.25, None)
        assert _profile_metrics("not json") == (None, None)

    def test_refusal_messages_are_duckdbs(self, loaded: DuckDBAnalytics):
        loader = loaded.loader()
        try:
            with pytest.raises(BatchRejected, match="Malformed JSON"):
                loader.load_batch([self.refused["invalid_json"]])
            with pytest.raises(BatchRejected, match="invalid UTF-8"):
                loader.load_batch([self.refused["invalid_utf8"]])
            with pytest.raises(BatchRejected, match="not a JSON object"):
                loader.load_batch([self.refused["not_an_object"]])
        finally:
            loader.close()

    def test_lenient_parser(self, tmp_path):
        system = DuckDBAnalytics(DuckDBEngine(tmp_path / "work"), DuckDBAnalytics.variants[0])
        system.create()
        loader = system.loader()
        try:
            for line in LENIENT.values():
                loader.load_batch([line])
        finally:
            loader.close()
        assert system.count() == len(LENIENT)
        system.engine.stop()
