"""The mongodb system in URL mode (``MongoDBEngine(workdir, url)``, ``--mongodb-url``).

No real mongod can be obtained here, so the server behind the URL is FerretDB 2 on DocumentDB
that this module starts itself (installed once by ``docbench setup ferretdb``): everything that
goes over the wire is tested for real, the five pipelines must give the oracle's answers; what
only a real MongoDB does (WiredTiger compressors, covered index plans) is checked on recorded
explain documents.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docbench.answers import AnswerCheck, check_answer
from docbench.contracts.common import BatchRejected
from docbench.dataset.oracle import compute_answers
from docbench.dataset.reader import iter_lines
from docbench.systems import engine_class
from docbench.systems.mongodb.analytics import INDEX_NAME, MongoDBAnalytics
from docbench.systems.mongodb.engine import MARKER_COLLECTION, MongoDBEngine

pytest.importorskip("pymongo")

EXPECTED_STATUS = {1: "ok", 2: "ok", 3: "ok", 4: "ok", 5: "ok"}

GOOD = (b'{"did":"did:plc:a","time_us":1732206349000167,"kind":"commit","commit":{"operation":'
        b'"create","collection":"app.bsky.feed.post","record":{"$type":"app.bsky.feed.post"}}}')
BAD_LINES = {
    "invalid_json": (b'{"did": "x", ', True),
    "invalid_utf8": (b'{"did": "\xff\xfe"}', True),
    "nul_escape_in_value": (b'{"did": "a\\u0000b"}', False),
    "integer_beyond_64_bits": (b'{"n": 123456789012345678901234567890}', True),
    "nesting_1000_deep": (b'{"a":' + b"[" * 1000 + b"]" * 1000 + b"}", True),
}


def real_files(data_dir: Path) -> list[Path]:
    """The real events: *.jsonl only (other files may sit beside them)."""
    files = sorted(data_dir.glob("*.jsonl"))
    assert files
    return files


@pytest.fixture(scope="session")
def ferretdb_installed() -> None:
    from docbench.setup import setup_systems

    assert setup_systems(["ferretdb"]) == 0


@pytest.fixture(scope="module")
def server_url(ferretdb_installed, tmp_path_factory):
    from docbench.systems.ferretdb.engine import FerretDBServer

    ferret = FerretDBServer(tmp_path_factory.mktemp("ferretdb-server"))
    ferret.start()
    try:
        yield ferret.uri
    finally:
        ferret.stop()
    assert not ferret.running()


@pytest.fixture(scope="module")
def real_lines(real_data_dir: Path) -> list[bytes]:
    return [line for path in real_files(real_data_dir) for line in iter_lines(path)
            if line.strip()]


@pytest.fixture(scope="module")
def oracle(real_data_dir: Path) -> dict:
    return compute_answers(real_files(real_data_dir))


def load(system: MongoDBAnalytics, lines: list[bytes]) -> None:
    system.create()
    loader = system.loader()
    for start in range(0, len(lines), system.load_batch_size):
        loader.load_batch(lines[start:start + system.load_batch_size])
    loader.close()
    system.finish_load()


@pytest.fixture(scope="module")
def loaded(server_url, tmp_path_factory, real_lines):
    system = MongoDBAnalytics(MongoDBEngine(tmp_path_factory.mktemp("mongodb"), url=server_url),
                              MongoDBAnalytics.variant_named("snappy"))
    system.engine.start()
    try:
        load(system, real_lines)
        yield system
    finally:
        system.engine.stop()


def test_registered_and_needs_url():
    cls = engine_class("mongodb")
    assert cls is MongoDBEngine
    assert cls.embedded is False and cls.runs_by_default is False
    availability = MongoDBEngine.availability(None)
    assert not availability.ok and "--mongodb-url" in availability.reason
    assert {v.name: v.role for v in MongoDBAnalytics.variants} == {"snappy": "default", "zstd": "best"}


def test_availability_by_url(server_url):
    availability = MongoDBEngine.availability(server_url)
    assert availability.ok
    assert availability.version.startswith("FerretDB v2.7.0")
    assert not MongoDBEngine.availability("mongodb://127.0.0.1:9/").ok


def test_count_equals_lines(loaded, real_lines):
    assert loaded.count() == len(real_lines)


def test_queries(loaded, oracle):
    statuses = {}
    for number, text in enumerate(loaded.queries(), 1):
        session = MongoDBAnalytics.open_session(loaded.session_spec())
        try:
            outcome = session.execute(number, text)
            check = check_answer(number, outcome.rows, oracle,
                                 time_precision_us=MongoDBAnalytics.time_precision_us)
        except Exception as error:  # noqa: BLE001
            check = AnswerCheck.error(f"{type(error).__name__}: {error}")
        finally:
            session.close()
        statuses[number] = check.status
        assert check.detail
    assert statuses == EXPECTED_STATUS


def test_queries_are_plain_json_pipelines(loaded):
    for text in loaded.queries():
        query = json.loads(text)
        assert isinstance(query["pipeline"], list) and query["columns"]


def test_url_mode_cannot_restart_and_measures_no_memory(loaded):
    assert loaded.engine.can_restart is False
    loaded.engine.restart()  # nothing happens
    assert loaded.engine.is_alive()
    session = MongoDBAnalytics.open_session(loaded.session_spec())
    try:
        assert session.engine_pids() == []
    finally:
        session.close()


def test_storage(loaded):
    size = loaded.storage()
    assert size.total > 0 and size.data > 0 and size.index > 0
    assert INDEX_NAME in size.detail["index_sizes"]
    assert size.on_disk is None  # not docbench's directory


def test_variants_each_load_and_other_databases_untouched(server_url, tmp_path, real_lines):
    import pymongo

    client = pymongo.MongoClient(server_url)
    try:
        client.someone_else.things.insert_one({"mine": True})
        for variant in MongoDBAnalytics.variants:
            system = MongoDBAnalytics(MongoDBEngine(tmp_path / variant.name, url=server_url),
                                      variant)
            system.engine.start()
            try:
                load(system, real_lines)
                assert system.count() == len(real_lines)
                assert system.storage().total > 0
            finally:
                system.engine.stop()
        assert client.someone_else.things.count_documents({"mine": True}) == 1
        assert set(client.docbench.list_collection_names()) <= {
            f"bluesky_{v.name}" for v in MongoDBAnalytics.variants} | {MARKER_COLLECTION}
    finally:
        client.close()


def test_bad_lines(server_url, tmp_path):
    system = MongoDBAnalytics(MongoDBEngine(tmp_path, url=server_url),
                              MongoDBAnalytics.variant_named("snappy"))
    system.engine.start()
    try:
        system.create()
        loader = system.loader()
        refused = set()
        for name, (line, _) in BAD_LINES.items():
            before = system.count()
            try:
                loader.load_batch([GOOD, line, GOOD])
            except BatchRejected:
                refused.add(name)
                assert system.count() == before
            else:
                assert system.count() == before + 3
        loader.close()
        assert refused == {name for name, (_, bad) in BAD_LINES.items() if bad}
    finally:
        system.engine.stop()


def test_server_refusal_keeps_nothing_of_the_batch(server_url, tmp_path):
    """Per-document refusals by the server (BulkWriteError, here a duplicate _id): the
    inserted rest of the batch is deleted, and the refusal names the line."""
    system = MongoDBAnalytics(MongoDBEngine(tmp_path, url=server_url),
                              MongoDBAnalytics.variant_named("snappy"))
    system.engine.start()
    try:
        system.create()
        loader = system.loader()
        with pytest.raises(BatchRejected, match="batch line 3") as refused:
            loader.load_batch([b'{"a": 1}', b'{"_id": "x"}', b'{"_id": "x"}', GOOD])
        assert set(refused.value.refused) == {2}
        loader.close()
        assert system.count() == 0
    finally:
        system.engine.stop()


# Explain documents of a real MongoDB 7 (shape: aggregate explain, classic and SBE plans).
COVERED = {"stages": [{"$cursor": {"queryPlanner": {"winningPlan": {
    "stage": "PROJECTION_COVERED", "inputStage": {"stage": "IXSCAN", "indexName": INDEX_NAME}}}}},
    {"$group": {}}]}
SBE_COVERED = {"explainVersion": "2", "queryPlanner": {"winningPlan": {"queryPlan": {
    "stage": "GROUP", "inputStage": {"stage": "PROJECTION_COVERED", "inputStage": {
        "stage": "IXSCAN", "indexName": INDEX_NAME}}}, "slotBasedPlan": {"stages": "..."}}}}
FETCHED = {"queryPlanner": {"winningPlan": {"queryPlan": {"stage": "GROUP", "inputStage": {
    "stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": INDEX_NAME}}}}}}
COLLSCAN = {"queryPlanner": {"winningPlan": {"stage": "COLLSCAN"}, "rejectedPlans": [
    {"stage": "IXSCAN", "indexName": INDEX_NAME}]}}


def test_check_plan(tmp_path):
    system = MongoDBAnalytics(MongoDBEngine(tmp_path, url="mongodb://127.0.0.1:9/"),
                              MongoDBAnalytics.variant_named("snappy"))
    assert system.check_plan(1, json.dumps(COLLSCAN)) is None
    assert system.check_plan(2, json.dumps(COVERED)) is None
    assert system.check_plan(3, json.dumps(SBE_COVERED)) is None
    assert "not covered" in system.check_plan(4, json.dumps(FETCHED))
    assert "does not scan the index" in system.check_plan(5, json.dumps(COLLSCAN))
    assert system.check_plan(2, None)
