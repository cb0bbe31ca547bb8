"""SQLite adapter (sqlean.py: SQLite 3.45+ with JSONB) against the real engine (no mocks): the
shared cases (tests/analytics_suite.py), in both variants, and SQLite's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from analytics_suite import (
    GOOD_LINE,
    AnalyticsAdapterSuite,
    EmbeddedCases,
    SQLTableCases,
    non_empty_lines,
    same_documents,
)
from conftest import small_copy
from hard_lines import NOT_JSON, ODD_BUT_VALID, pick
from test_reliability import post_load_steps

from docbench.contracts.common import BatchRejected
from docbench.core.ownership import DIRECTORY_MARK
from docbench.systems.sqlite.analytics import INDEX, SQLiteAnalytics
from docbench.systems.sqlite.engine import SQLiteEngine
from docbench.systems.sqlite.session import format_query_plan

pytestmark = pytest.mark.skipif(
    not SQLiteEngine.availability().ok, reason="sqlean.py with SQLite 3.45+ is not installed"
)

# Lines both variants refuse (-> BatchRejected), by name.
# SQLite does not check UTF-8 itself (invalid text is undefined behaviour): the adapter refuses it
# before binding. Its JSON parser stops at 1000 levels of nesting (deep_1000 has 1001). JSON5,
# which jsonb() alone would take, is refused by the strict json_valid() check.
REFUSED = pick(
    *NOT_JSON,
    "utf8_encoded_surrogate",
    "deep_1000",
    "byte_order_mark",
    "not_an_object",
    "json_string",
    "json5_unquoted_key",
    "json5_nan",
    "json5_trailing_comma",
)
# Valid JSON objects SQLite stores; after loading them the answers must still match the oracle.
ACCEPTED = pick(*ODD_BUT_VALID, "lone_surrogate", "deep_999", "time_us_negative")


class TestSQLite(EmbeddedCases, SQLTableCases, AnalyticsAdapterSuite):
    system_name = "sqlite"
    engine_type = SQLiteEngine
    adapter_type = SQLiteAnalytics
    variant_roles = [("jsonb", "default"), ("text", "alt")]
    refused = REFUSED
    accepted = ACCEPTED
    slow_query = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
    cancel_match = "interrupted"
    cancel_within = 10
    every_variant = True

    # ----- the shared cases' hooks --------------------------------------------------------
    def check_version(self, version):
        assert tuple(int(p) for p in version.split(".")[:2]) >= (3, 45)

    def check_registration(self):
        assert set(SQLiteEngine(Path("/nonexistent")).versions()) == {"sqlite", "sqlean.py"}

    def check_stored(self, system, lines):
        con = system.engine.connection()
        same_documents(
            [row[0] for row in con.execute("SELECT json(doc), typeof(doc) FROM documents").fetchall()], lines
        )
        kinds = {row[0] for row in con.execute("SELECT DISTINCT typeof(doc) FROM documents")}
        assert kinds == ({"blob"} if system.variant.name == "jsonb" else {"text"})

    def check_outcome(self, number, outcome):
        assert outcome.engine_seconds is None  # in-process: wall time is engine time

    def check_explain(self, system, number, plan):
        assert f"INDEX {INDEX}" in plan, plan
        assert system.check_plan(number, plan) is None

    def check_session(self, system, session):
        # the worker's connection is read-only
        with pytest.raises(Exception, match="readonly"):
            session.con.execute("INSERT INTO documents (doc) VALUES ('{}')")

    def check_storage(self, system, size):
        assert size.index
        assert size.total >= size.data + size.index
        assert size.on_disk and size.on_disk >= size.total
        assert size.detail["objects"]["documents"] == size.data
        assert size.detail["wal_bytes"] == 0

    def after_refusals(self, system, loader, before):
        # the loader goes on: a good batch after the refused ones is stored
        loader.load_batch([GOOD_LINE])
        assert system.count() == before + 1
        con = system.engine.connection()
        con.execute("DELETE FROM documents WHERE doc ->> '$.did' = 'did:plc:good'")
        assert system.count() == before

    def native_load_files(self, real_files, tmp_path):
        return [real_files, real_files[:1]], len(non_empty_lines(real_files)) + len(
            non_empty_lines(real_files[:1])
        )

    def check_one_loaded(self, system):
        system.finish_load()

    def check_recreated(self, system):
        files = sorted(p.name for p in system.engine.workdir.iterdir() if p.name != DIRECTORY_MARK)
        assert files[0] == "docbench.sqlite"

    # ----- SQLite's own -------------------------------------------------------------------
    def test_load_settings(self, loaded: SQLiteAnalytics):
        con = loaded.engine.connection()
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert con.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        indexes = {row[1] for row in con.execute("PRAGMA index_list(documents)")}
        assert indexes == {INDEX}
        assert con.execute("SELECT count(*) FROM sqlite_stat1").fetchone()[0] > 0  # ANALYZE ran

    def test_index_makes_q1_to_q5_read_no_document(self, loaded: SQLiteAnalytics):
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
                f"SEARCH documents USING COVERING INDEX {INDEX}" in plan
            )

    def test_check_plan_warns_without_the_index(self, loaded: SQLiteAnalytics):
        plan = format_query_plan([(2, 0, 0, "SCAN documents"), (4, 0, 0, "USE TEMP B-TREE")])
        assert plan == "SCAN documents\nUSE TEMP B-TREE"
        warning = loaded.check_plan(2, plan)
        assert warning and INDEX in warning and "SCAN documents" in warning
        assert loaded.check_plan(2, None) is None

    def test_refusal_messages(self, tmp_path: Path):
        def fresh(variant: str):
            system = SQLiteAnalytics(
                SQLiteEngine(tmp_path / variant / "work"), SQLiteAnalytics.variant_named(variant)
            )
            system.create()
            return system.loader()

        jsonb, text = fresh("jsonb"), fresh("text")
        with pytest.raises(BatchRejected, match="malformed JSON"):
            jsonb.load_batch([self.refused["invalid_json"]])
        with pytest.raises(BatchRejected, match="CHECK constraint failed"):
            jsonb.load_batch([self.refused["not_an_object"]])
        with pytest.raises(BatchRejected, match="CHECK constraint failed: json_valid"):
            text.load_batch([self.refused["invalid_json"]])
        for loader in (jsonb, text):
            with pytest.raises(BatchRejected, match="invalid UTF-8 in line 2"):
                loader.load_batch([b"{}", self.refused["invalid_utf8"]])


@pytest.mark.server  # a server or a 1m dataset: not the quick loop's
def test_every_post_load_step_is_timed_on_its_own(
    real_data_dir: Path, tmp_path: Path, own_home: Path
) -> None:
    """(From tests/test_reliability.py, which times every system's steps.) SQLite's last step
    folds the write-ahead log into the database."""
    by_system = post_load_steps(
        ["sqlite"], ["jsonb"], small_copy(real_data_dir, tmp_path), tmp_path / "results"
    )
    assert by_system["sqlite"][-1]["step"] == "PRAGMA wal_checkpoint(TRUNCATE)"


# ----- the storage workload (from tests/test_storage_workload.py) -----------------------------


def check_storage_cells(results: Path) -> None:
    """test_storage_workload.py's embedded engines' run (jsonb)."""
    from test_storage_workload import _cells

    sqlite = _cells(results, "sqlite", "jsonb")
    # No compression in SQLite: repetitive takes the same room as random (overflow pages).
    assert sqlite[(9000, "repetitive")]["total_size"] == sqlite[(9000, "random")]["total_size"]
    assert sqlite[(9000, "random")]["detail"]["overflow"] > 0


# ----- the fidelity workload (from tests/test_fidelity.py: its run of every engine calls this) ---


def check_fidelity(documents: dict[str, dict], report: str) -> None:
    from test_fidelity import only

    # Text kept as it came: every document byte for byte.
    only(documents, "sqlite/text", "identical", {})
