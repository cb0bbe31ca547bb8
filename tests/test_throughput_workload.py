"""The throughput workload on the real engines, a few seconds each: the counts add up
(operations = histogram values = rows changed; documents after = before + inserts), --rate
holds the rate, response time (from the intended start) >= service time, and a server stalled
with SIGSTOP for one second shows in the intended-time p99 but not in the service-time p99."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from conftest import QUICK, SQL_SERVER, broad_systems

from docbench import results
from docbench.contracts import ycsb
from docbench.contracts.engine import main_pid
from docbench.contracts.mixes import MIXES, mix_named
from docbench.report import html
from docbench.systems import REGISTERED, adapter_class, adapter_module, engine_class, open_adapter
from docbench.workloads.throughput import memcap
from docbench.workloads.throughput.driver import DriveRequest, drive
from docbench.workloads.throughput.runner import ThroughputRequest, run_throughput

DOCS = 2_000
# FerretDB v1 over SQLite takes ~20 ms per $set: fewer documents keep its run short.
SMALL_DOCS: dict[str, int] = {}
# The SQL server's sessions run in both event loops: each behaviour is checked in each.
LOOPS = ["compiled", "multiplexed"]


def test_mix_weights_are_drawn_in_proportion() -> None:
    chooser = mix_named("read-write").chooser(random.Random(1))
    counts = Counter(chooser.next() for _ in range(20_000))
    for operation, weight in MIXES["read-write"].weights:
        assert abs(counts[operation] / 20_000 - weight) < 0.02
    assert MIXES["read-only"].read_only and not MIXES["ycsb-a"].read_only
    with pytest.raises(ValueError, match="unknown mix"):
        mix_named("nope")


def test_driver_against_noop_target_counts_and_progress() -> None:
    lines: list[str] = []
    summary = drive(
        DriveRequest(
            "docbench.workloads.throughput.noop",
            {},
            "read-write",
            "zipfian",
            1_000,
            clients=3,
            processes=2,
            duration_s=2.0,
            warmup_s=0.5,
            interval_s=0.5,
        ),
        on_progress=lines.append,
    )
    assert summary["transactions"] > 1_000 and summary["failed"] == 0
    recorded = sum(op["service"]["count"] for op in summary["operations"].values())
    assert recorded == summary["transactions"]
    assert set(summary["operations"]) == {"read", "update", "insert", "read-modify-write"}
    assert len(lines) == 5 and lines[0].startswith("progress: 0.5 s,") and "(warm-up)" in lines[0]
    assert "(warm-up)" not in lines[-1]
    assert summary["connection_ms"]["avg"] is not None
    # The no-op target has a compiled session: docbench-client ran, and said what it cost.
    driver = summary["driver"]
    assert driver["loop"] == "compiled" and driver["cpu_us_per_op"] > 0
    assert driver["operations"] >= summary["transactions"]


@pytest.mark.parametrize("loop", ["multiplexed", "threads"])
def test_python_loops_still_run_on_request(loop: str) -> None:
    summary = drive(
        DriveRequest(
            "docbench.workloads.throughput.noop",
            {},
            "ycsb-f",
            "uniform",
            1_000,
            clients=2,
            processes=1,
            duration_s=1.0,
            warmup_s=0.2,
            interval_s=0.5,
            loop=loop,
        )
    )
    assert summary["driver"]["loop"] == loop and summary["transactions"] > 100
    recorded = sum(op["service"]["count"] for op in summary["operations"].values())
    assert recorded == summary["transactions"] and summary["failed"] == 0


def test_compiled_loop_refuses_a_system_without_compiled_sessions() -> None:
    """--client-loop compiled on a system that describes nothing to docbench-client: the
    worker says so (the run does not silently fall back to another loop)."""
    from docbench.workloads.throughput.driver import DriverError

    with pytest.raises(DriverError, match="compiled client loop is not available"):
        drive(
            DriveRequest(
                f"docbench.systems.{QUICK.system}.updates",
                {},
                "read-only",
                "uniform",
                10,
                clients=1,
                processes=1,
                duration_s=0.5,
                loop="compiled",
            )
        )


def test_a_client_loop_a_system_cannot_serve_is_refused_before_anything_loads(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from docbench.cli import main

    result = CliRunner().invoke(
        main,
        [
            "run",
            "throughput",
            "--systems",
            QUICK.system,
            "--client-loop",
            "compiled",
            "--docs",
            "100k",
            "--results",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 2, result.output
    assert (
        f"{QUICK.system}: the compiled client loop cannot serve it (its sessions run in: threads)"
        in result.output
    )
    assert not list(tmp_path.iterdir())  # nothing was loaded, nothing written


def test_record_many_is_record_value_in_bulk() -> None:
    """The multiplexed loop fills its histograms with numpy: the counts must be exactly the
    ones hdrh's own record_value gives, clamping included."""
    import numpy as np

    from docbench.core import histograms

    rng = random.Random(7)
    values = [int(rng.lognormvariate(11, 2.5)) for _ in range(20_000)]
    values += [0, 1, 999, 1_000, 1_001, 2**40 - 1, 2**40, histograms.HIGHEST_NS, 10**15]
    one_by_one, in_bulk = histograms.new_histogram(), histograms.new_histogram()
    for value in values:
        histograms.record(one_by_one, value)
    histograms.record_many(in_bulk, values[:5_000])
    histograms.record_many(in_bulk, np.array(values[5_000:], dtype=np.int64))
    histograms.record_many(in_bulk, [])
    assert in_bulk.encode() == one_by_one.encode()
    assert in_bulk.get_total_count() == len(values)
    assert in_bulk.get_max_value() == one_by_one.get_max_value()
    assert in_bulk.get_value_at_percentile(99) == one_by_one.get_value_at_percentile(99)


