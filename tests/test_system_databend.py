"""Databend adapter against the real embedded engine (the databend package, no mocks): the
shared cases (tests/analytics_suite.py), in both variants, and Databend's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from analytics_suite import (
    GOOD_LINE,
    AnalyticsAdapterSuite,
    EmbeddedCases,
    SQLTableCases,
    same_documents,
)
from hard_lines import NOT_JSON, ODD_BUT_VALID, pick

from docbench.contracts.common import BatchRejected
from docbench.core.answers import check_answer
from docbench.dataset.oracle.compute import compute_answers
from docbench.systems import REGISTERED, adapter_class
from docbench.systems.databend.analytics import DatabendAnalytics
from docbench.systems.databend.engine import DatabendEngine, sql_string
from docbench.workloads.analytics.expected import answers_without
from docbench.workloads.load import load_files

pytestmark = pytest.mark.skipif(
    not DatabendEngine.availability().ok, reason="the databend package is not installed"
)

# Databend's JSON parser is strict (no NaN, no trailing comma, no unquoted key), refuses an
# escaped lone surrogate, a number beyond a double and nesting beyond 128 levels; docbench's
# loader refuses lines that are not objects (Databend's NDJSON reader would take them as rows).
REFUSED = pick(
    *NOT_JSON,
    "utf8_encoded_surrogate",
    "byte_order_mark",
    "not_an_object",
    "json_string",
    "nan",
    "trailing_comma",
    "json5_unquoted_key",
    "lone_surrogate",
    "overflowing_number",
    "deep_999",
    "deep_1000",
)
ACCEPTED = pick(
    *(name for name in ODD_BUT_VALID if name != "overflowing_number"), "duplicate_keys", "time_us_negative"
)


class TestDatabend(EmbeddedCases, SQLTableCases, AnalyticsAdapterSuite):
    system_name = "databend"
    engine_type = DatabendEngine
    adapter_type = DatabendAnalytics
    variant_roles = [("variant", "default"), ("zstd", "alt")]
    runs_by_default = False
    refused = REFUSED
    accepted = ACCEPTED
    slow_query = "SELECT sum(number % 7) FROM numbers(100000000000)"
    cancel_match = "Databend process ended"
    cancel_within = 10
    every_variant = True

    # ----- the shared cases' hooks --------------------------------------------------------
    def check_version(self, version):
        assert tuple(int(p) for p in version.split(".")[:2]) >= (1, 2)

    def check_registration(self):
        assert set(DatabendEngine(Path("/nonexistent")).versions()) == {"databend"}
        assert DatabendAnalytics.concurrent_clients == "threads"

    def stored_text(self, system, did):
        rows = system.engine.connection().rows(
            f"SELECT as_string(doc['text']) FROM documents WHERE as_string(doc['did']) = {sql_string(did)}"
        )
        return rows[0][0]

    def check_stored(self, system, lines):
        same_documents(system.read_back(), lines)

    def check_explain(self, system, number, plan):
        assert plan and "documents" in plan

    def check_storage(self, system, size):
        assert size.index == 0  # no bloom index on a VARIANT column
        assert size.total == size.data
        assert size.on_disk and size.on_disk >= size.total
        assert size.detail["blocks"] > 0 and size.detail["rows"] == system.count()
        assert size.detail["compression"] == ("zstd" if system.variant.name == "zstd" else "lz4")

    def check_refusal(self, alone, among):
        assert "not a JSON object" in alone or "Invalid JSON row" in alone, alone

    def after_refusals(self, system, loader, before):
        # the loader goes on: a good batch after the refused ones is stored
        loader.load_batch([GOOD_LINE])
        assert system.count() == before + 1
        system.engine.connection().rows("DELETE FROM documents WHERE as_string(doc['did']) = 'did:plc:good'")
        assert system.count() == before

    def check_one_loaded(self, system):
        assert not (system.engine.workdir / "load-batch.ndjson").exists()

    # ----- Databend's own -----------------------------------------------------------------
    def test_registered_not_by_default(self):
        assert "databend" in REGISTERED
        assert DatabendEngine.runs_by_default is False
        assert adapter_class("databend", "portable") is not None

    def test_refusal_messages(self, tmp_path: Path):
        system = DatabendAnalytics(
            DatabendEngine(tmp_path / "work"), DatabendAnalytics.variant_named("variant")
        )
        try:
            system.create()
            loader = system.loader()
            with pytest.raises(BatchRejected, match="Invalid JSON row"):
                loader.load_batch([REFUSED["invalid_json"]])
            with pytest.raises(BatchRejected, match="recursion limit"):
                loader.load_batch([REFUSED["deep_999"]])
            with pytest.raises(BatchRejected, match="line 2 of the batch is not a JSON object"):
                loader.load_batch([b"{}", REFUSED["not_an_object"]])
            loader.close()
            assert system.count() == 0
        finally:
            system.release()

    def test_generated_6k(self, generated_6k: Path, tmp_path: Path):
        """The generated 6k (its hard documents included) through the generic driver: the
        refused ones isolated with their line and Databend's reason, Q1-Q5 as the oracle's."""
        from docbench.dataset.reader import dataset_files

        files = dataset_files(generated_6k)
        system = DatabendAnalytics(
            DatabendEngine(tmp_path / "work"), DatabendAnalytics.variant_named("variant")
        )
        try:
            system.create()
            report = load_files(system.loader(), files, DatabendAnalytics.load_batch_size)
            system.finish_load()
            # the generator's hard documents Databend refuses, each alone, with its line and reason
            assert report.refused_count > 0
            for refusal in report.refused:
                assert refusal.line > 0 and refusal.reason
            assert system.count() == report.offered - report.refused_count
            expected = answers_without(files, report.refused_lines, compute_answers(files))
            assert expected["documents"] == system.count()
            spec = system.session_spec()
            system.release()
            session = DatabendAnalytics.open_session(spec)
            try:
                for number, text in enumerate(system.queries(), start=1):
                    rows = session.execute(number, text).rows
                    check = check_answer(number, rows, expected)
                    assert check.status == "ok", (number, check.detail, rows[:5])
            finally:
                session.close()
            assert system.storage().data
        finally:
            system.release()
