"""End-to-end tests of `docbench run` (the analytics workload) against the real engines."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest
from analytics_suite import processes_under
from conftest import (
    DOCUMENT_SERVER,
    EMBEDDED,
    QUICK,
    SQL_SERVER,
    SQL_SERVER_OTHER,
    broad_systems,
    managed_server_systems,
)

from docbench import results
from docbench.dataset.reader import dataset_files
from docbench.systems import REGISTERED, adapter_variants, engine_class
from docbench.workloads.analytics import runner
from docbench.workloads.analytics.concurrency import ConcurrencyRequest
from docbench.workloads.analytics.runner import RunRequest, run_analytics

# Each test's engines and kept results live in a fresh DOCBENCH_HOME of its own.
pytestmark = pytest.mark.usefixtures("own_home")

TRUSTED = {"ok", "precision"}


# Systems with documented defects that make "every answer correct" untrue by design; their
# own tests assert the defects are detected. (None at the moment: FerretDB 2 answers right.)
KNOWN_DEFECTS: set[str] = set()


def available_systems() -> list[str]:
    """The systems that can run here, but those that are another version of one (their smoke
    tests cover them: tests/test_system_elasticsearch.py)."""
    return [name for name in REGISTERED if name in broad_systems() and engine_class(name).availability().ok]


@pytest.fixture
def real_events(real_data_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "real"
    target.mkdir()
    for path in sorted(real_data_dir.glob("*.jsonl")):
        shutil.copy(path, target / path.name)
    return target


def run(
    data_dir: Path, results_dir: Path, systems: list[str], expect_exit: int = 0, **kwargs: object
) -> list[dict]:
    request = RunRequest(
        system_names=systems,
        data_dir=data_dir,
        results_dir=results_dir,
        tries=kwargs.pop("tries", 2),
        timeout=kwargs.pop("timeout", 120.0),
        quiet=True,
        **kwargs,
    )  # type: ignore[arg-type]
    status = run_analytics(request)
    documents = results.load_results([results_dir])
    assert status == expect_exit, [
        (d["system"], d["variant"], d.get("error"), d.get("query_errors"))
        for d in documents
        if not d.get("complete")
    ]
    for document in documents:
        results.validate({k: v for k, v in document.items() if k != "_path"})
    return documents


def dirty_lines(real_data_dir: Path) -> tuple[list[bytes], dict[int, str], int]:
    """200 real events with three lines that are not documents and one empty line: (the file's
    lines, the line numbers of the bad ones, the number of good ones)."""
    good = (real_data_dir / "jsonbench_file_0001_first1000.jsonl").read_bytes().splitlines()[:200]
    bad = {
        "truncated": good[0][: len(good[0]) // 2],
        "not json": b"this is not json",
        "invalid utf-8": good[1].replace(b'"did"', b'"d\xff\xfeid"', 1),
    }
    lines, bad_line_numbers = [], {}
    for i, line in enumerate(good):
        lines.append(line)
        if i % 50 == 10 and bad:
            kind, text = bad.popitem()
            lines.append(text)
            bad_line_numbers[len(lines)] = kind
        if i == 100:
            lines.append(b"")  # an empty line is not a document
    return lines, bad_line_numbers, len(good)


def refusals_by_file(results_dir: Path, document: dict) -> dict[str, set[int]]:
    """Every refused line of a run, from its log (the result keeps only the first ones)."""
    found: dict[str, set[int]] = {}
    if document["load_errors"]["log"]:
        for entry in (results_dir / document["load_errors"]["log"]).read_text().splitlines():
            name, line, _reason = entry.split("\t", 2)
            found.setdefault(name, set()).add(int(line))
    return found


def test_every_system_answers_right_on_real_generated_and_dirty_events(
    real_events: Path, real_data_dir: Path, generated_6k: Path, tmp_path: Path, own_home: Path, server_url
) -> None:
    """One pass over every system (default and best variants) on one dataset: the real events
    (every one loaded), 6,000 generated documents with their hard documents (each engine
    loads or refuses them, counted), and a file with lines that are not documents (each
    refused alone, nothing else lost). Every answer equals the oracle's. Servers by URL (the
    session's); a variant that reconfigures its server runs in the managed test below."""
    systems = available_systems()
    assert {s for s in broad_systems() if engine_class(s).embedded} <= set(systems)  # always installed
    if os.environ.get("CI"):  # `make test` installs every server
        assert set(managed_server_systems()) <= set(systems)
    data = real_events
    real_names = sorted(p.name for p in data.iterdir())
    for path in dataset_files(generated_6k):
        shutil.copy(path, data / f"generated_{path.name}")
    lines, bad_line_numbers, good_count = dirty_lines(real_data_dir)
    (data / "dirty_0001.json").write_bytes(b"\n".join(lines) + b"\n")
    variants = [
        v.name
        for s in systems
        for v in adapter_variants(s, "analytics")
        if v.role in ("default", "best") and not v.own_server_only
    ]
    urls = {s: url for s in systems if (url := server_url(s))}
    # One try: this pass is about loads, refusals and answers (each try's answer is checked
    # alike); the other tests here run two tries (cold, then hot), the cold restarts their own.
    # Two clients at once for half a second, in one client process (spawned once): every
    # system's sessions under concurrency, every answer checked. No warm-up, so that each
    # client's first query falls in the window even where one query outlasts it.
    # (tests/test_concurrency.py covers the spread over processes and the mechanisms.)
    concurrency = ConcurrencyRequest(
        clients=[2], duration_s=0.5, warmup_s=0.0, timeout_s=60.0, max_processes=1, ceiling=False
    )
    documents = run(
        data,
        tmp_path / "results",
        systems,
        variants=sorted(set(variants)),
        urls=urls,
        tries=1,
        concurrency=concurrency,
    )
    assert len(documents) == sum(
        1
        for s in systems
        for v in adapter_variants(s, "analytics")
        if v.name in variants and not v.own_server_only
    )
    real_count = sum(
        1 for name in real_names for line in (data / name).read_bytes().splitlines() if line.strip()
    )
    generated_count = 6_000
    for document in documents:
        name = f"{document['system']}/{document['variant']}"
        assert document["complete"], name
        if document["system"] in KNOWN_DEFECTS:
            continue
        assert document["dataset_size"] == real_count + generated_count + good_count + len(
            bad_line_numbers
        ), name
        refused = refusals_by_file(tmp_path / "results", document)
        assert refused.pop("dirty_0001.json") == set(bad_line_numbers), (name, document["load_errors"])
        assert not set(refused) & set(real_names), (name, refused)  # every real event loaded
        assert set(refused) <= {f"generated_{p.name}" for p in dataset_files(generated_6k)}
        assert (
            document["num_loaded_documents"] == document["dataset_size"] - document["load_errors"]["count"]
        ), name
        assert document["load_errors"]["count"] == len(bad_line_numbers) + sum(
            len(lines) for lines in refused.values()
        ), name
        statuses = {a["query"]: (a["status"], a["detail"]) for a in document["answers"]}
        assert all(s in TRUSTED for s, _ in statuses.values()), (name, statuses)
        assert all(t is not None for row in document["result"] for t in row), name
        assert document["total_size"] and document["total_size"] > 0, name
        [level] = document["concurrency"]["levels"]
        assert level["error"] is None and level["queries"] > 0, (name, level)
        assert level["outcomes"]["ok"] == level["queries"], (name, level["per_query"])
    assert processes_under(own_home) == []


