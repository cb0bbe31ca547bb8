"""Spark against real Spark 4 servers (no mocks): the shared cases (tests/analytics_suite.py) in
every variant, on the session's Spark Connect server reached by URL, and Spark's own: the
lines it refuses, found in one pass and named; docbench's own server restarted (a cold query
re-declares the table over its files); a managed 2-worker standalone cluster."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pytest
from analytics_suite import (
    BACKSLASHES_TEXT,
    GOOD_LINE,
    AnalyticsAdapterSuite,
    check_oracle_answer,
    gone,
    listening_addresses,
    open_engine,
    query_session,
    real_files_of,
    reload,
    same_documents,
    work_dir,
)
from hard_lines import NOT_JSON, ODD_BUT_VALID, pick
from pyspark.sql.connect.client.reattach import ExecutePlanResponseReattachableIterator

from docbench.contracts.cluster import NODES_ENV
from docbench.contracts.common import BatchRejected
from docbench.dataset.oracle.compute import compute_answers
from docbench.systems.spark.analytics import SparkAnalytics
from docbench.systems.spark.engine import TABLE, SparkEngine
from docbench.systems.spark.server import child_pids
from docbench.workloads.load import load_files

# Spark's parse_json is strict JSON (no NaN, no trailing comma, no unquoted key), refuses a
# key twice in one object and nesting beyond 1000 levels; docbench refuses what is not UTF-8
# (Spark would put U+FFFD in its place), what is not an object, and a line with anything after
# its value (parse_json drops it silently).
REFUSED = pick(
    *NOT_JSON,
    "byte_order_mark",
    "utf8_encoded_surrogate",
    "not_an_object",
    "json_string",
    "nan",
    "trailing_comma",
    "json5_unquoted_key",
    "duplicate_keys",
    "deep_1000",
)
# deep_999 is 1000 levels: Spark's limit, taken (docbench's check wraps the line in an array,
# a level more: such a line is asked again alone).
ACCEPTED = pick(*ODD_BUT_VALID, "lone_surrogate", "deep_999", "time_us_negative")


def run_queries(system: SparkAnalytics, expected: dict) -> None:
    with query_session(system) as session:
        for number, text in enumerate(system.queries(), start=1):
            check_oracle_answer(system, number, session.execute(number, text), expected)


class TestSpark(AnalyticsAdapterSuite):
    system_name = "spark"
    engine_type = SparkEngine
    adapter_type = SparkAnalytics
    variant_roles = [
        ("variant", "default"),
        ("variant_unshredded", "alt"),
        ("struct", "representation"),
        ("json_string", "alt"),
    ]
    runs_by_default = False
    has_setup_script = True
    every_variant = True
    # struct reads the documents back without their NULL fields, and refuses what does not fit
    # its schema: its own test below.
    suite_variants = ["variant", "variant_unshredded", "json_string"]

    def check_version(self, version):
        assert version.startswith("Spark 4.1.")

    def check_registration(self):
        assert SparkEngine.runs_as_cluster and SparkEngine.url_example.startswith("sc://")

    def check_stored(self, system, lines):
        same_documents(system.read_back(), lines)

    def check_outcome(self, number, outcome):
        assert outcome.engine_seconds is None  # Spark Connect reports no time of its own

    def check_explain(self, system, number, plan):
        assert plan and "docbench.documents" in plan, plan[:500]

    def check_storage(self, system, size):
        # by URL: Spark's own statistics of the table's files
        assert size.index == 0 and size.total == size.data
        assert " bytes" in size.detail["statistics"]

    # ----- Spark's own -----------------------------------------------------------------------
    def test_refusals_are_found_in_one_pass_and_named(self, loaded, real_files: list[Path], tmp_path: Path):
        """The refused lines among the accepted ones, in one file through the generic driver:
        exactly the refused lines named (no batch sent twice), with Spark's reason or
        docbench's; the others stored, and the answers still the oracle's."""
        hard = tmp_path / "hard.jsonl"
        lines = [*ACCEPTED.values(), *REFUSED.values()]
        hard.write_bytes(b"\n".join(lines) + b"\n")
        before = loaded.count()
        try:
            report = load_files(loaded.loader(), [hard], 100)
            assert report.retried_batches == 0
            reasons = {r.line: r.reason for r in report.refused}
            assert sorted(reasons) == list(range(len(ACCEPTED) + 1, len(lines) + 1)), reasons
            by_name = dict(zip(REFUSED, [reasons[n] for n in sorted(reasons)], strict=True))
            assert "MALFORMED_RECORD_IN_PARSING" in by_name["invalid_json"]
            assert "not UTF-8" in by_name["invalid_utf8"]
            assert "more than one JSON value" in by_name["trailing_garbage"]
            assert by_name["not_an_object"].startswith("not a JSON object")
            assert loaded.count() == before + len(ACCEPTED)
            text = "doc" if loaded.variant.name == "json_string" else "to_json(doc)"
            rows = (
                loaded.engine.session()
                .sql(f"SELECT {text} FROM {TABLE} WHERE get_json_object({text}, '$.did') = 'did:plc:bs'")
                .collect()
            )
            assert json.loads(rows[0][0])["text"] == BACKSLASHES_TEXT
            accepted = tmp_path / "accepted.jsonl"
            accepted.write_bytes(b"\n".join(ACCEPTED.values()) + b"\n")
            run_queries(loaded, compute_answers([*real_files, accepted]))
        finally:
            reload(loaded, real_files)

    def test_a_batch_is_all_or_nothing(self, loaded):
        loader = loaded.loader()
        before = loaded.count()
        with pytest.raises(BatchRejected, match="line 2 of the batch: not a JSON object"):
            loader.load_batch([GOOD_LINE, REFUSED["not_an_object"], GOOD_LINE])
        assert loaded.count() == before
        loader.close()

    def test_cancel(self, loaded):
        spec = loaded.session_spec()
        session = SparkAnalytics.open_session(spec)
        try:
            timer = threading.Timer(1.0, session.cancel)
            timer.start()
            started = time.monotonic()
            with pytest.raises(Exception, match="(?i)cancel|interrupt"):
                # 10^10 rows: tens of seconds if the interrupt were lost (10^12 kept the shared
                # server busy for the rest of a CI run once, and every later test's probe waited)
                session.execute(0, "SELECT sum(id % 7) FROM range(10000000000)")
            assert time.monotonic() - started < 20
            # No reattachable execution: its shared release pool, shut down by a session's
            # garbage collection inside a submit, deadlocked a test run (engine.open_session).
            assert session.execute(0, "SELECT id FROM range(3)").rows == [(0,), (1,), (2,)]
            assert ExecutePlanResponseReattachableIterator._release_thread_pool_instance is None
        finally:
            session.close()


def test_struct_infers_columns_and_refuses_what_does_not_fit(server_url, real_data_dir: Path, tmp_path: Path):
    """The variant struct: the columns spark.read.json infers from the first batch (the real
    events); a later document whose values do not fit them (time_us a string, not a BIGINT)
    is refused with the reason, a key they lack is dropped (the document taken), what
    load.sql refuses is refused as in the other variants; Q1-Q5 are the oracle's over what
    was taken, and no document column is left to the portable queries."""
    from docbench.contracts.portable import NotExpressible
    from docbench.systems.spark.loader import MISFIT
    from docbench.systems.spark.portable import SparkPortable

    files = real_files_of(real_data_dir)
    base = work_dir("spark-struct")
    engine = open_engine("spark", base / "work", server_url("spark"))
    system = SparkAnalytics(engine, SparkAnalytics.variant_named("struct"))
    extra = b'{"did":"did:plc:extra","time_us":1700000000000000,"kind":"commit","extra_key":[1,2]}'
    misfit = b'{"did":"did:plc:misfit","time_us":"soon","kind":"commit"}'
    later = tmp_path / "later.jsonl"
    later.write_bytes(b"\n".join([GOOD_LINE, misfit, extra, REFUSED["not_an_object"]]) + b"\n")
    try:
        engine.start()
        system.create()
        assert load_files(system.loader(), files, SparkAnalytics.load_batch_size).refused_count == 0
        columns = {row[0] for row in engine.session().sql(f"DESCRIBE TABLE {TABLE}").collect()}
        assert {"did", "kind", "time_us", "commit"} <= columns and "doc" not in columns
        report = load_files(system.loader(), [later], 100)
        reasons = {r.line: r.reason for r in report.refused}
        assert sorted(reasons) == [2, 4] and reasons[2] == MISFIT, reasons
        assert reasons[4].startswith("not a JSON object")
        taken = tmp_path / "taken.jsonl"
        taken.write_bytes(b"\n".join([GOOD_LINE, extra]) + b"\n")
        run_queries(system, compute_answers([*files, taken]))
        stored = [json.loads(text) for text in system.read_back()]
        extra_stored = next(doc for doc in stored if doc.get("did") == "did:plc:extra")
        assert extra_stored == {"did": "did:plc:extra", "time_us": 1700000000000000, "kind": "commit"}
        assert system.storage().total > 0
        with pytest.raises(NotExpressible, match="inferred"):
            SparkPortable(engine, system.variant).check_representation()
        # A first batch whose schema the client cannot receive (about 30 levels: protobuf's
        # recursion limit): the deeper lines refused, the schema inferred from the others.
        system.create()
        deep = b'{"did":"did:plc:deep","d":' + b'{"a":' * 40 + b"1" + b"}" * 40 + b"}"
        first = tmp_path / "first.jsonl"
        first.write_bytes(b"\n".join([GOOD_LINE, deep]) + b"\n")
        report = load_files(system.loader(), [first], 100)
        assert [(r.line, r.reason.split(":")[0]) for r in report.refused] == [(2, "nests 41 levels")]
        assert system.count() == 1
    finally:
        system.release()
        engine.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def installed():
    from docbench.setup import setup_systems

    if not SparkEngine.availability().ok:
        assert setup_systems(["spark"]) == 0
    assert SparkEngine.availability().ok


def test_two_worker_cluster(installed, real_small: Path, monkeypatch):
    """A managed standalone cluster (--nodes 2): a master, two workers (each with an executor
    of the application) and the Connect server, all on 127.0.0.1; the table's files in its
    warehouse (storage from them); Q1-Q5 as the oracle's after a restart of the application
    (a cold query: the catalog is in memory, the session declares the table over the files);
    nothing left running after stop. (The session's shared server is the local mode's.)"""
    monkeypatch.setenv(NODES_ENV, "2")
    files = [real_small / "file_0001.json"]
    base = work_dir("spark-cluster")
    engine = SparkEngine(base / "work")
    private = {"127.0.0.1", "ipv6:0000000000000000FFFF00000100007F"}
    try:
        engine.start()
        assert engine.cluster is not None and len(engine.cluster.workers) == 2
        assert engine.cluster_record()["nodes"] == 2
        system = SparkAnalytics(engine, SparkAnalytics.variants[0])
        system.create()
        assert load_files(system.loader(), files, 100_000).refused_count == 0
        size = system.storage()
        assert size.total and size.detail["files"] >= 1 and size.on_disk >= size.total
        # the Connect server, two workers and an executor under each
        pids = engine.server_pids()
        assert pids[0] == engine.cluster.connect.pid
        for worker in engine.cluster.workers:
            assert worker.pid in pids and child_pids(worker.pid), (worker.pid, pids)
        servers = [engine.cluster.connect, engine.cluster.master, *engine.cluster.workers]
        assert all(listening_addresses(server.port) <= private for server in servers)
        engine.restart()
        assert engine.server_pids()[0] != pids[0]
        run_queries(system, compute_answers(files))
        pids = engine.server_pids()
    finally:
        engine.stop()
        shutil.rmtree(base, ignore_errors=True)
    assert all(gone(pid) for pid in pids)


def test_nesting_depth():
    from docbench.systems.spark.loader import nesting_depth

    assert nesting_depth(b'{"a": [1, {"b": "}]]{{"}], "c": "\\"["}') == 3
    assert nesting_depth(b"{}") == 1 and nesting_depth(b"1") == 0


def test_a_server_that_is_gone_fails_in_seconds(tmp_path: Path, monkeypatch):
    """The Connect client's own retry policy waits 10 minutes for a server that is gone; a
    session of docbench's gives up within seconds (engine.RETRY_TRIES), with the reason. The
    liveness probe answers by its deadline (engine.PROBE_SECONDS) even while the client
    still retries."""
    from docbench.servers.managed import free_port
    from docbench.systems.spark import engine as spark_engine

    url = f"sc://127.0.0.1:{free_port()}"
    session = spark_engine.open_session(url)
    started = time.monotonic()
    with pytest.raises(Exception, match="(?i)unavailable|connect"):
        session.sql("SELECT 1").collect()
    assert time.monotonic() - started < 30
    monkeypatch.setattr(spark_engine, "PROBE_SECONDS", 1.0)
    started = time.monotonic()
    assert not SparkEngine(tmp_path / "work", url).is_alive()
    assert time.monotonic() - started < 5