def _server_cases() -> list:
    # A system that is another version of one is left to its smoke test (smoke_tests_only).
    return [
        pytest.param(name, id=name)
        for name in REGISTERED
        if adapter_module(name, "updates") is not None and name in broad_systems()
    ]


@pytest.mark.parametrize("name", _server_cases())
def test_counts_add_up_on_real_engine(name: str, own_home: Path, server_url) -> None:
    # Servers by URL: the session's one per system (the mongodb system: a real MongoDB if
    # given, else FerretDB 2).
    url = server_url(name)
    urls = {name: url} if url else {}
    availability = engine_class(name).availability(urls.get(name))
    if not availability.ok:
        pytest.skip(f"{name}: {availability.reason}")
    docs = SMALL_DOCS.get(name, DOCS)
    run_request = ThroughputRequest(
        system_names=[name],
        docs=docs,
        clients=[3],
        processes=2,
        duration_s=2.0,
        warmup_s=0.5,
        interval_s=1.0,
        mixes=["read-write"],
        results_dir=own_home / "results",
        ceiling=False,
        native=False,
        quiet=True,
        urls=urls,
    )
    run_throughput(run_request)
    paths = list((own_home / "results").glob(f"throughput.{name}.*.json"))
    document = results.read_result(next(p for p in paths if not p.name.endswith("intervals.json")))
    results.validate(document)
    assert not document["errors"], document["errors"]
    (run,) = document["runs"]
    assert "error" not in run, run.get("traceback")
    check = run["check"]
    assert check["verdict"] == "ok", check["problems"]
    assert check["operations"] == check["histogram_values"] > 0
    assert check["count_after"] == check["count_before"] + check["inserts"]
    assert run["summary"]["operations"]["update"]["rows_changed"] > 0
    # --client-loop auto runs the loop the target prefers (docbench-client is built here).
    preferred = adapter_class(name, "updates").client_loops[0]
    assert run["summary"]["driver"]["loop"] == preferred
    if preferred == "compiled":
        # docbench-client makes the loaded keys itself (ycsb.key_of in Rust): every read finds one.
        assert run["summary"]["operations"]["read"]["not_found"] == 0
    assert run["summary"]["driver"]["cpu_us_per_op"] > 0
    limit = document["max_client_processes"]
    assert run["processes"] == (1 if limit == 1 else 2)
    assert list(own_home.joinpath("results").glob(f"throughput.{name}.*.hlog"))
    # The dashboard and the terminal report show the run as one row with its TPS.
    (table,) = html.build_payload(results.load_results([own_home / "results"]))["workloads"]
    (row,) = table["rows"]
    assert row[:4] == [f"{name}/{document['variant']}", "cpu", "read-write", "3"]
    assert row[table["columns"].index("TPS")] == f"{run['summary']['tps']:,.0f}"


def _sql_server_or_skip() -> None:
    cls = engine_class(SQL_SERVER.system)
    if not cls.availability().ok:
        pytest.skip(f"{SQL_SERVER.system}: {cls.availability().reason}")


@pytest.fixture(scope="module")
def sql_server_target():
    """One loaded SQL server (PostgreSQL: the tests' SQL is its dialect) for the module's driver
    tests (each leaves the table usable: a constraint is dropped again, a killed backend is one
    client's): initdb and the load once."""
    _sql_server_or_skip()
    base = Path(tempfile.mkdtemp(prefix="docbench-throughput-pg-"))
    os.chmod(base, 0o711)
    target = open_adapter(SQL_SERVER.system, "updates", base / "work")
    target.engine.start()
    try:
        target.create()
        target.load(ycsb.document_lines(DOCS))
        target.create_key_index()
        yield type(target).__module__, target
    finally:
        target.engine.release()
        target.engine.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("loop", LOOPS)