def test_cold_runs_restart_each_managed_server_kind(
    real_events: Path, tmp_path: Path, own_home: Path
) -> None:
    """docbench's own servers, one of each kind that restarts cheaply (the two SQL servers and
    the document server, the latter with its variant that reconfigures the server): started,
    restarted before every query (a true cold run), stopped, nothing left running. (The search
    engines' restart is tested on their node: tests/test_system_elasticsearch.py; their managed
    runs: the cluster tests.)"""
    wanted = {role.system: role.variant for role in (SQL_SERVER, SQL_SERVER_OTHER, DOCUMENT_SERVER)}
    systems = [s for s in wanted if engine_class(s).availability().ok]
    if os.environ.get("CI"):
        assert systems == list(wanted)
    if not systems:
        pytest.skip("no managed server installed here")
    for system in systems:  # (variant names are shared between systems: one run each)
        run(real_events, tmp_path / "results", [system], variants=[wanted[system]], tries=1)
    documents = results.load_results([tmp_path / "results"])
    assert sorted((d["system"], d["variant"]) for d in documents) == sorted((s, wanted[s]) for s in systems)
    for document in documents:
        name = f"{document['system']}/{document['variant']}"
        assert document["complete"], name
        assert document["num_loaded_documents"] == document["dataset_size"], name
        assert "no-restart-cold-run" not in document["tags"], name
        assert document["cold_method"].startswith("server restarted"), name
        assert all(a["status"] in TRUSTED for a in document["answers"]), (name, document["answers"])
    assert processes_under(own_home) == []


