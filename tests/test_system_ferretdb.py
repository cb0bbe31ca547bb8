"""FerretDB 2 on DocumentDB (managed: a PostgreSQL 18 cluster in docbench's chroot and FerretDB
in front of it) running the mongodb system's pipelines unchanged.

Real server processes: the session fixture installs them once (``docbench setup ferretdb``,
idempotent) and each module starts and stops its own. Every answer must equal the oracle's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docbench.answers import AnswerCheck, check_answer
from docbench.contracts.common import BatchRejected
from docbench.dataset.oracle import compute_answers
from docbench.dataset.reader import iter_lines
from docbench.systems import engine_class, server
from docbench.systems.ferretdb.analytics import FerretDBAnalytics
from docbench.systems.ferretdb.engine import FerretDBEngine, FerretDBServer
from docbench.systems.mongodb.analytics import INDEX_NAME

pytest.importorskip("pymongo")

GOOD = (b'{"did":"did:plc:a","time_us":1732206349000167,"kind":"commit","commit":{"operation":'
        b'"create","collection":"app.bsky.feed.post","record":{"$type":"app.bsky.feed.post",'
        b'"text":"$5 off"}}}')
# name -> (line, refused?)
BAD_LINES = {
    "invalid_json": (b'{"did": "x", ', True),
    "invalid_utf8": (b'{"did": "\xff\xfe"}', True),
    "nul_escape_in_value": (b'{"did": "a\\u0000b"}', False),
    "nul_escape_in_key": (b'{"a\\u0000b": 1}', True),
    "integer_beyond_64_bits": (b'{"n": 123456789012345678901234567890}', True),
    "integer_2_pow_63": (b'{"n": 9223372036854775808}', True),
    "nesting_1000_deep": (b'{"a":' + b"[" * 1000 + b"]" * 1000 + b"}", True),
    "dollar_key": (b'{"r": {"$type": "x"}}', False),  # FerretDB v1 refused these
    "dotted_key": (b'{"a.b": 1}', False),
    "nested_array": (b'{"a": [[1, 2], [3]]}', False),
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
    availability = FerretDBEngine.availability()
    assert availability.ok, availability.reason
    assert availability.version.startswith("FerretDB v2.7.0 on DocumentDB (PostgreSQL 18")


@pytest.fixture(scope="module")
def real_lines(real_data_dir: Path) -> list[bytes]:
    return [line for path in real_files(real_data_dir) for line in iter_lines(path)
            if line.strip()]


@pytest.fixture(scope="module")
def oracle(real_data_dir: Path) -> dict:
    return compute_answers(real_files(real_data_dir))


@pytest.fixture(scope="module")
def engine(ferretdb_installed, tmp_path_factory):
    engine = FerretDBEngine(tmp_path_factory.mktemp("ferretdb"))
    engine.start()
    try:
        yield engine
    finally:
        engine.stop()
    assert not engine.server.running()


def load(system: FerretDBAnalytics, lines: list[bytes]) -> None:
    system.create()
    loader = system.loader()
    for start in range(0, len(lines), system.load_batch_size):
        loader.load_batch(lines[start:start + system.load_batch_size])
    loader.close()
    system.finish_load()


@pytest.fixture(scope="module", params=["pglz", "lz4"])
def loaded(engine, real_lines, request):
    system = FerretDBAnalytics(engine, FerretDBAnalytics.variant_named(request.param))
    load(system, real_lines)
    return system


def run_query(system, number: int, text: str, expected: dict) -> AnswerCheck:
    session = type(system).open_session(system.session_spec())
    try:
        outcome = session.execute(number, text)
        return check_answer(number, outcome.rows, expected,
                            time_precision_us=type(system).time_precision_us)
    except Exception as error:  # noqa: BLE001 - a failed query is an `error` answer
        return AnswerCheck.error(f"{type(error).__name__}: {error}")
    finally:
        session.close()


def test_registered_and_not_default():
    cls = engine_class("ferretdb")
    assert cls is FerretDBEngine and cls.runs_by_default is False and cls.embedded is False
    assert {v.name: v.role for v in FerretDBAnalytics.variants} == {"pglz": "default", "lz4": "best"}


def test_count_equals_lines(loaded, real_lines):
    """'$type' keys, dotted keys and all: every real document is stored as offered."""
    assert loaded.count() == len(real_lines)
    doc = loaded.collection().find_one({"commit.collection": "app.bsky.feed.post",
                                         "commit.operation": "create"})
    assert doc["commit"]["record"]["$type"] == "app.bsky.feed.post"


def test_every_answer_equals_the_oracle(loaded, oracle):
    for number, text in enumerate(loaded.queries(), 1):
        check = run_query(loaded, number, text, oracle)
        assert check.status == "ok", (number, check.detail)


def test_plans_scan_the_index(loaded):
    session = FerretDBAnalytics.open_session(loaded.session_spec())
    try:
        for number, text in enumerate(loaded.queries(), 1):
            plan = session.explain(number, text)
            assert plan
            assert loaded.check_plan(number, plan) is None, (number, loaded.check_plan(number, plan))
        assert "does not scan the index" in loaded.check_plan(2, '{"Plan": {"Node Type": "Seq Scan"}}')
    finally:
        session.close()


def test_toast_compression_of_the_variant(loaded):
    """lz4 is set on the collection's table; pglz is PostgreSQL's default (nothing set)."""
    with loaded.engine.documentdb_connection() as conn:
        row = conn.execute(
            "SELECT a.attcompression FROM documentdb_api_catalog.collections c JOIN pg_attribute a "
            "ON a.attrelid = ('documentdb_data.documents_' || c.collection_id)::regclass "
            "AND a.attname = 'document' WHERE c.database_name = 'docbench' AND c.collection_name = %s",
            (loaded.collection_name,)).fetchone()
    assert row[0] == {"pglz": "", "lz4": "l"}[loaded.variant.name]


def test_storage(loaded):
    size = loaded.storage()
    assert size.total > 0 and size.data > 0 and size.index > 0
    assert INDEX_NAME in size.detail["index_sizes"]
    assert size.on_disk and size.on_disk > size.total  # the cluster's data directory
    # DocumentDB's collStats count is PostgreSQL's row estimate (reltuples), not a count.
    assert size.detail["documents"] and size.detail["documents"] > 0
    assert size.detail["backend"] == "DocumentDB on PostgreSQL 18"


def test_engine_processes_measured(loaded):
    """Query sessions measure FerretDB and the backends of its pool (DocumentDB's work), not
    the postmaster or PostgreSQL's background processes."""
    session = FerretDBAnalytics.open_session(loaded.session_spec())
    try:
        pids = session.engine_pids()
        assert pids[0] == loaded.engine.server.pid and len(pids) >= 2
        assert loaded.engine.server.cluster.pid not in pids
        assert set(pids) <= set(loaded.engine.server_pids())
    finally:
        session.close()


def test_versions(engine):
    versions = engine.versions()
    assert versions["ferretdb"] == "v2.7.0"
    assert versions["postgresql"].startswith("18.")
    assert versions["documentdb"]


def test_bad_lines(engine):
    system = FerretDBAnalytics(engine, FerretDBAnalytics.variant_named("pglz"))
    system.create()
    loader = system.loader()
    refused = set()
    for name, (line, _) in BAD_LINES.items():
        before = system.count()
        try:
            loader.load_batch([GOOD, line, GOOD])
        except BatchRejected as error:
            assert str(error)
            refused.add(name)
            assert system.count() == before, f"{name}: part of a refused batch was kept"
        else:
            assert system.count() == before + 3, name
    loader.close()
    assert refused == {name for name, (_, bad) in BAD_LINES.items() if bad}


def test_no_password_on_a_command_line_or_in_a_log(engine):
    password = engine.server.cluster.password_file.read_text().strip()
    for pid in engine.server_pids():
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            assert password.encode() not in handle.read()
    for log in (engine.server.log_path, engine.server.cluster.log_path):
        assert password not in log.read_text(errors="replace")
    assert oct(engine.server.url_file.stat().st_mode & 0o777) == "0o600"


def test_restart_same_port_and_nothing_mounted_on_the_host(ferretdb_installed, tmp_path):
    engine = FerretDBEngine(tmp_path)
    engine.start()
    try:
        assert engine.can_restart
        system = FerretDBAnalytics(engine, FerretDBAnalytics.variant_named("pglz"))
        system.create()
        loader = system.loader()
        loader.load_batch([GOOD, GOOD])
        loader.close()
        port, pid, postmaster = engine.server.port, engine.server.pid, engine.server.cluster.pid
        engine.restart()
        assert engine.server.port == port and engine.server.pid != pid
        assert engine.server.cluster.pid != postmaster
        assert engine.is_alive() and system.count() == 2
        # The chroot's bind mount lives in the server's own mount namespace only.
        assert str(tmp_path) not in Path("/proc/self/mounts").read_text()
    finally:
        engine.stop()
    assert not engine.is_alive()
    assert engine.server.process is None and engine.server.cluster.process is None


def test_no_server_left(ferretdb_installed, tmp_path):
    server_ = FerretDBServer(tmp_path)
    server_.start()
    pids = [server_.pid, server_.cluster.pid]
    assert all(pid in server.running_pids() for pid in pids)
    server_.stop()
    server_.stop()  # twice is fine
    assert not any(pid in server.running_pids() for pid in pids)
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)


def test_collection_analyzed_after_the_load(loaded):
    """finish_load analyzes DocumentDB's table (its own timed step): queries are planned with
    statistics, as PostgreSQL's tables are after docbench's VACUUM ANALYZE. (pg_stats is
    written by ANALYZE's own transaction; pg_stat_user_tables.last_analyze arrives later.)"""
    assert any(step["step"].startswith("ANALYZE") for step in loaded.finish_steps)
    table = loaded.engine.collection_table(loaded.collection_name)
    with loaded.engine.documentdb_connection() as conn:
        row = conn.execute("SELECT count(*) FROM pg_stats "
                           "WHERE schemaname || '.' || tablename = %s", (table,)).fetchone()
    assert row[0] > 0
