"""Live ingest (`docbench run analytics --ingest-rates`) against real engines: the rate held,
freshness measured by marker documents and for every batch by count, the exact count at the
end, hard documents refused mid-stream and logged, a server killed mid-stream, the embedded
engines with the loader and the queries in one process, a system without it said unsupported.
The systems are conftest's roles (the SQL server, the quick engine, the log store...)."""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest
from analytics_suite import real_files_of, work_dir
from conftest import COLUMNAR, EMBEDDED, LOGS, QUICK, SQL_SERVER

from docbench import results
from docbench.contracts.capabilities import LiveIngest
from docbench.contracts.common import NotSupported
from docbench.systems import REGISTERED, adapter_class, engine_class, open_engine
from docbench.workloads.analytics.ingest import IngestRequest, run_ingest
from docbench.workloads.analytics.runner import RunRequest, run_analytics
from docbench.workloads.load import load_files

pytestmark = pytest.mark.skipif(
    not engine_class(SQL_SERVER.system).availability().ok, reason=f"no {SQL_SERVER.display_name} here"
)


def test_documents_arrive_at_the_rate_and_every_one_is_counted(
    real_data_dir: Path, tmp_path: Path, server_url
) -> None:
    """Two levels on the SQL server (PostgreSQL), the quick engine (SQLite, WAL) and the log store
    (VictoriaLogs) (a target of 400 documents/s, then as fast as they take them) with 3% hard
    documents: the rate is held, each batch's freshness is measured (the log store's count
    without a flush), the documents the SQL server refuses are isolated and logged, and the
    final count is exact."""
    roles = [SQL_SERVER, QUICK] + ([LOGS] if engine_class(LOGS.system).availability().ok else [])
    systems = [role.system for role in roles]
    request = RunRequest(
        system_names=systems,
        variants=[role.variant for role in roles],
        data_dir=real_data_dir,
        results_dir=tmp_path,
        tries=1,
        quiet=True,
        # The log store on docbench's own server: its refusals are read from its log (by URL a
        # document it skips without a 400 is only seen by the end's count).
        urls={SQL_SERVER.system: server_url(SQL_SERVER.system)},
        restart_for_cold=False,
        ingest=IngestRequest(rates=[400.0, 0.0], duration_s=2.0, clients=1, hard_rate=0.03, timeout_s=60),
    )
    run_and_check(request, systems, tmp_path)


def run_and_check(request: RunRequest, systems: list[str], results_dir: Path) -> None:
    """Run the analytics with its ingest levels; every system's result valid, its levels checked."""
    assert run_analytics(request) == 0
    documents = {d["system"]: d for d in results.load_results([results_dir])}
    assert set(documents) == set(systems)
    for name, document in documents.items():
        results.validate({k: v for k, v in document.items() if k != "_path"})
        check_levels(name, document["ingest"]["levels"], request.ingest.rates[0])


def check_levels(name: str, levels: list[dict], rate: float) -> None:
    paced, flat_out = levels
    assert paced["target_rate"] == rate and flat_out["target_rate"] is None
    assert abs(paced["offered_rate"] - rate) < rate / 10, (name, paced)
    assert flat_out["acknowledged"] > paced["acknowledged"]
    for level in (paced, flat_out):
        assert level["error"] is None
        assert level["exact"], level
        assert level["final_count"] == level["count_before"] + level["acknowledged"]
        assert level["acknowledged"] == level["offered"] - level["refused"]
        if name == SQL_SERVER.system:  # it refuses some hard documents (a lone surrogate, a NUL): each named
            assert level["refused"] > 0 and all(r["reason"] for r in level["refused_first"])
        by_count = level["freshness_by_count_ms"]
        assert by_count["unseen_batches"] == 0 and by_count["batches"] > 0
        assert by_count["p50"] is not None and by_count["p50"] < 2000
        check_markers(level)
        assert level["queries_idle"]["count"] > 0 and level["queries_during"]["count"] > 0
    assert flat_out["count_before"] == paced["final_count"]


