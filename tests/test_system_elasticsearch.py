"""Elasticsearch adapter against a real node started by the test (installed by `docbench setup`).

The cases live in :class:`SearchEngineSuite`, shared with tests/test_system_opensearch.py (the
two systems share the package docbench/systems/searchengine/). One managed node per system is started
for the whole class, restarted once, and stopped at the end; URL mode runs against that node.

A system that is another version of one (elasticsearch9, opensearch2: an engine subclassing the
first's, the same adapters) gets the smoke part only, :class:`SearchEngineSmoke`: install, start,
the real events loaded with the five answers right, one bulk update (``_update_by_query`` where
the node has its modules). The broad tests (runner, workloads) leave those systems to it
(``Engine.smoke_tests_only``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from docbench.contracts.common import BatchRejected
from docbench.core.answers import check_answer
from docbench.dataset.oracle import compute_answers
from docbench.dataset.reader import dataset_files, iter_lines
from docbench.systems.searchengine.filebeat import js_number_string
from docbench.systems.searchengine.http import HttpClient
from docbench.systems.searchengine.node import pid_alive
from docbench.workloads.analytics.runner import answer_for
from docbench.workloads.load import load_files
from docbench.workloads.query_worker import QueryRun, TryResult

HEAP = "1g"  # small heap: faster start, and tests load a thousand documents


def _real_lines(files: list[Path]) -> list[bytes]:
    return [line for path in files for line in iter_lines(path) if line.strip()]


def _bad_lines(good: bytes) -> dict[str, bytes]:
    doc = json.loads(good)
    return {
        "invalid_json": b'{"did": "did:plc:x", "kind": "commit", ',
        "invalid_utf8": good.replace(b'"kind"', b'"k\xff\xfeind"', 1),
        "nul_escape": json.dumps({**doc, "did": "did:plc:a\u0000b"}).encode(),
        "integer_beyond_64_bits": good[:-1] + b', "n": 123456789012345678901234567890}',
        "deep_nesting_1000": b'{"did":"did:plc:deep","a":' + b"[" * 1000 + b"]" * 1000 + b"}",
    }


# What both engines refuse (asserted; see the README): invalid JSON, invalid UTF-8, nesting past
# 1000 levels (the JSON parser's limit). Accepted: a \u0000 escape (a valid JSON string), an
# integer beyond 64 bits (index.mapping.ignore_malformed: kept in _source, not indexed).
REFUSED = {"invalid_json", "invalid_utf8", "deep_nesting_1000"}
# YCSB documents of the smoke test's bulk update.
UPDATE_DOCS = 500


class SearchEngineSmoke:
    """Install, start, load the real events, the five answers, one bulk update; subclasses set
    ``system_name`` and whether the node serves ``_update_by_query`` (a class named Test* is
    collected)."""

    system_name: str
    update_by_query: bool

    @pytest.fixture(scope="class")
    @classmethod
    def engine_cls(cls):
        """`docbench setup NAME` first (idempotent: installs on a fresh machine)."""
        from docbench.setup import setup_systems
        from docbench.systems import engine_class

        if setup_systems([cls.system_name]) != 0:
            availability = engine_class(cls.system_name).availability()
            # Skipped (not failed) when the machine lacks what docbench cannot install: the
            # elasticsearch9 system needs a full JDK 21+, which Debian 12 does not package.
            if availability.machine_lacks:
                pytest.skip(availability.reason)
            pytest.fail(f"docbench setup {cls.system_name} failed: {availability.reason}")
        return engine_class(cls.system_name)

    @pytest.fixture(scope="class")
    @classmethod
    def cls_(cls, engine_cls):
        """The analytics adapter class."""
        from docbench.systems import adapter_class

        return adapter_class(cls.system_name, "analytics")

    @pytest.fixture(scope="class")
    @classmethod
    def files(cls, real_data_dir):
        return dataset_files(real_data_dir)

    @pytest.fixture(scope="class")
    @classmethod
    def answers(cls, files):
        return compute_answers(files)

    @pytest.fixture(scope="class")
    @classmethod
    def node(cls, cls_, engine_cls):
        # Not tmp_path: pytest deletes old base temp directories when other pytest sessions
        # start (concurrent runs would remove a live node's data), and its directories are
        # 0700, which the unprivileged server user cannot enter.
        monkey = pytest.MonkeyPatch()
        monkey.setenv("DOCBENCH_SEARCH_HEAP", HEAP)
        top = Path(tempfile.mkdtemp(prefix=f"docbench-test-{cls.system_name}-"))
        os.chmod(top, 0o755)
        workdir = top / "work"
        system = cls_(engine_cls(workdir), cls_.variant_named("default"))
        system.engine.start()
        pids = {system.engine.node.process.pid, system.engine.node.server_pid}
        try:
            yield system
        finally:
            system.engine.stop()
            system.engine.stop()  # safe twice
            monkey.undo()
            shutil.rmtree(top, ignore_errors=True)
            for pid in pids:
                assert not pid_alive(pid), f"server process {pid} left running"

    # ----- tests -------------------------------------------------------------------------
    def test_availability(self, cls_, engine_cls, tmp_path, monkeypatch):
        ok = engine_cls.availability()
        assert ok.ok, ok.reason
        assert ok.version and ok.version.startswith(f"{engine_cls.display_name} {engine_cls.version_prefix}")
        assert engine_cls.runs_by_default is False and engine_cls.embedded is False
        assert {v.role for v in cls_.variants} == {"default", "best", "alt", "representation"}
        monkeypatch.setenv("DOCBENCH_OPT", str(tmp_path))
        missing = engine_cls.availability()
        assert not missing.ok
        assert "not installed" in missing.reason
        assert missing.install_hint == f"docbench setup {engine_cls.name}"

    def test_load_count_queries(self, cls_, node, files, answers):
        node.create()
        report = load_files(node.loader(), files, cls_.load_batch_size)
        assert report.refused_count == 0, report.refused
        node.finish_load()
        lines = _real_lines(files)
        assert node.count() == len(lines)

        spec = node.session_spec()
        assert spec["server_pid"] and spec["local"]
        session = cls_.open_session(spec)
        try:
            assert session.engine_pids() == [node.engine.node.server_pid]
            for number, text in enumerate(node.queries(), start=1):
                outcome = session.execute(number, text)
                check = check_answer(number, outcome.rows, answers, time_precision_us=cls_.time_precision_us)
                assert check.status == "ok", (number, check.detail, outcome.rows[:5])
                assert outcome.engine_seconds is not None and outcome.engine_seconds >= 0
                if number == 2:
                    assert session.alternatives(number, text) == {"cardinality": True}
                    approximate = session.execute_alternative("cardinality", number, text).rows
                    assert check_answer(2, approximate, answers, approximate=True).acceptable
                plan = session.explain(number, text)
                assert node.check_plan(number, plan) is None, plan[:500]
        finally:
            session.close()

        size = node.storage()
        assert size.total > 0 and size.on_disk > 0
        assert size.data > 0 and size.index > 0 and size.data + size.index == size.total

    def test_bulk_update(self, node):
        """The updates workload's target on this node: ``_update_by_query`` (painless script,
        reindex's REST action) where the distribution has both modules, else the bulk partial
        update; every document gets the new field."""
        from docbench.contracts import ycsb
        from docbench.systems import adapter_class, adapter_variants

        target = adapter_class(self.system_name, "updates")(
            node.engine, adapter_variants(self.system_name, "updates")[0]
        )
        styles = target.bulk_update_styles()
        assert ("update_by_query" in styles) is self.update_by_query, styles
        target.create()
        target.load(ycsb.document_lines(UPDATE_DOCS))
        target.create_key_index()
        assert target.count() == UPDATE_DOCS
        style = styles[0]
        assert target.bulk_add_field(style, "field11", "smoke") == UPDATE_DOCS, style
        assert target.count_field("field11", "smoke") == UPDATE_DOCS
        assert target.count() == UPDATE_DOCS


class SearchEngineSuite(SearchEngineSmoke):
    """The smoke cases (run first: they load the node), then the rest."""

    def test_bad_lines_all_or_nothing(self, node, files):
        good = _real_lines(files)[0]
        before = node.count()
        loader = node.loader()
        refused = set()
        for name, line in _bad_lines(good).items():
            try:
                loader.load_batch([good, line, good])
            except BatchRejected as refusal:
                refused.add(name)
                assert str(refusal)
            expected = before if name in refused else before + 3
            assert node.count() == expected, name  # a refused batch leaves nothing behind
            before = node.count()
        loader.close()
        assert refused == REFUSED

    def test_restart_keeps_data(self, cls_, node):
        count = node.count()
        old_pid = node.engine.node.server_pid
        node.engine.restart()
        assert node.engine.is_alive()
        assert node.engine.node.server_pid != old_pid and not pid_alive(old_pid)
        assert node.count() == count
        session = cls_.open_session(node.session_spec())
        try:
            assert session.execute(1, node.queries()[0]).rows
        finally:
            session.close()

    def test_variants_in_url_mode(self, cls_, engine_cls, node, files, tmp_path):
        """The other variants load into the same node reached by URL: docbench touches only
        its own index there and cannot restart or stop that server."""
        client = HttpClient(node.engine.base_url)
        client.request("PUT", "/not_docbench", {"settings": {"number_of_shards": 1, "number_of_replicas": 0}})
        lines = _real_lines(files)
        assert engine_cls.availability(node.engine.base_url).ok
        sizes = {}
        for variant in cls_.variants[1:]:
            system = cls_(engine_cls(tmp_path / variant.name, url=node.engine.base_url), variant)
            assert system.engine.can_restart is False
            system.engine.start()
            system.create()
            loader = system.loader()
            loader.load_batch(lines)
            loader.close()
            system.finish_load()
            assert system.count() == len(lines)
            sizes[variant.name] = system.storage()
            assert sizes[variant.name].total > 0
            system.engine.restart()  # nothing happens
            system.engine.stop()  # nor here: the server is the user's
            assert node.engine.is_alive()
        assert client.request("HEAD", "/not_docbench", ok=(200,)) is None
        assert sizes["no_source"].total < node.storage().total
        client.request("DELETE", "/not_docbench")
        client.close()


class TestElasticsearch(SearchEngineSuite):
    system_name = "elasticsearch"
    update_by_query = False

    def test_jsonbench_variant(self, cls_, engine_cls, node, files, answers, tmp_path):
        """JSONBench's configuration on the class's node by URL: its index template, the
        documents as its Filebeat sent them (time_us a millisecond date, @timestamp first, a
        string subject renamed), every real event loaded, the five answers right within the
        millisecond the date keeps, and judged so by the runner (the variant's precision)."""
        system = cls_(
            engine_cls(tmp_path / "jsonbench", url=node.engine.base_url), cls_.variant_named("jsonbench")
        )
        system.engine.start()
        system.create()
        report = load_files(system.loader(), files, cls_.load_batch_size)
        assert report.refused_count == 0, report.refused
        system.finish_load()
        lines = _real_lines(files)
        assert system.count() == len(lines)
        client = system.engine.client()
        mappings = client.request("GET", f"/{system.index}/_mapping")[system.index]["mappings"]
        properties = mappings["properties"]
        assert properties["time_us"]["type"] == properties["@timestamp"]["type"] == "date"
        record = properties["commit"]["properties"]["record"]["properties"]
        assert record["createdAt"]["type"] == "date"  # date detection on, as JSONBench's
        assert record["subject"]["properties"]["value"]["type"] == "keyword"
        index = client.request("GET", f"/{system.index}/_settings")[system.index]["settings"]["index"]
        assert (index["codec"], index["refresh_interval"]) == ("best_compression", "30s")
        assert index["sort"]["field"] == ["kind", "commit.operation", "commit.collection", "did", "time_us"]

        follows = [json.loads(line) for line in lines if b'"app.bsky.graph.follow"' in line]
        raw = next(d for d in follows if isinstance(d["commit"].get("record", {}).get("subject"), str))
        hits = client.request(
            "POST", f"/{system.index}/_search", {"query": {"term": {"commit.rkey": raw["commit"]["rkey"]}}}
        )["hits"]["hits"]
        source = next(h["_source"] for h in hits if h["_source"]["did"] == raw["did"])
        assert next(iter(source)) == "@timestamp"
        assert source["time_us"] == js_number_string(raw["time_us"] / 1000)
        assert source["commit"]["record"]["subject"] == {"value": raw["commit"]["record"]["subject"]}

        assert system.time_precision_us == 1000 and cls_.time_precision_us == 1
        session = cls_.open_session(system.session_spec())
        try:
            for number, text in enumerate(system.queries(), start=1):
                rows = session.execute(number, text).rows
                check = check_answer(number, rows, answers, time_precision_us=1000)
                assert check.status in ("ok", "precision"), (number, check.detail)
                judged = answer_for(system, number, QueryRun(tries=[TryResult(rows=rows)]), answers)
                assert judged["status"] == check.status
        finally:
            session.close()


class TestElasticsearch9(SearchEngineSmoke):
    system_name = "elasticsearch9"
    update_by_query = False


# ----- the storage workload (moved from tests/test_storage_workload.py) -----------------------


def test_matrix_variants_declared() -> None:
    """The analytics' jsonbench variant is not a storage one; no_source says what it costs."""
    from docbench.systems import adapter_variants

    assert "jsonbench" in [v.name for v in adapter_variants("elasticsearch", "analytics")]
    no_source = adapter_variants("elasticsearch", "storage")[2]
    assert "cannot be retrieved" in no_source.description


def test_search_engine_cells() -> None:
    """test_storage_workload.search_engine_cells, and the _disk_usage API's fields: no
    _recovery_source left once pruned."""
    from test_storage_workload import search_engine_cells

    cell = search_engine_cells("elasticsearch")
    assert not cell["detail"]["largest_fields"].get("_recovery_source")


# ----- the shapes workload (moved from tests/test_shapes_workload.py) -------------------------

# Elasticsearch's index.mapping.depth.limit (20): a document whose objects nest deeper, the
# document itself counted as one level (_depth), is refused.
ES_DEPTH_LIMIT = 20


def test_a_refusal_past_a_mapping_limit_is_recorded_and_breaks_the_sweep(tmp_path: Path, server_url):
    """Elasticsearch refuses a document nested deeper than index.mapping.depth.limit (20):
    each is counted with the engine's reason, the answers are those of what it took, and the
    report puts the break point at that depth."""
    from test_shapes_workload import _by_system, _depth

    from docbench import results
    from docbench.dataset.shapes import Shape
    from docbench.systems import engine_class
    from docbench.workloads.shapes.report import sweeps
    from docbench.workloads.shapes.runner import ShapesRequest, run_shapes

    if not engine_class("elasticsearch").availability().ok:
        pytest.skip("no Elasticsearch here")
    request = ShapesRequest(
        knob="depth",
        values=[2, 24],
        base=Shape(preset="logs", per_doc=10, varying_share=0.0),
        docs=600,
        seed=2,
        system_names=["elasticsearch"],
        variants=["default"],
        results_dir=tmp_path,
        tries=1,
        urls={"elasticsearch": server_url("elasticsearch")},
        restart_for_cold=False,
        quiet=True,
    )
    run_shapes(request)
    shallow, deep = _by_system(tmp_path)["elasticsearch/default"]
    assert shallow["refused"]["count"] == 0
    documents = [json.loads(line) for line in Path(deep["shape"]["data_file"]).read_bytes().splitlines()]
    too_deep = sum(1 for document in documents if _depth(document) > ES_DEPTH_LIMIT)
    assert deep["refused"]["count"] == too_deep == deep["offered"] - deep["loaded"] > 0
    assert any("depth" in reason for reason in deep["refused"]["reasons"]), deep["refused"]
    assert deep["answers_basis"].startswith("recomputed without")
    assert Path(tmp_path / deep["refused"]["log"]).is_file()
    (systems,) = sweeps(results.load_results([tmp_path])).values()
    points = systems["elasticsearch/default"]
    assert not points[0].reasons
    assert any(reason.startswith("refuses") for reason in points[1].reasons)


# ----- the fidelity workload (from tests/test_fidelity.py: its run of every engine calls this) ---


def check_fidelity(documents: dict[str, dict], report: str) -> None:
    from test_fidelity import _outcomes

    source = _outcomes(documents["elasticsearch/default"])
    assert source["key_order"] == source["long_string"] == "identical"  # _source as sent
    assert source["duplicate_keys"] == source["empty_key"] == "refused"
    # Alone, each document is its own: exponent notation and a dotted key are taken, and
    # so is an object at v. Together, an earlier document's path decides the mapping.
    assert source["exponents"] == source["dotted_key"] == source["mixed_type_object"] == "identical"
    together = {i["document"]: i for i in documents["elasticsearch/default"]["interactions"]}
    assert together["mixed_type_object"]["together"] == "refused"
    assert together["mixed_type_object"]["after"] == "mixed_type_integer"
    assert together["mixed_type_object"]["pairwise"] and together["mixed_type_object"]["paths"] == ["$.v"]
    assert together["exponents"]["after"] == "whitespace" and "$.b" in together["exponents"]["paths"]
    assert "object mapping for [b]" in together["exponents"]["notes"][0]
    assert _outcomes(documents["elasticsearch/paths"])["mixed_type_object"] == "identical"
    assert documents["elasticsearch/no_source"]["lossless"] is None
    assert "unreadable" in set(_outcomes(documents["elasticsearch/no_source"]).values())
    # The report: the engine's words as they are ("[b]" is not markup)
    assert "interactions" in report and "object mapping for [b]" in report


# ----- the updates workload (from tests/test_updates_workload.py: its run reads these) --------

# One HTTP request per operation to a JVM on 2 cores: 200 keep them at a few seconds.
UPDATES_OPS = 200
UPDATES_STYLES = {"bulk_partial"}  # the bulk styles it must run (more may: the node is asked)
