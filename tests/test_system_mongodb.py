"""The mongodb system in URL mode (``MongoDBEngine(workdir, url)``, ``--mongodb-url``): the shared
cases (tests/analytics_suite.py) and MongoDB's own.

No real mongod can be obtained here, so the server behind the URL is the session's (conftest's
``mongodb_url``: $DOCBENCH_MONGODB_URL, else the session's FerretDB 2 on DocumentDB):
everything that goes over the wire is tested for real, the five pipelines must give the
oracle's answers; what only a real MongoDB does (WiredTiger compressors, covered index plans) is
checked on recorded explain documents.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from analytics_suite import AnalyticsAdapterSuite, BadLinesCases

from docbench.contracts.common import BatchRejected
from docbench.systems.mongodb.analytics import INDEX_NAME, MongoDBAnalytics
from docbench.systems.mongodb.engine import MARKER_COLLECTION, MongoDBEngine

pytest.importorskip("pymongo")


def load(system: MongoDBAnalytics, lines: list[bytes]) -> None:
    system.create()
    loader = system.loader()
    for start in range(0, len(lines), system.load_batch_size):
        loader.load_batch(lines[start : start + system.load_batch_size])
    loader.close()
    system.finish_load()


BAD_LINES = {
    "invalid_json": (b'{"did": "x", ', True),
    "invalid_utf8": (b'{"did": "\xff\xfe"}', True),
    "nul_escape_in_value": (b'{"did": "a\\u0000b"}', False),
    "integer_beyond_64_bits": (b'{"n": 123456789012345678901234567890}', True),
    "nesting_1000_deep": (b'{"a":' + b"[" * 1000 + b"]" * 1000 + b"}", True),
}


class TestMongoDB(BadLinesCases, AnalyticsAdapterSuite):
    system_name = "mongodb"
    engine_type = MongoDBEngine
    adapter_type = MongoDBAnalytics
    variant_roles = [("snappy", "default"), ("zstd", "best")]
    runs_by_default = False
    good_line = (
        b'{"did":"did:plc:a","time_us":1732206349000167,"kind":"commit","commit":{"operation":'
        b'"create","collection":"app.bsky.feed.post","record":{"$type":"app.bsky.feed.post"}}}'
    )
    bad_lines = BAD_LINES

    # ----- the shared cases' hooks --------------------------------------------------------
    def check_registration(self):
        assert MongoDBEngine.embedded is False

    def check_outcome(self, number, outcome):
        """engine_seconds: the server's latency statistics (a real MongoDB's; FerretDB has none)."""

    def check_explain(self, system, number, plan):
        # The server's own explain document (a real MongoDB's is checked by test_check_plan).
        assert plan

    def check_storage(self, system, size):
        assert size.index > 0
        assert INDEX_NAME in size.detail["index_sizes"]
        assert size.on_disk is None  # not docbench's directory

    # ----- MongoDB's own ------------------------------------------------------------------
    def test_availability_by_url(self, server_url):
        url = server_url(self.system_name)
        availability = MongoDBEngine.availability(url)
        assert availability.ok
        assert availability.version.startswith("FerretDB v2.7.0")
        assert not MongoDBEngine.availability("mongodb://127.0.0.1:9/").ok

    def test_queries_are_plain_json_pipelines(self, loaded):
        for text in loaded.queries():
            query = json.loads(text)
            assert isinstance(query["pipeline"], list) and query["columns"]

    def test_url_mode_cannot_restart_and_measures_no_memory(self, loaded):
        assert loaded.engine.can_restart is False
        loaded.engine.restart()  # nothing happens
        assert loaded.engine.is_alive()
        session = MongoDBAnalytics.open_session(loaded.session_spec())
        try:
            assert session.engine_pids() == []
        finally:
            session.close()

    def test_variants_each_load_and_other_databases_untouched(self, server_url, tmp_path, real_lines):
        import pymongo

        url = server_url(self.system_name)
        client = pymongo.MongoClient(url)
        try:
            client.someone_else.things.insert_one({"mine": True})
            # The server is the session's: other tests' collections may be there already.
            before = set(client.docbench.list_collection_names())
            for variant in MongoDBAnalytics.variants:
                system = MongoDBAnalytics(MongoDBEngine(tmp_path / variant.name, url=url), variant)
                system.engine.start()
                try:
                    load(system, real_lines)
                    assert system.count() == len(real_lines)
                    assert system.storage().total > 0
                finally:
                    system.engine.stop()
            assert client.someone_else.things.count_documents({"mine": True}) == 1
            assert set(client.docbench.list_collection_names()) - before <= {
                f"bluesky_{v.name}" for v in MongoDBAnalytics.variants
            } | {MARKER_COLLECTION}
        finally:
            client.drop_database("someone_else")
            client.close()

    def test_server_refusal_keeps_nothing_of_the_batch(self, engine):
        """Per-document refusals by the server (BulkWriteError, here a duplicate _id): the
        inserted rest of the batch is deleted, and the refusal names the line."""
        # a collection of its own beside the loaded one
        system = MongoDBAnalytics(
            engine, dataclasses.replace(MongoDBAnalytics.variants[0], name="server_refusal")
        )
        system.create()
        try:
            loader = system.loader()
            with pytest.raises(BatchRejected, match="batch line 3") as refused:
                loader.load_batch([b'{"a": 1}', b'{"_id": "x"}', b'{"_id": "x"}', self.good_line])
            assert set(refused.value.refused) == {2}
            loader.close()
            assert system.count() == 0
        finally:
            system.collection().drop()


# Explain documents of a real MongoDB 7 (shape: aggregate explain, classic and SBE plans).
COVERED = {
    "stages": [
        {
            "$cursor": {
                "queryPlanner": {
                    "winningPlan": {
                        "stage": "PROJECTION_COVERED",
                        "inputStage": {"stage": "IXSCAN", "indexName": INDEX_NAME},
                    }
                }
            }
        },
        {"$group": {}},
    ]
}
SBE_COVERED = {
    "explainVersion": "2",
    "queryPlanner": {
        "winningPlan": {
            "queryPlan": {
                "stage": "GROUP",
                "inputStage": {
                    "stage": "PROJECTION_COVERED",
                    "inputStage": {"stage": "IXSCAN", "indexName": INDEX_NAME},
                },
            },
            "slotBasedPlan": {"stages": "..."},
        }
    },
}
FETCHED = {
    "queryPlanner": {
        "winningPlan": {
            "queryPlan": {
                "stage": "GROUP",
                "inputStage": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": INDEX_NAME}},
            }
        }
    }
}
COLLSCAN = {
    "queryPlanner": {
        "winningPlan": {"stage": "COLLSCAN"},
        "rejectedPlans": [{"stage": "IXSCAN", "indexName": INDEX_NAME}],
    }
}


def test_check_plan(tmp_path):
    system = MongoDBAnalytics(
        MongoDBEngine(tmp_path, url="mongodb://127.0.0.1:9/"), MongoDBAnalytics.variant_named("snappy")
    )
    assert system.check_plan(1, json.dumps(COLLSCAN)) is None
    assert system.check_plan(2, json.dumps(COVERED)) is None
    assert system.check_plan(3, json.dumps(SBE_COVERED)) is None
    assert "not covered" in system.check_plan(4, json.dumps(FETCHED))
    assert "does not scan the index" in system.check_plan(5, json.dumps(COLLSCAN))
    assert system.check_plan(2, None)


# ----- the storage workload (moved from tests/test_storage_workload.py) -----------------------


def test_matrix_variants_declared() -> None:
    """MongoDB: one variant per block compressor."""
    from docbench.systems import adapter_variants

    assert [v.name for v in adapter_variants("mongodb", "storage")] == ["snappy", "zstd", "zlib", "none"]


def test_mongodb_target_by_url_on_ferretdb(tmp_path, mongodb_url: str) -> None:
    """The mongodb module (no mongod here) against a FerretDB server given by URL: the
    create option is sent (FerretDB ignores it), fsync is refused and recorded."""
    from test_storage_workload import SERVER_ROWS, _check_loaded

    from docbench.systems import open_adapter
    from docbench.workloads.storage.runner import StorageRequest, run_cell

    target = open_adapter("mongodb", "storage", tmp_path / "work", "zstd", url=mongodb_url)
    request = StorageRequest(
        rows=SERVER_ROWS, sizes=[1000], entropies=["random"], work_dir=tmp_path / "documents"
    )
    target.start()
    try:
        if not target.version().startswith("FerretDB"):
            pytest.skip("DOCBENCH_MONGODB_URL is not a FerretDB server")
        cell = run_cell(target, 1000, "random", request)
    finally:
        target.stop()
    _check_loaded({(1000, "random"): cell}, own_directory=False)
    assert cell["on_disk"] is None  # a server by URL: its directory is not docbench's
    assert cell["detail"]["block_compressor_requested"] == "zstd"
    assert cell["detail"]["checkpoint"].startswith("fsync refused")
