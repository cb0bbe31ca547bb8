"""FerretDB 2 on DocumentDB (managed: a PostgreSQL 18 cluster in docbench's chroot and FerretDB
in front of it) running the mongodb system's pipelines unchanged: the shared cases
(tests/analytics_suite.py), in both variants, and FerretDB's own.

Real server processes: the module fixture installs them once (``docbench setup ferretdb``,
idempotent) and starts one managed server for the whole module -- the variant lz4 and what the
tests read (DocumentDB's tables, the processes, the data directory) need docbench's own server,
not the session's by URL. The last class restarts and stops it. Every answer must equal the
oracle's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from analytics_suite import AnalyticsAdapterSuite, BadLinesCases

from docbench.servers import managed as server
from docbench.systems.ferretdb.analytics import FerretDBAnalytics
from docbench.systems.ferretdb.engine import FerretDBEngine
from docbench.systems.mongodb.analytics import INDEX_NAME

pytest.importorskip("pymongo")

GOOD = (
    b'{"did":"did:plc:a","time_us":1732206349000167,"kind":"commit","commit":{"operation":'
    b'"create","collection":"app.bsky.feed.post","record":{"$type":"app.bsky.feed.post",'
    b'"text":"$5 off"}}}'
)


@pytest.fixture(scope="session", autouse=True)
def ferretdb_installed() -> None:
    """`docbench setup ferretdb` (idempotent)."""
    from docbench.setup import setup_systems

    assert setup_systems(["ferretdb"]) == 0


@pytest.fixture(scope="module")
def managed_engine(tmp_path_factory):
    """docbench's own FerretDB, for the module."""
    engine = FerretDBEngine(tmp_path_factory.mktemp("ferretdb"))
    engine.start()
    try:
        yield engine
    finally:
        engine.stop()
    assert not engine.server.running()


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


class TestFerretDB(BadLinesCases, AnalyticsAdapterSuite):
    system_name = "ferretdb"
    engine_type = FerretDBEngine
    adapter_type = FerretDBAnalytics
    variant_roles = [("pglz", "default"), ("lz4", "best")]
    runs_by_default = False
    has_setup_script = True
    good_line = GOOD
    bad_lines = BAD_LINES
    every_variant = True

    @pytest.fixture(scope="class")
    @classmethod
    def engine(cls, managed_engine: FerretDBEngine) -> FerretDBEngine:
        return managed_engine

    # ----- the shared cases' hooks --------------------------------------------------------
    def check_version(self, version):
        assert version.startswith("FerretDB v2.7.0 on DocumentDB (PostgreSQL 18")

    def check_registration(self):
        assert FerretDBEngine.embedded is False

    def check_stored(self, system, lines):
        """'$type' keys, dotted keys and all: every real document is stored as offered."""
        doc = system.collection().find_one(
            {"commit.collection": "app.bsky.feed.post", "commit.operation": "create"}
        )
        assert doc["commit"]["record"]["$type"] == "app.bsky.feed.post"

    def check_outcome(self, number, outcome):
        """engine_seconds: None (FerretDB has no latency statistics)."""

    def check_session(self, system, session):
        # DocumentDB's plans scan the index (check_explain, above); a plan that does not is told.
        assert "does not scan the index" in system.check_plan(2, '{"Plan": {"Node Type": "Seq Scan"}}')

    def check_storage(self, system, size):
        assert size.index > 0
        assert INDEX_NAME in size.detail["index_sizes"]
        assert size.on_disk and size.on_disk > size.total  # the cluster's data directory
        # DocumentDB's collStats count is PostgreSQL's row estimate (reltuples), not a count.
        assert size.detail["documents"] and size.detail["documents"] > 0
        assert size.detail["backend"] == "DocumentDB on PostgreSQL 18"

    # ----- FerretDB's own -----------------------------------------------------------------
    def test_toast_compression_of_the_variant(self, loaded):
        """lz4 is set on the collection's table; pglz is PostgreSQL's default (nothing set)."""
        with loaded.engine.documentdb_connection() as conn:
            row = conn.execute(
                "SELECT a.attcompression FROM documentdb_api_catalog.collections c JOIN pg_attribute a "
                "ON a.attrelid = ('documentdb_data.documents_' || c.collection_id)::regclass "
                "AND a.attname = 'document' WHERE c.database_name = 'docbench' AND c.collection_name = %s",
                (loaded.collection_name,),
            ).fetchone()
        assert row[0] == {"pglz": "", "lz4": "l"}[loaded.variant.name]

    def test_engine_processes_measured(self, loaded):
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

    def test_collection_analyzed_after_the_load(self, loaded):
        """finish_load analyzes DocumentDB's table (its own timed step): queries are planned with
        statistics, as PostgreSQL's tables are after docbench's VACUUM ANALYZE. (pg_stats is
        written by ANALYZE's own transaction; pg_stat_user_tables.last_analyze arrives later.)"""
        assert any(step["step"].startswith("ANALYZE") for step in loaded.finish_steps)
        table = loaded.engine.collection_table(loaded.collection_name)
        with loaded.engine.documentdb_connection() as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stats WHERE schemaname || '.' || tablename = %s", (table,)
            ).fetchone()
        assert row[0] > 0

    def test_versions(self, engine):
        versions = engine.versions()
        assert versions["ferretdb"] == "v2.7.0"
        assert versions["postgresql"].startswith("18.")
        assert versions["documentdb"]

    def test_no_password_on_a_command_line_or_in_a_log(self, engine):
        password = engine.server.cluster.password_file.read_text().strip()
        read = 0
        for pid in engine.server_pids():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    assert password.encode() not in handle.read()
                read += 1
            except FileNotFoundError:
                continue  # a backend that ended since it was listed (a loaded machine)
        assert read >= 2  # FerretDB and the postmaster at least
        for log in (engine.server.log_path, engine.server.cluster.log_path):
            assert password not in log.read_text(errors="replace")
        assert oct(engine.server.url_file.stat().st_mode & 0o777) == "0o600"


