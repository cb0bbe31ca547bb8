"""PostgreSQL adapter against real servers (no mocks): the shared cases (tests/analytics_suite.py)
and PostgreSQL's own.

The loaded cases run on the session's PostgreSQL by URL (variant pglz); what only a managed
cluster shows (storage with its data directory, settings, a killed postmaster, stop, URL mode
with the cluster as a user's server: variant lz4) runs on the class's own managed cluster.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from analytics_suite import (
    AnalyticsAdapterSuite,
    SQLServerCases,
    SQLTableCases,
    gone,
    non_empty_lines,
    reload,
    same_documents,
    work_dir,
)
from conftest import fresh_home
from test_native_refusals import _load
from test_runner import TRUSTED, run

from docbench.contracts.common import BatchRejected
from docbench.systems import adapter_class, engine_class, open_adapter, open_engine
from docbench.systems.postgresql import server as pgserver
from docbench.systems.postgresql.analytics import PostgreSQLAnalytics, copy_buffer
from docbench.systems.postgresql.engine import PostgreSQLEngine
from docbench.workloads.load import load_files

pytestmark = pytest.mark.skipif(
    not PostgreSQLEngine.availability().ok, reason="PostgreSQL server binaries not installed"
)

# Lines PostgreSQL refuses (-> BatchRejected) and lines it stores, by name.
REFUSED = {
    "invalid_json": b'{"did": "did:plc:x", "kind": ',
    "invalid_utf8": b'{"did": "did:plc:\xff\xfe", "kind": "commit"}',
    "nul_escape": b'{"did": "did:plc:x", "text": "a\\u0000b"}',
    "lone_surrogate": b'{"did": "did:plc:x", "text": "\\ud83d"}',
    "overflowing_number": b'{"did": "did:plc:x", "n": 1e1000000}',
    # COPY's end-of-data marker: sent quoted, it is data (invalid JSON), not the end of the batch
    "end_of_copy_marker": b"\\.",
}
ACCEPTED = {
    "int_beyond_64_bits": b'{"did": "did:plc:big", "kind": "commit", "n": 123456789012345678901234567890}',
    "deep_1000": b'{"did": "did:plc:deep", "a": ' + b"[" * 1000 + b"]" * 1000 + b"}",
    "time_us_fraction": b'{"did": "did:plc:frac", "kind": "commit", "time_us": 1.5}',
    "time_us_beyond_64_bits": b'{"did": "did:plc:huge", "time_us": 123456789012345678901234567890}',
    "raw_carriage_return": b'{"did": "did:plc:cr",\r"kind": "identity"}',
    "backslashes": b'{"did": "did:plc:bs", "text": "a\\\\b \\"q\\" \\n \\t \\u00e9 \\ud83d\\ude00"}',
}


class TestPostgreSQL(SQLServerCases, SQLTableCases, AnalyticsAdapterSuite):
    system_name = "postgresql"
    engine_type = PostgreSQLEngine
    adapter_type = PostgreSQLAnalytics
    variant_roles = [
        ("pglz", "default"),
        ("lz4", "best"),
        ("json", "representation"),
        ("jsonb_columns", "representation"),
        ("jsonbench", "alt"),
    ]
    has_setup_script = True
    refused = REFUSED
    accepted = ACCEPTED
    slow_query = "SELECT pg_sleep(10)"
    cancel_error = psycopg.errors.QueryCanceled
    statement_timeout = True
    server_attribute = "cluster"
    url_variant = "lz4"
    server_processes = 2  # the postmaster and its children
    plan_session_settings = {"enable_seqscan": "off"}
    full_scan = "Seq Scan"

    # ----- the shared cases' hooks --------------------------------------------------------
    def check_version(self, version):
        assert "PostgreSQL" in version

    def check_stored(self, system, lines):
        same_documents(
            [
                row[0]
                for row in system.engine.admin_connection()
                .execute(f"SELECT data::text FROM {system.table}")
                .fetchall()
            ],
            lines,
        )

    def check_explain(self, system, number, plan):
        assert json.loads(plan)[0]["Plan"]["Node Type"]

    def check_session(self, system, session):
        assert session.stats_available  # pg_stat_statements is preloaded in managed clusters
        pids = session.engine_pids()
        assert pids and Path(f"/proc/{pids[0]}/cmdline").read_bytes().startswith(b"postgres")

    def check_storage(self, system, size):
        assert size.index
        assert size.total >= size.data + size.index
        assert size.on_disk and size.on_disk > size.total
        assert size.detail["heap_bytes"] > 0 and size.detail["compression"] == "pglz"

    def check_refusal(self, alone, among):
        assert "SQLSTATE" in alone

    def stored_text(self, system, did):
        return (
            system.engine.admin_connection()
            .execute(f"SELECT data ->> 'text' FROM {system.table} WHERE data ->> 'did' = %s", (did,))
            .fetchone()[0]
        )

    def check_hard_documents(self, system):
        # An odd time_us is "no time" (NULL), never an error (the index expression must not fail).
        times = dict(
            system.engine.admin_connection()
            .execute(
                f"SELECT data ->> 'did', docbench_time_us(data) FROM {system.table} "
                "WHERE data ->> 'did' IN ('did:plc:frac', 'did:plc:huge')"
            )
            .fetchall()
        )
        assert times == {"did:plc:frac": None, "did:plc:huge": None}

    def native_load_files(self, real_files, tmp_path):
        plain = real_files[0]
        packed = tmp_path / (plain.name + ".gz")
        packed.write_bytes(gzip.compress(plain.read_bytes()))
        refused = tmp_path / "refused.jsonl"  # by hand, one bad document loses its whole file
        refused.write_bytes(b'{"did": "did:plc:ok"}\n' + self.refused["nul_escape"] + b"\n")
        return [[plain, refused, packed]], 2 * len(non_empty_lines([plain]))

    def no_statement_timeout(self, session):
        session.conn.execute("SET statement_timeout = 0")

    def explain_without_index(self, system, session, query):
        session.conn.execute(
            "SET enable_seqscan = on; SET enable_indexscan = off; SET enable_bitmapscan = off"
        )
        return session.explain(2, query)

    def check_server_settings(self, system, cluster):
        conn = system.engine.admin_connection()
        assert conn.execute("SHOW listen_addresses").fetchone()[0] == "127.0.0.1"
        assert conn.execute("SHOW data_directory").fetchone()[0] == str(cluster.data_dir)
        assert "pg_stat_statements" in conn.execute("SHOW shared_preload_libraries").fetchone()[0]
        expected = pgserver.tuned_settings()
        for name in ("shared_buffers", "work_mem", "maintenance_work_mem", "max_wal_size"):
            assert conn.execute(
                "SELECT pg_size_bytes(current_setting(%s)) = pg_size_bytes(%s)", (name, expected[name])
            ).fetchone()[0], name

    def server_socket(self, cluster):
        return cluster.run_dir / f".s.PGSQL.{cluster.port}"

    def server_pid_file(self, cluster):
        return cluster.data_dir / "postmaster.pid"

    def user_database(self, system):
        with system.engine.connect("postgres") as conn:
            conn.execute("CREATE DATABASE userdata")
        with system.engine.connect("userdata") as conn:
            conn.execute("CREATE TABLE bluesky_lz4 (keep text)")
            conn.execute("INSERT INTO bluesky_lz4 VALUES ('mine')")
        return system.engine.served_url().rsplit("/", 1)[0] + "/userdata"

    def check_url_system(self, system, size, cluster):
        assert size.detail["compression"] == "lz4"
        assert system.session_spec()["conninfo"]["dbname"] == "docbench"

    def check_user_database(self, system):
        with system.engine.connect("postgres") as conn:
            databases = {r[0] for r in conn.execute("SELECT datname FROM pg_database")}
        assert databases == {"postgres", "template0", "template1", "userdata", "docbench"}
        with system.engine.connect("userdata") as conn:
            assert conn.execute("SELECT keep FROM bluesky_lz4").fetchall() == [("mine",)]
        with system.engine.connect() as conn:
            # the documents over the TOAST threshold are compressed with the variant's codec
            methods = {
                r[0] for r in conn.execute("SELECT DISTINCT pg_column_compression(data) FROM bluesky_lz4")
            }
            assert "lz4" in methods and "pglz" not in methods

    # ----- PostgreSQL's own ---------------------------------------------------------------
    def test_copy_buffer_quotes_every_line(self):
        assert copy_buffer([b"a", b"b\x01c"]) == b"\x01a\x01\n\x01b\x01\x01c\x01\n"

    @pytest.mark.skipif(os.geteuid() != 0, reason="the server user differs from ours only as root")
    def test_work_dir_behind_a_directory_the_server_user_cannot_enter(
        self, tmp_path: Path, real_files: list[Path]
    ):
        closed = tmp_path / "closed"
        closed.mkdir(mode=0o700)  # like /root, or pytest's own temp root
        system = PostgreSQLAnalytics(
            PostgreSQLEngine(closed / "home" / "work"), PostgreSQLAnalytics.variant_named("pglz")
        )
        try:
            system.engine.start()
            cluster = system.engine.cluster
            assert not cluster.reachable and cluster.blocked_by
            assert os.stat(closed).st_mode & 0o777 == 0o700  # nothing outside the work dir changed
            # `ps` still shows which cluster this is
            cmdline = Path(f"/proc/{cluster.pid}/cmdline").read_bytes().replace(b"\0", b" ")
            assert str(cluster.data_dir).encode() in cmdline
            system.create()
            load_files(system.loader(), real_files, PostgreSQLAnalytics.load_batch_size)
            system.finish_load()
            assert system.count() == len(non_empty_lines(real_files))
            assert (cluster.run_dir / f".s.PGSQL.{cluster.port}").is_socket()
            system.engine.restart()
            session = PostgreSQLAnalytics.open_session(system.session_spec())
            try:
                assert session.execute(1, system.queries()[0]).rows
            finally:
                session.close()
            postmaster, children = cluster.pid, cluster.children()
        finally:
            system.engine.stop()
        for pid in [postmaster, *children]:
            assert gone(pid), pid


# time_us values JSONBench's index expression TO_TIMESTAMP((data ->> 'time_us')::BIGINT /
# 1000000.0) cannot evaluate (docbench's own variants store these documents, time "none"),
# with PostgreSQL's SQLSTATE for each.
TIME_US_REFUSED = {
    b'{"did": "did:plc:past", "kind": "commit", "time_us": -9000000000000000000}': "22008",
    b'{"did": "did:plc:frac", "kind": "commit", "time_us": 1.5}': "22P02",
    b'{"did": "did:plc:huge", "kind": "commit", "time_us": 123456789012345678901234567890}': "22003",
}


class TestPostgreSQLJsonBench(AnalyticsAdapterSuite):
    """The variant ``jsonbench`` (JSONBench's DDL: lz4, its index created before the load, its
    TO_TIMESTAMP time column, VACUUM ANALYZE after the load) on the session's server: every real
    event loaded, the five answers, JSONBench's size measurement, and its own refusals."""

    system_name = "postgresql"
    engine_type = PostgreSQLEngine
    adapter_type = PostgreSQLAnalytics
    variant_roles = TestPostgreSQL.variant_roles
    has_setup_script = True

    @pytest.fixture(scope="class")
    @classmethod
    def variant(cls) -> str:
        return "jsonbench"

    def check_explain(self, system, number, plan):
        assert json.loads(plan)[0]["Plan"]["Node Type"]

    def check_storage(self, system, size):
        assert size.detail["compression"] == "lz4"
        # JSONBench's index_size.sh (the index's main fork) is what index_bytes says
        assert size.index == size.detail["index_relation_bytes"] > 0
        assert size.total == size.data + size.index  # JSONBench's total_size.sh = data + index

    def test_the_index_is_created_before_the_load(self, loaded, real_files):
        conn = loaded.engine.admin_connection()

        def index_bytes() -> int:
            return int(conn.execute("SELECT pg_relation_size(%s::regclass)", (loaded.index,)).fetchone()[0])

        try:
            loaded.create()
            assert loaded.count() == 0
            indexes = conn.execute(
                "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index "
                "WHERE indrelid = %s::regclass",
                (loaded.table,),
            ).fetchall()
            assert [name for name, _ in indexes] == [loaded.index]
            assert (
                "to_timestamp((((((data ->> 'time_us'::text))::bigint)::numeric"
                " / 1000000.0))::double precision)" in indexes[0][1]
            )
            empty = index_bytes()
            load_files(loaded.loader(), real_files, PostgreSQLAnalytics.load_batch_size)
            assert index_bytes() > empty  # COPY maintained it row by row
            loaded.finish_steps.clear()
            loaded.finish_load()
            assert [step["step"] for step in loaded.finish_steps] == [f"VACUUM ANALYZE {loaded.table}"]
        finally:
            reload(loaded, real_files)

    def test_the_planner_uses_the_index(self, loaded):
        spec = {**loaded.session_spec(), "session_settings": {"enable_seqscan": "off"}}
        session = PostgreSQLAnalytics.open_session(spec)
        try:
            for number, query in enumerate(loaded.queries()[1:], start=2):
                assert loaded.check_plan(number, session.explain(number, query)) is None
        finally:
            session.close()

    @pytest.mark.parametrize("name", ["postgresql", "postgresql18"])
    def test_a_time_us_to_timestamp_refuses_is_a_refusal(self, name, server_url, real_files, tmp_path):
        """JSONBench's behaviour: the insert fails in the index expression; the load driver
        records the document as refused (file, line, PostgreSQL's reason) and keeps the rest."""
        good = non_empty_lines(real_files)[:50]
        lines = [*good[:10], *TIME_US_REFUSED, *good[10:]]
        path = tmp_path / "time_us.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        base = work_dir(f"{name}-jsonbench")
        engine = open_engine(name, base / "work", server_url(name))
        adapter = adapter_class(name, "analytics")
        system = adapter(engine, adapter.variant_named("jsonbench"))
        try:
            engine.start()
            system.create()
            report = load_files(system.loader(), [path], PostgreSQLAnalytics.load_batch_size)
            assert report.refused_lines == {path.name: {11, 12, 13}}
            reasons = [refusal.reason for refusal in report.refused]
            assert [reason.rsplit("[SQLSTATE ", 1)[1].rstrip("]") for reason in reasons] == list(
                TIME_US_REFUSED.values()
            )
            assert "timestamp out of range" in reasons[0]
            assert system.count() == len(good)
            with pytest.raises(BatchRejected, match="SQLSTATE 22008"):
                system.loader().load_batch([good[0], next(iter(TIME_US_REFUSED))])
        finally:
            system.release()
            engine.stop()
            shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def runner_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh DOCBENCH_HOME for a run's own server (as tests/test_runner.py's tests have)."""
    with fresh_home(monkeypatch) as home:
        yield home


@pytest.mark.skipif(
    not engine_class("postgresql").availability().ok,
    reason="PostgreSQL server binaries are installed by `make test`",
)
def test_refused_documents_are_data_quality_not_wrong_answers(
    real_data_dir: Path, tmp_path: Path, runner_home: Path
) -> None:
    """PostgreSQL refuses a \\u0000 escape: it is counted as refused, and the answers are judged
    against the oracle re-run without it (so the queries are still found correct). (From
    tests/test_runner.py: `docbench run` on docbench's own server.)"""
    lines = (real_data_dir / "jsonbench_file_0001_first1000.jsonl").read_bytes().splitlines()[:300]
    post = next(line for line in lines if b'"app.bsky.feed.post","rkey"' in line and b'"text":"' in line)
    lines.append(post.replace(b'"text":"', b'"text":"nul \\u0000 ', 1))
    data = tmp_path / "nul"
    data.mkdir()
    (data / "file_0001.json").write_bytes(b"\n".join(lines) + b"\n")
    [document] = run(data, tmp_path / "results", ["postgresql"], variants=["pglz"])
    assert document["load_errors"]["count"] == 1
    assert document["load_errors"]["first"][0]["line"] == len(lines)
    assert "\\u0000" in document["load_errors"]["first"][0]["reason"]
    assert document["num_loaded_documents"] == len(lines) - 1
    assert "refused" in document["answers_basis"]
    log = (tmp_path / "results" / document["load_errors"]["log"]).read_text().splitlines()
    assert log == [f"file_0001.json\t{len(lines)}\t{document['load_errors']['first'][0]['reason']}"]
    assert all(a["status"] in TRUSTED for a in document["answers"]), document["answers"]


# From test_native_refusals.py: PostgreSQL's own refusals through the generic load driver.
@pytest.mark.parametrize("name", ["postgresql", "postgresql18"])
def test_postgresql_names_each_refused_line_and_bisects_a_block_of_garbage(
    name: str, tmp_path: Path, server_url
) -> None:
    """Refused lines at both ends of a COPY block, two in a row, a quote byte that makes a
    block go quoted; and a file mostly refused. PostgreSQL 15 hands it to bisection after
    MAX_REFUSED_PER_BLOCK refusals in one block (each one re-sends the block); 18's COPY ...
    ON_ERROR names them all in one pass."""
    good = b'{"did":"did:plc:a","time_us":1,"kind":"commit"}'
    bad = b'{"did":"did:plc:b","time_us":2,"kind":"commit","t":"\\ud800"}'
    odd = b'{"did":"did:plc:c","time_us":3,"kind":"commit","t":"\x01\x02"}'  # raw: invalid JSON
    lines = [good] * 40
    for i in (0, 1, 17, 38, 39):
        lines[i] = bad
    lines[20] = odd
    data = tmp_path / "file_0001.json"
    data.write_bytes(b"\n".join(lines))  # no newline at the end
    garbage = tmp_path / "file_0002.json"
    garbage.write_bytes(b"\n".join(bad if i % 6 else good for i in range(300)) + b"\n")
    if not engine_class(name).availability().ok:
        pytest.skip(f"{name}: {engine_class(name).availability().reason}")
    system = open_adapter(name, "analytics", tmp_path / "db", url=server_url(name))
    system.engine.start()
    try:
        report = _load(system, [data, garbage], batches_only=False)
        assert report.refused_lines == {
            "file_0001.json": {1, 2, 18, 21, 39, 40},
            "file_0002.json": {i + 1 for i in range(300) if i % 6},
        }
        assert system.count() == 34 + 50
        # the garbage file: bisected (15), named in one pass (18)
        assert report.whole_file_refusals == (1 if name == "postgresql" else 0)
        reasons = {r.line: r.reason for r in report.refused if r.file == "file_0001.json"}
        assert "surrogate" in reasons[1] and "COPY" not in reasons[1]
    finally:
        system.release()
        system.engine.stop()


# ----- the storage workload (moved from tests/test_storage_workload.py) -----------------------


def test_postgresql_toast_matrix(tmp_path: Path) -> None:
    from test_storage_workload import ROWS, _available, _cells, _run

    if not _available("postgresql"):
        pytest.skip("PostgreSQL is not available")
    variants = ["jsonb-plain-pglz", "jsonb-extended-pglz", "jsonb-external-pglz"]
    results = _run(tmp_path, ["postgresql"], variants, ["random", "repetitive"])

    plain = _cells(results, "postgresql", "jsonb-plain-pglz")
    assert plain[(1000, "random")]["failure"] is None
    assert plain[(1000, "random")]["rows_loaded"] == ROWS
    refused = plain[(9000, "random")]
    assert refused["failure"]["kind"] == "refused"
    assert "row is too big" in refused["failure"]["message"]
    assert refused["rows_loaded"] == 0

    extended = _cells(results, "postgresql", "jsonb-extended-pglz")
    random_cell, repetitive_cell = extended[(9000, "random")], extended[(9000, "repetitive")]
    assert random_cell["failure"] is None and random_cell["rows_loaded"] == ROWS
    # Random printable data does not shrink under pglz; one repeated character does.
    assert random_cell["bytes_per_input_byte"] > 0.95
    assert repetitive_cell["bytes_per_input_byte"] < 0.2
    assert repetitive_cell["detail"]["compressed_values"] == ROWS

    external = _cells(results, "postgresql", "jsonb-external-pglz")[(9000, "random")]
    detail = external["detail"]
    # The total includes the TOAST relation, where the values went, and the index.
    assert detail["toast"] > ROWS * 9000
    assert external["total_size"] == detail["table"] + detail["toast"] + detail["index"]
    assert external["total_size"] >= detail["toast"] + detail["table"]
    # Cross-check: the relations' files in the data directory.
    assert external["on_disk"] == pytest.approx(external["total_size"], rel=0.1)


# ----- the fidelity workload (from tests/test_fidelity.py: its run of every engine calls this) ---


def check_fidelity(documents: dict[str, dict], report: str) -> None:
    from test_fidelity import only

    only(documents, "postgresql/json", "identical", {"lone_surrogate": "refused", "nul_escape": "refused"})
    jsonb = {row["name"]: row for row in documents["postgresql/pglz"]["documents"]}
    assert jsonb["duplicate_keys"]["notes"] == ["$.a: duplicate key, the last of 2 kept"]
    assert jsonb["negative_zero"]["outcome"] == "changed"
    assert jsonb["key_order"]["outcome"] == "same_value"


# ----- the representation variants (moved from tests/test_representations.py) ----------------

from test_representations import (  # noqa: E402
    gather_documents,
    labels_beyond_defaults,
    loaded_variant,
    representation_variants,
)


@pytest.fixture(scope="module")
def representation_documents(
    real_data_dir: Path, generated_6k: Path, tmp_path_factory: pytest.TempPathFactory
):
    return gather_documents(real_data_dir, generated_6k, tmp_path_factory.mktemp("representations"))


@pytest.fixture(scope="module")
def representation_loaded(request: pytest.FixtureRequest, server_url, representation_documents):
    system_name, variant_name = request.param
    url = server_url(system_name)
    with loaded_variant(system_name, variant_name, url, representation_documents) as loaded:
        yield loaded


@pytest.mark.parametrize(
    "representation_loaded",
    [(name, variant) for name, variant in representation_variants() if name.startswith("postgresql")],
    indirect=True,
    ids="/".join,
)
def test_postgresql_representations_use_their_index(representation_loaded):
    """On a table this small the planner rightly prefers a sequential scan: with it off, each
    filtering query must go through the variant's index (its expressions or its columns)."""
    loaded, _report = representation_loaded
    no_seqscan = {"enable_seqscan": "off"}
    session = type(loaded).open_session({**loaded.session_spec(), "session_settings": no_seqscan})
    try:
        for number, text in enumerate(loaded.queries()[1:], start=2):
            assert loaded.check_plan(number, session.explain(number, text)) is None
    finally:
        session.close()


def test_postgresql_json_keeps_what_jsonb_refuses_or_rewrites(server_url, tmp_path: Path):
    """json is the text as it arrived: duplicate keys, key order, whitespace and numbers come
    back as they were sent. Its input accepts \\u0000, but its operators then fail on that
    document, so the table refuses it (as jsonb does, the default and jsonb_columns)."""
    from hard_lines import LINES

    from docbench.systems import engine_class

    if not engine_class("postgresql").availability().ok:
        pytest.skip("PostgreSQL not installed")
    lines = [LINES["nul_escape"], LINES["duplicate_keys"], b'{"b": 1,  "a": [1, 2.50]}']
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    refused_by = {}
    for variant_name in ("json", "jsonb_columns"):
        base = work_dir(f"postgresql-odd-{variant_name}")
        engine = open_engine("postgresql", base / "work", server_url("postgresql"))
        adapter_type = adapter_class("postgresql", "analytics")
        system = adapter_type(engine, adapter_type.variant_named(variant_name))
        try:
            engine.start()
            system.create()
            report = load_files(system.loader(), [path], adapter_type.load_batch_size)
            refused_by[variant_name] = report.refused_lines.get(path.name, set())
            if variant_name == "json":
                query = f"SELECT data::text FROM {system.table}"
                stored = engine.admin_connection().execute(query).fetchall()
                assert sorted(row[0].encode() for row in stored) == sorted(lines[1:])
        finally:
            system.release()
            engine.stop()
            shutil.rmtree(base, ignore_errors=True)
    assert refused_by == {"json": {1}, "jsonb_columns": {1}}


@pytest.mark.parametrize(
    ("variant_name", "beyond"),
    [("pglz", {}), ("lz4", {"compression": "lz4"})],
    ids=["postgresql-pglz", "postgresql-lz4"],
)
def test_labels_name_the_settings_beyond_the_engine_defaults(variant_name, beyond, tmp_path: Path):
    assert labels_beyond_defaults("postgresql", variant_name, tmp_path) == beyond


# ----- the updates workload (from tests/test_updates_workload.py: its run calls this) ---------


def check_updates(result: dict, docs: int) -> None:
    stats = result["styles"][0]["stats_after"]
    assert stats["n_tup_upd"] == docs
    assert stats["hot_share"] is not None  # reported (0 here: the index covers `data`)
    assert result["point_stats_after"]["n_tup_upd"] >= stats["n_tup_upd"]


# ----- the throughput workload (moved from tests/test_throughput_workload.py) -----------------


def _postgresql_or_skip() -> None:
    from docbench.systems import engine_class

    cls = engine_class("postgresql")
    if not cls.availability().ok:
        pytest.skip(f"postgresql: {cls.availability().reason}")


def test_postgresql_native_reference_and_io_scenario(own_home: Path) -> None:
    from test_throughput_workload import DOCS

    from docbench import results
    from docbench.workloads.throughput import memcap
    from docbench.workloads.throughput.runner import ThroughputRequest, run_throughput

    _postgresql_or_skip()
    scenarios = ["cpu"] + ([] if memcap.availability() else ["io"])
    request = ThroughputRequest(
        system_names=["postgresql"],
        docs=DOCS,
        clients=[2],
        processes=2,
        duration_s=2.0,
        warmup_s=0.5,
        interval_s=1.0,
        mixes=["read-only"],
        scenarios=scenarios,
        results_dir=own_home / "results",
        quiet=True,
    )
    assert run_throughput(request) == 0
    latest = results.latest_run(own_home / "results", "throughput", "postgresql", "jsonb-btree", "2k")
    assert latest is not None
    document = latest[1]
    by_scenario = {run["scenario"]: run for run in document["runs"]}
    cpu = by_scenario["cpu"]
    native = cpu["native_reference"]
    assert native["custom"]["tps"] > 0 and 0 < native["ratio"] < 10, native
    assert native["custom"]["cpu_us_per_op"] > 0 and cpu["summary"]["driver"]["cpu_us_per_op"] > 0
    assert native["builtin"]["tps"] > 0 and native["builtin"]["script"] == "select-only"
    assert cpu["ceiling"]["tps"] > cpu["summary"]["tps"]
    if "io" in by_scenario:
        cap = by_scenario["io"]["memory_cap"]
        assert cap["pages_in_bytes"] > 0 and cap["limit_bytes"] > 0
        assert document["io_setup"].startswith("shared_buffers = 16MB")


def test_bench_throughput_prints_the_table(own_home: Path) -> None:
    _postgresql_or_skip()
    from click.testing import CliRunner

    from docbench.cli import main

    result = CliRunner().invoke(
        main,
        [
            "bench",
            "throughput",
            "--docs",
            "2k",
            "--clients",
            "2",
            "--scenario",
            "cpu",
            "--mix",
            "read-only",
            "--duration",
            "2",
            "--warmup",
            "0.5",
            "--results",
            str(own_home / "results"),
        ],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "docbench/native" in result.output and "driver CPU µs/op" in result.output
    rows = [line for line in result.output.splitlines() if "postgresql/jsonb-btree" in line]
    row = rows[-1]  # the bench's table comes after the run's own
    ratio = float(row.split("│")[7].split()[0])
    assert 0 < ratio < 10
    assert "driver ceiling (no-op target, 2 clients)" in result.output
