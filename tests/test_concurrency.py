"""The analytics workload's concurrency phase (`docbench run analytics --clients ...`) on the
real events, against real engines: DuckDB and chDB (clients as threads of one process, a
connection each) and SQLite (a process per client). The seeded order and the rate control are checked
exactly on the driver's echo target; wrong answers, failing and timed-out queries are counted
as such, never as latencies. Every other system takes part in the runner's every-system test
(tests/test_runner.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from analytics_suite import real_files_of, work_dir
from click.testing import CliRunner
from conftest import COLUMNAR, EMBEDDED, QUICK

from docbench import results
from docbench.cli import main
from docbench.dataset.oracle import compute_answers
from docbench.systems import adapter_class, open_engine
from docbench.workloads.analytics.concurrency import (
    ConcurrencyRequest,
    collect_finals,
    run_concurrency,
    run_level,
    short_window,
    summarize,
)
from docbench.workloads.analytics.concurrent_clients import QUERY_NUMBERS, client_order
from docbench.workloads.load import load_files


@pytest.fixture(scope="module")
def real_files(real_data_dir: Path) -> list[Path]:
    return real_files_of(real_data_dir)


@pytest.fixture(scope="module")
def expected(real_files: list[Path]) -> dict:
    return compute_answers(real_files)


@pytest.fixture(scope="module", params=[EMBEDDED.system, QUICK.system, COLUMNAR.system])
def loaded(request: pytest.FixtureRequest, real_files: list[Path]):
    name = request.param
    base = work_dir(f"concurrency-{name}")
    engine = open_engine(name, base / "work", None)
    adapter_type = adapter_class(name, "analytics")
    system = adapter_type(engine, adapter_type.variants[0])
    try:
        engine.start()
        system.create()
        load_files(system.loader(), real_files, adapter_type.load_batch_size)
        system.finish_load()
        system.release()
        yield system
    finally:
        system.release()
        engine.stop()
        shutil.rmtree(base, ignore_errors=True)


SLOW_QUERIES = {COLUMNAR.system: "SELECT sum(cityHash64(number)) FROM numbers(1000000000000)"}


def short(clients: list[int], **kwargs: object) -> ConcurrencyRequest:
    settings: dict = {"duration_s": 1.0, "warmup_s": 0.2, "timeout_s": 30.0, "ceiling": False}
    return ConcurrencyRequest(clients=clients, **(settings | kwargs))  # type: ignore[arg-type]


def test_every_answer_is_checked_under_concurrency(loaded, expected: dict) -> None:
    record = run_concurrency(loaded, expected, short([1, 3]), say=lambda _line: None)
    expected_processes = 1 if loaded.concurrent_clients == "threads" else 3
    assert [level["processes"] for level in record["levels"]] == [1, expected_processes]
    for level in record["levels"]:
        assert level["error"] is None
        assert level["queries"] > 0 and level["outcomes"]["ok"] == level["queries"], level["per_query"]
        assert level["latency_ms"]["count"] == level["queries"]
        assert sum(q["queries"] for q in level["per_query"]) == level["queries"]
        assert level["engine"]["cpu_seconds"] > 0
    assert record["engine_measured"].startswith("the client processes")


def test_a_wrong_answer_is_an_error_never_a_latency(loaded, expected: dict) -> None:
    """Q1's expected counts doubled: every Q1 the engine answers is wrong, counted so, and
    no Q1 latency is recorded; the other queries are still right."""
    altered = json.loads(json.dumps(expected))
    altered["q1"] = [[row[0], row[1] * 2] for row in altered["q1"]]
    texts = loaded.queries()
    spec = {**loaded.session_spec(), "timeout": 30.0}
    level = summarize(run_level(loaded, spec, texts, altered, 2, short([2])), short([2]))
    q1 = level["per_query"][0]
    assert q1["queries"] > 0 and q1["outcomes"]["wrong"] == q1["queries"]
    assert q1["latency_ms"]["count"] == 0 and q1["first_problem"].startswith("wrong: ")
    assert all(q["outcomes"]["ok"] == q["queries"] for q in level["per_query"][1:])


def test_failing_and_timed_out_queries_are_counted_and_the_run_goes_on(loaded, expected: dict) -> None:
    texts = loaded.queries()
    texts[1] = "SELECT * FROM docbench_no_such_table"
    # Q3: a query that runs far longer than the timeout, cancelled through the session (chDB:
    # stopped by its max_execution_time, the session's timeout rounded up to a second).
    texts[2] = SLOW_QUERIES.get(
        loaded.name, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    )
    request = short([2], timeout_s=0.5, duration_s=3.0)
    spec = {**loaded.session_spec(), "timeout": 0.5}
    level = summarize(run_level(loaded, spec, texts, expected, 2, request), request)
    failing, slow = level["per_query"][1], level["per_query"][2]
    # An answer after the timeout is a timeout, whatever it says (the busy engine may delay
    # even an error past it); every other is the engine's error.
    assert failing["outcomes"]["error"] > 0
    assert failing["outcomes"]["error"] + failing["outcomes"]["timeout"] == failing["queries"]
    assert "docbench_no_such_table" in failing["first_problem"]
    assert slow["queries"] > 0 and slow["outcomes"]["timeout"] == slow["queries"], slow
    # The other queries are answered right (or, behind the slow one on a busy engine, late).
    others = [q for q in level["per_query"] if q["query"] not in (2, 3)]
    assert all(q["outcomes"]["wrong"] == q["outcomes"]["error"] == 0 for q in others), [
        (q["query"], q["outcomes"], q["first_problem"]) for q in others
    ]
    assert sum(q["outcomes"]["ok"] for q in others) > 0


def test_an_engine_behind_the_rate_shows_it(loaded, expected: dict) -> None:
    """Open loop far above what one client gets from the engine: the queries the window had
    no time for are counted as missed and the QPS is the engine's, not the target's."""
    request = short([1], rate=20_000.0, duration_s=1.0)
    spec = {**loaded.session_spec(), "timeout": 30.0}
    level = summarize(run_level(loaded, spec, loaded.queries(), expected, 1, request), request)
    assert level["missed"] > 0 and 0 < level["qps"] < 10_000
    # The warm-up's schedule alone is a backlog the window spends its time on.
    assert level["warmup_queries"] > 0 and level["outcomes"]["ok"] == level["queries"]


def test_a_client_process_that_dies_is_said_and_its_queries_not_counted() -> None:
    import multiprocessing
    import os

    ctx = multiprocessing.get_context("spawn")
    process = ctx.Process(target=os._exit, args=(3,))
    process.start()
    process.join(30)
    finals, error = collect_finals(ctx.Queue(), [process], within_s=30)
    assert finals == {} and error is not None and "exit code 3" in error


class Interrupted(Exception):
    """What the test's alarm raises in the main thread, as docbench's SIGTERM handler does."""


def test_a_signal_cuts_a_level_short_at_once(expected: dict) -> None:
    """A level interrupted 2 s into a 120 s window (the run's SIGTERM or Ctrl-C) ends within
    seconds, its client processes gone: none is waited for until the end of its window."""
    import multiprocessing
    import signal
    import time

    def interrupt(_signum: int, _frame: object) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    began = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, 2.0)
        with pytest.raises(Interrupted):
            run_level(None, {}, ["-"] * 5, expected, 4, short([4], duration_s=120.0, max_processes=4))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - began < 12  # was 2 s + 10 s per process
    assert not multiprocessing.active_children()


def test_seeded_order_and_target_rate_are_exact_on_the_echo(expected: dict) -> None:
    """Open loop at 100 queries/s over 2 clients for 1.2 s (0.2 s warm-up): each client sends
    its scheduled queries in its seeded order, so the counts per query are known in advance."""
    request = short([2], rate=100.0, seed=7, warmup_s=0.2, duration_s=1.0)
    level = summarize(run_level(None, {}, ["-"] * 5, expected, 2, request), request)
    interval = 2 / 100.0
    counts = dict.fromkeys(QUERY_NUMBERS, 0)
    for client in range(2):
        order = client_order(7, client)
        offset = interval * client / 2
        sent = 0
        while offset + sent * interval < 1.2 - 1e-9:
            number = order.choice(QUERY_NUMBERS)
            if offset + sent * interval >= 0.2 - 1e-9:
                counts[number] += 1
            sent += 1
    assert {q["query"]: q["queries"] for q in level["per_query"]} == counts
    assert level["outcomes"]["ok"] == sum(counts.values()) == level["queries"]
    assert level["qps"] == pytest.approx(100.0, rel=0.05)
    assert level["latency_ms"]["max_ms"] < 1000  # from the intended start, and the echo is instant
    assert level["warning"] is None  # dozens of answers per client


def test_a_window_shorter_than_a_few_rounds_is_warned_with_a_duration() -> None:
    """64 clients on a 1.3 s query share two cores: each answer takes about 80 s, and a 15 s
    window sees a handful. The level says so, with the --duration that would see 3 rounds."""
    warning = short_window(completed=5, clients=64, mean_ms=80_000.0, duration_s=15.0)
    assert warning is not None and "5 answers from 64 clients" in warning
    assert "--duration 240 or more" in warning
    assert "several times" in (short_window(0, 16, None, 15.0) or "")
    assert short_window(completed=48, clients=16, mean_ms=900.0, duration_s=15.0) is None


def test_cli_runs_levels_writes_and_reports_them(
    real_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from docbench.workloads.analytics import concurrency

    monkeypatch.setattr(concurrency, "CEILING_WINDOW_S", 0.5)  # the ceiling's window is capped
    data = tmp_path / "data"
    data.mkdir()
    for path in real_files_of(real_data_dir):
        shutil.copy(path, data / path.name)
    out = tmp_path / "results"
    args = [
        "run",
        "analytics",
        "--systems",
        EMBEDDED.system,
        "--variants",
        EMBEDDED.variant,
        "--data",
        str(data),
    ]
    args += ["--results", str(out), "--tries", "1", "--clients", "1,2", "--duration", "1", "--warmup", "0.2"]
    outcome = CliRunner().invoke(main, args)
    assert outcome.exit_code == 0, outcome.output
    [document] = results.load_results([out])
    results.validate({k: v for k, v in document.items() if k != "_path"})
    record = document["concurrency"]
    assert [level["clients"] for level in record["levels"]] == [1, 2]
    assert [level["clients"] for level in record["ceiling"]] == [1, 2]
    assert (record["duration_s"], record["ceiling_duration_s"], record["ceiling_warmup_s"]) == (1, 0.5, 0.2)
    # The driver's ceiling is far above an engine's queries, here too.
    assert all(c["qps"] > level["qps"] for c, level in zip(record["ceiling"], record["levels"], strict=True))
    assert "Concurrent clients" in outcome.output and "driver ceiling" in outcome.output


def test_cli_refuses_a_bad_number_of_clients() -> None:
    outcome = CliRunner().invoke(main, ["run", "analytics", "--clients", "4,0"])
    assert outcome.exit_code == 2 and "at least 1" in outcome.output