def check_markers(level: dict) -> None:
    """A marker a second, each found by the system's own point lookup after its batch was
    acknowledged; none lost; every one counted in the final count (checked by the caller)."""
    markers = level["freshness_ms"]
    assert markers["method"] == "markers", markers
    assert markers["error"] is None
    seconds = level["elapsed_s"]
    assert 1 <= markers["markers"] <= seconds / markers["every_s"] + 2, (markers, seconds)
    assert markers["seen"] == markers["markers"] and markers["unseen_markers"] == 0
    assert markers["lost_markers"] == 0
    assert markers["p50"] is not None and 0 <= markers["p50"] <= markers["p99"] < 5000
    assert markers["poll_ms_p50"] is not None


def test_the_embedded_engines_ingest_beside_their_queries(real_data_dir: Path, tmp_path: Path) -> None:
    """The embedded engines (DuckDB, chDB): the loader, the probe, the marker poller and the
    query clients are threads of one process, each on a connection of its own to the one
    instance. The rate is held and the count is exact; markers are found by each engine's point
    lookup. No hard documents: a batch with a refusal is bisected, a dozen chDB inserts instead
    of one, and the refusals mid-stream are the SQL server's test's."""
    systems = [EMBEDDED.system, COLUMNAR.system]
    request = RunRequest(
        system_names=systems,
        variants=[EMBEDDED.variant, COLUMNAR.variant],
        data_dir=real_data_dir,
        results_dir=tmp_path,
        tries=1,
        quiet=True,
        restart_for_cold=False,
        # 100/s: chDB's small inserts (a part each) kept 400/s on a quiet machine, not on a
        # busy one (325/s with another run beside the tests, 148/s in the whole suite on a
        # slower machine).
        ingest=IngestRequest(rates=[100.0, 0.0], duration_s=2.0, clients=2, hard_rate=0.0, timeout_s=60),
    )
    run_and_check(request, systems, tmp_path)


def test_a_server_killed_mid_stream_keeps_what_it_acknowledged(real_data_dir: Path) -> None:
    """The SQL server's main process (PostgreSQL's postmaster) is killed (SIGKILL) once the
    first streamed documents are visible: the level records the failure, the server is
    restarted, and every acknowledged document is there."""
    base = work_dir("ingest-kill")
    engine = open_engine(SQL_SERVER.system, base / "work", None)
    adapter_type = adapter_class(SQL_SERVER.system, "analytics")
    system = adapter_type(engine, adapter_type.variant_named(SQL_SERVER.variant))
    try:
        engine.start()
        system.create()
        load_files(system.loader(), real_files_of(real_data_dir), adapter_type.load_batch_size)

        loaded = system.count()

        def kill_once_documents_arrive() -> None:
            # Not after a fixed delay: on a busy machine the idle baseline and the clients'
            # start can outlast it, and the kill would come before the stream.
            deadline = time.monotonic() + 60
            while system.visible_count() <= loaded and time.monotonic() < deadline:
                time.sleep(0.02)
            os.kill(engine.server_pids()[0], signal.SIGKILL)

        request = IngestRequest(rates=[2000.0], duration_s=1.0, clients=1, timeout_s=30)
        killer = threading.Thread(target=kill_once_documents_arrive)
        killer.start()
        record = run_ingest(system, request, say=lambda _line: None)
        killer.join()
        (level,) = record["levels"]
        assert level["error"] is not None
        assert level["restarted"]
        assert level["acknowledged"] > 0
        assert level["final_count"] == level["count_before"] + level["acknowledged"], level
        assert engine.is_alive()
    finally:
        system.release()
        engine.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            name,
            marks=pytest.mark.skipif(
                not engine_class(name).availability().ok, reason=f"no {engine_class(name).display_name} here"
            ),
        )
        for name in REGISTERED
        if not issubclass(adapter_class(name, "analytics"), LiveIngest)
    ],
)
def test_a_system_without_live_ingest_says_so(name: str, tmp_path: Path) -> None:
    """A system whose adapter is no LiveIngest (DuckDB 1.1.3 runs in a worker process of its
    own, which the loader and the query threads cannot share) says so instead of measuring
    something else."""
    engine = open_engine(name, tmp_path / "work", None)
    adapter = adapter_class(name, "analytics")
    system = adapter(engine, adapter.variants[0])
    with pytest.raises(NotSupported, match="one process"):
        run_ingest(system, IngestRequest(rates=[100.0]), say=lambda _line: None)