def test_query_timeout_is_recorded_and_the_run_goes_on(generated_6k: Path, tmp_path: Path) -> None:
    documents = run(
        generated_6k,
        tmp_path / "results",
        [QUICK.system, EMBEDDED.system],
        timeout=0.001,
        variants=[QUICK.variant, EMBEDDED.variant],
    )
    assert {d["system"] for d in documents} == {QUICK.system, EMBEDDED.system}
    for document in documents:
        assert document["complete"]
        for q in range(5):
            errors = document["query_errors"][q]
            assert document["result"][q][0] is None
            assert errors[0].startswith("timeout"), errors
            assert document["answers"][q]["status"] == "error"


@pytest.mark.skipif(
    not engine_class(SQL_SERVER.system).availability().ok,
    reason=f"{SQL_SERVER.display_name} server binaries are installed by `make test`",
)
def test_killed_server_is_recorded_restarted_and_next_system_runs(
    real_events: Path, tmp_path: Path, own_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_worker = runner.run_query_in_worker
    real_open_engine = runner.open_engine
    engines: dict[str, object] = {}
    killed: list[int] = []

    def open_engine(name: str, *args: object, **kwargs: object):
        engines[name] = real_open_engine(name, *args, **kwargs)
        return engines[name]

    def kill_server_before_q3(system_name: str, spec: dict, number: int, *args: object):
        if system_name == SQL_SERVER.system and number == 3 and not killed:
            # The server's main process (PostgreSQL's postmaster), as `kill -9` would.
            main = engines[system_name].server_pids()[:1]  # type: ignore[attr-defined]
            assert main and main[0] in processes_under(own_home)  # docbench's own server
            for pid in main:
                os.kill(pid, signal.SIGKILL)
            killed.extend(main)
        return real_worker(system_name, spec, number, *args)

    monkeypatch.setattr(runner, "open_engine", open_engine)
    monkeypatch.setattr(runner, "run_query_in_worker", kill_server_before_q3)
    # A crash is not a measurement: the server's run is incomplete, so the exit status is 1.
    documents = run(
        real_events,
        tmp_path / "results",
        [SQL_SERVER.system, QUICK.system],
        expect_exit=1,
        variants=[SQL_SERVER.variant, QUICK.variant],
    )
    by_system = {d["system"]: d for d in documents}
    assert killed
    server = by_system[SQL_SERVER.system]
    assert server["answers"][2]["status"] == "error"
    assert "crash" in " ".join(e or "" for e in server["query_errors"][2])
    assert server["answers"][3]["status"] in TRUSTED  # restarted for Q4
    assert all(a["status"] in TRUSTED for a in by_system[QUICK.system]["answers"])
    assert server["complete"] is False and by_system[QUICK.system]["complete"] is True
    assert processes_under(own_home) == []


def test_resume_skips_complete_results(real_events: Path, tmp_path: Path) -> None:
    results_dir = tmp_path / "results"
    run(real_events, results_dir, [QUICK.system], variants=[QUICK.variant])
    [path] = list(results_dir.glob("*.json"))
    before = path.stat().st_mtime_ns
    run(
        real_events,
        results_dir,
        [QUICK.system, EMBEDDED.system],
        variants=[QUICK.variant, EMBEDDED.variant],
        resume=True,
    )
    assert path.stat().st_mtime_ns == before
    assert len(list(results_dir.glob("*.json"))) == 2