class TestFerretDBServer:
    """The module's server restarted, then stopped (after TestFerretDB: pytest runs the classes
    of a module in order)."""

    def test_restart_same_port_and_nothing_mounted_on_the_host(self, managed_engine):
        engine = managed_engine
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
        assert str(engine.workdir) not in Path("/proc/self/mounts").read_text()

    def test_no_server_left(self, managed_engine):
        engine = managed_engine
        server_ = engine.server
        pids = [server_.pid, server_.cluster.pid]
        assert all(pid in server.running_pids() for pid in pids)
        server_.stop()
        server_.stop()  # twice is fine
        assert not any(pid in server.running_pids() for pid in pids)
        assert not any(Path(f"/proc/{pid}").exists() for pid in pids)
        engine.stop()
        assert not engine.is_alive()
        assert engine.server.process is None and engine.server.cluster.process is None


# ----- the storage workload (moved from tests/test_storage_workload.py) -----------------------


def test_matrix_variants_declared() -> None:
    """FerretDB has a single storage variant (DocumentDB's TOAST, no block compressor)."""
    from docbench.systems import adapter_variants

    assert [v.name for v in adapter_variants("ferretdb", "storage")] == ["default"]


def test_ferretdb_cells(tmp_path: Path) -> None:
    from test_storage_workload import SERVER_ROWS, SERVER_SIZES, _available, _cells, _check_loaded, _run

    if not _available("ferretdb"):
        pytest.skip("FerretDB is not installed")
    results = _run(
        tmp_path, ["ferretdb"], ["default"], ["random", "repetitive"], rows=SERVER_ROWS, sizes=SERVER_SIZES
    )
    cells = _cells(results, "ferretdb", "default", rows=SERVER_ROWS)
    assert len(cells) == 4
    _check_loaded(cells)
    for cell in cells.values():
        # The servers were restarted in finish(): PostgreSQL's shutdown checkpoint wrote every
        # page; the data directory holds the cluster (catalogs, WAL) besides the collection.
        assert cell["detail"]["checkpoint"].startswith("servers restarted")
        assert cell["on_disk"] >= cell["total_size"]
    # DocumentDB is PostgreSQL: rows under TOAST's ~2 kB threshold are stored as they are,
    # larger ones compressed (pglz), which repetitive data shows and random data does not.
    small, large = min(SERVER_SIZES), max(SERVER_SIZES)
    assert small < 2000 < large
    assert cells[(small, "repetitive")]["bytes_per_input_byte"] > 0.9
    assert cells[(large, "repetitive")]["bytes_per_input_byte"] < 0.3
    assert cells[(large, "random")]["bytes_per_input_byte"] > 0.9


# ----- the fidelity workload (from tests/test_fidelity.py: its run of every engine calls this) ---


def check_fidelity(documents: dict[str, dict], report: str) -> None:
    from test_fidelity import _outcomes

    # BSON: no integer beyond 64 bits, the last duplicate kept
    bson = _outcomes(documents["ferretdb/pglz"])
    assert bson["int_2_64"] == "refused" and bson["duplicate_keys"] == "changed"