def test_rate_is_held_and_response_includes_schedule(sql_server_target, loop: str) -> None:
    module_name, target = sql_server_target
    summary = drive(
        DriveRequest(
            module_name,
            target.session_spec(),
            "read-only",
            "uniform",
            DOCS,
            clients=2,
            processes=2,
            duration_s=3.0,
            interval_s=1.0,
            rate=300.0,
            loop=loop,
        )
    )
    assert 240 <= summary["tps"] <= 360
    assert summary["response"]["avg_ms"] >= summary["service"]["avg_ms"]
    assert summary["response"]["max_ms"] >= summary["service"]["max_ms"]
    assert summary["schedule_lag"]["count"] == summary["transactions"]


@pytest.mark.parametrize("loop", LOOPS)
def test_server_stall_shows_in_intended_time_p99(sql_server_target, loop: str) -> None:
    module_name, target = sql_server_target
    server = main_pid(target.engine)
    state = {"stopped": []}

    def stall(seconds: float) -> None:
        if seconds >= 1.0 and not state["stopped"]:
            state["stopped"] = memcap.descendants(server)  # the postmaster and its backends
            for pid in state["stopped"]:
                os.kill(pid, signal.SIGSTOP)
        elif seconds >= 2.0 and state["stopped"] and "resumed" not in state:
            for pid in state["stopped"]:
                os.kill(pid, signal.SIGCONT)
            state["resumed"] = True

    try:
        summary = drive(
            DriveRequest(
                module_name,
                target.session_spec(),
                "read-only",
                "uniform",
                DOCS,
                clients=2,
                processes=1,
                duration_s=4.0,
                interval_s=1.0,
                rate=200.0,
                loop=loop,
            ),
            during=stall,
        )
    finally:
        for pid in state["stopped"]:
            with contextlib.suppress(ProcessLookupError):  # backends of closed sessions
                os.kill(pid, signal.SIGCONT)
    assert state.get("resumed")
    # ~200 operations were due during the stall: far more than 1% of ~800 wait ~0.5 s on
    # average from their intended start; only the two in flight saw it as service time.
    assert summary["response"]["p99_ms"] >= 500
    assert summary["service"]["p99_ms"] < summary["response"]["p99_ms"] / 2


@pytest.mark.parametrize("loop", LOOPS)
def test_failed_operations_are_counted_and_the_run_goes_on(sql_server_target, loop: str) -> None:
    """For a second every write breaks a CHECK constraint: each such operation fails with the
    server's error (counted, the first one kept), reads go on, and the writes succeed again
    once the constraint is dropped."""
    module_name, target = sql_server_target
    table = target.table
    state: dict[str, bool] = {}

    def constrain(seconds: float) -> None:
        if seconds >= 1.0 and "added" not in state:
            with target.engine.connect() as conn:
                conn.execute(f"ALTER TABLE {table} ADD CONSTRAINT docbench_refuse CHECK (false) NOT VALID")
            state["added"] = True
        elif seconds >= 2.0 and "dropped" not in state:
            with target.engine.connect() as conn:
                conn.execute(f"ALTER TABLE {table} DROP CONSTRAINT docbench_refuse")
            state["dropped"] = True

    summary = drive(
        DriveRequest(
            module_name,
            target.session_spec(),
            "read-write",
            "uniform",
            DOCS,
            clients=3,
            processes=2,
            duration_s=4.0,
            interval_s=1.0,
            loop=loop,
        ),
        during=constrain,
    )
    assert state == {"added": True, "dropped": True}
    assert summary["driver"]["loop"] == loop
    operations = summary["operations"]
    assert summary["failed"] > 0 and operations["read"]["failed"] == 0 and operations["read"]["ok"] > 0
    errors = [op["first_error"] for op in operations.values() if op["first_error"]]
    assert errors and all("docbench_refuse" in error for error in errors), errors
    last = summary["intervals"][-1]
    assert last["ops"] > 0 and last["failed"] == 0  # a second after the constraint was dropped


@pytest.mark.parametrize("loop", LOOPS)
def test_a_client_whose_connection_is_killed_stops_and_the_others_go_on(sql_server_target, loop: str) -> None:
    """pg_terminate_backend on one client's backend: that client fails once and stops (as a
    pgbench client aborts) instead of failing at once forever; the other clients carry on."""
    module_name, target = sql_server_target
    state: dict[str, int] = {}

    def kill_one(seconds: float) -> None:
        if seconds >= 1.0 and "killed" not in state:
            with target.engine.connect() as conn:
                row = conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                    "AND datname = current_database() AND query LIKE 'SELECT data::text%' LIMIT 1"
                ).fetchone()
            state["killed"] = int(bool(row and row[0]))

    summary = drive(
        DriveRequest(
            module_name,
            target.session_spec(),
            "read-only",
            "uniform",
            DOCS,
            clients=3,
            processes=1,
            duration_s=2.5,
            interval_s=0.5,
            loop=loop,
        ),
        during=kill_one,
    )
    assert state == {"killed": 1}
    assert summary["aborted_clients"] == 1
    assert 1 <= summary["failed"] <= 2, summary["failed"]
    assert summary["intervals"][-1]["ops"] > 0 and summary["intervals"][-1]["failed"] == 0
