"""DuckDB adapter against the real embedded engine (no mocks): the shared cases
(tests/analytics_suite.py) and DuckDB's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from analytics_suite import AnalyticsAdapterSuite, EmbeddedCases, SQLTableCases, same_documents
from hard_lines import NOT_JSON, ODD_BUT_VALID, pick
from test_load_driver import GOOD

from docbench.contracts.analytics import Loader
from docbench.contracts.common import BatchRejected
from docbench.systems import open_adapter
from docbench.systems.duckdb.analytics import DuckDBAnalytics
from docbench.systems.duckdb.engine import DuckDBEngine
from docbench.systems.duckdb.session import _profile_metrics
from docbench.workloads.load import load_files

pytestmark = pytest.mark.skipif(
    not DuckDBEngine.availability().ok, reason="the duckdb package is not installed"
)

# Not JSON, but DuckDB's parser is lenient about them (the oracle counts them as invalid lines).
LENIENT = pick("nan", "trailing_comma")

# (A line starting with a UTF-8 BOM is not here: DuckDB 2.0.1 takes a BOM at the start of a file,
# 2.0.0 did not; the load driver refuses such a line itself, for every system, before any engine
# sees it -- tests/test_documents.py.)
REFUSED = pick(*NOT_JSON, "lone_surrogate", "utf8_encoded_surrogate", "not_an_object", "json_string")
# Valid JSON objects DuckDB stores; after loading them the answers must still match the oracle.
ACCEPTED = pick(*ODD_BUT_VALID, "deep_1000", "duplicate_keys", "time_us_negative")


class TestDuckDB(EmbeddedCases, SQLTableCases, AnalyticsAdapterSuite):
    system_name = "duckdb"
    engine_type = DuckDBEngine
    adapter_type = DuckDBAnalytics
    variant_roles = [("default", "default"), ("variant", "representation"), ("struct", "representation")]
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


# The generic load driver on DuckDB's whole-file path (from test_load_driver.py).
class WithoutSkipping(Loader):
    """A real loader offered the all-or-nothing whole-file path and batches only."""

    def __init__(self, inner: Loader) -> None:
        self.inner = inner

    def load_batch(self, lines: list[bytes]) -> None:
        self.inner.load_batch(lines)

    def load_file(self, path: Path, documents: int) -> bool:
        return self.inner.load_file(path, documents)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("skipping", [True, False])
def test_whole_file_fast_path_names_or_falls_back_to_batches(tmp_path: Path, skipping: bool) -> None:
    """DuckDB takes a plain file whole. With its skipping path the refused line is named in
    the same pass (no batch retried); with the all-or-nothing path the refused file is loaded
    in batches instead. Either way only the refused line is lost; a file with a blank line
    never takes the fast path."""
    from docbench.workloads.load import plain_file_documents

    system = open_adapter("duckdb", "analytics", tmp_path / "db")
    system.engine.start()
    system.create()
    clean = tmp_path / "file_0001.json"
    clean.write_bytes(b"\n".join([GOOD] * 10) + b"\n")
    dirty = tmp_path / "file_0002.json"
    dirty.write_bytes(b"\n".join([GOOD] * 4 + [b'{"did": broken'] + [GOOD] * 5) + b"\n")
    blank = tmp_path / "file_0003.json"
    blank.write_bytes(GOOD + b"\n\n" + GOOD + b"\n")
    assert plain_file_documents(clean) == 10 and plain_file_documents(blank) is None
    loader = system.loader() if skipping else WithoutSkipping(system.loader())
    report = load_files(loader, [clean, dirty, blank], 100)
    assert report.whole_file_refusals == (0 if skipping else 1)
    assert (report.retried_batches == 0) == skipping  # bisection only without the skipping path
    assert [(r.file, r.line) for r in report.refused] == [("file_0002.json", 5)]
    assert "Malformed JSON" in report.refused[0].reason
    assert report.offered == 10 + 10 + 2 and report.empty_lines == 1
    assert system.count() == 10 + 9 + 2
    system.release()
    system.engine.stop()


def test_duckdb_takes_plain_files_two_per_statement_and_names_each_files_refusals(tmp_path: Path) -> None:
    """DuckDB's reader runs its threads across files: the driver hands it two files per
    statement, commits them as one unit, and every refusal keeps its own file and line."""
    files = []
    for number in range(1, 4):
        lines = [GOOD] * 50
        lines[10 * number - 1] = b'{"did": "\\ud83d"}'  # a lone surrogate: DuckDB refuses it
        path = tmp_path / f"file_{number:04d}.json"
        path.write_bytes(b"\n".join(lines) + b"\n")
        files.append(path)
    system = open_adapter("duckdb", "analytics", tmp_path / "db")
    system.engine.start()
    try:
        system.create()
        units: list[list[str]] = []
        report = load_files(
            system.loader(), files, 7, on_committed=lambda paths, _: units.append([p.name for p in paths])
        )
        assert units == [["file_0001.json", "file_0002.json"], ["file_0003.json"]]
        assert sorted((r.file, r.line) for r in report.refused) == [
            ("file_0001.json", 10),
            ("file_0002.json", 20),
            ("file_0003.json", 30),
        ]
        assert all("surrogate" in r.reason for r in report.refused)
        assert report.retried_batches == 0
        assert system.count() == 3 * 49
    finally:
        system.release()
        system.engine.stop()


# ----- the fidelity workload (from tests/test_fidelity.py: its run of every engine calls this) ---


def check_fidelity(documents: dict[str, dict], report: str) -> None:
    from test_fidelity import TESTED, _outcomes, only

    # Text kept as it came: every document byte for byte; what the JSON reader refuses aside.
    only(documents, "duckdb/default", "identical", {"lone_surrogate": "refused"})
    assert documents["duckdb/default"]["lossless"] is True
    # DuckDB's VARIANT: integers beyond 64 bits become doubles, the last duplicate is kept.
    variant = _outcomes(documents["duckdb/variant"])
    assert variant["int_30_digits"] == variant["duplicate_keys"] == "changed"
    assert documents["duckdb/variant"]["lossless"] is False
    # The columns read_ndjson infers: no column named "" (refused alone); together, every
    # document is given every column, an interaction of the inference with the other documents.
    struct = {row["name"]: row for row in documents["duckdb/struct"]["documents"]}
    assert struct["empty_key"]["outcome"] == "refused"
    assert struct["key_order"]["outcome"] == "same_value"
    together = {i["document"]: i for i in documents["duckdb/struct"]["interactions"]}
    assert together["key_order"]["together"] == "changed" and together["key_order"]["after"] in TESTED


# ----- the representation labels (moved from tests/test_representations.py) ------------------


def test_labels_name_the_settings_beyond_the_engine_defaults(tmp_path) -> None:
    from test_representations import labels_beyond_defaults

    assert labels_beyond_defaults("duckdb", "variant", tmp_path) == {}
