"""DuckDB 1.1.3 (JSONBench's DuckDB) against the real engine in the venv `docbench setup
duckdb113` makes, no mocks: the shared cases (tests/analytics_suite.py), the version behaviour the
system exists for (a row group holding a document of 4 KiB or more is stored uncompressed) and
the life of its worker process (gone after stop, after a run, with a killed or interrupted
docbench)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from analytics_suite import (
    AnalyticsAdapterSuite,
    EmbeddedCases,
    SQLTableCases,
    gone,
    processes_under,
    real_files_of,
    same_documents,
    work_dir,
)
from hard_lines import NOT_JSON, ODD_BUT_VALID, pick

from docbench import results
from docbench.contracts.common import BatchRejected
from docbench.core import paths
from docbench.dataset.manifest import read_manifest
from docbench.dataset.reader import dataset_files
from docbench.systems import open_adapter
from docbench.systems.duckdb113.analytics import ROW_GROUP_COMPRESSION, DuckDB113Analytics
from docbench.systems.duckdb113.client import WorkerError
from docbench.systems.duckdb113.engine import DuckDB113Engine
from docbench.workloads.analytics.runner import RunRequest, run_analytics
from docbench.workloads.load import load_files

_AVAILABILITY = DuckDB113Engine.availability()
pytestmark = pytest.mark.skipif(
    not _AVAILABILITY.ok, reason=f"{_AVAILABILITY.reason} ({_AVAILABILITY.install_hint})"
)

# What JSONBench's read_ndjson_objects (DuckDB 1.1.3) refuses. Lines that are JSON but no object
# ([1, 2], "a string") it takes: docbench's load driver refuses those before any engine.
REFUSED = pick(*NOT_JSON, "lone_surrogate", "utf8_encoded_surrogate", "byte_order_mark")
# Valid JSON objects DuckDB 1.1.3 stores; the answers must still match the oracle after them.
ACCEPTED = pick(*ODD_BUT_VALID, "deep_1000", "duplicate_keys")


class TestDuckDB113(EmbeddedCases, SQLTableCases, AnalyticsAdapterSuite):
    system_name = "duckdb113"
    engine_type = DuckDB113Engine
    adapter_type = DuckDB113Analytics
    variant_roles = [("jsonbench", "default")]
    runs_by_default = False
    has_setup_script = True
    refused = REFUSED
    accepted = ACCEPTED
    slow_query = "SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b"
    cancel_error = WorkerError
    cancel_match = "(?i)interrupt"
    cancel_within = 10

    # ----- the shared cases' hooks --------------------------------------------------------
    def check_version(self, version):
        assert version == "1.1.3"

    def check_registration(self):
        assert DuckDB113Analytics.load_batch_size == 100_000  # JSONBench's `split -l 100000`
        assert DuckDB113Engine.install_hint == "docbench setup duckdb113"

    def check_stored(self, system, lines):
        same_documents(
            [row[0] for row in system.engine.connection().execute("SELECT j FROM bluesky").rows], lines
        )

    def stored_text(self, system, did):
        row = (
            system.engine.connection()
            .execute("SELECT j ->> '$.text' FROM bluesky WHERE (j ->> '$.did') = ?", [did])
            .fetchone()
        )
        return row[0]

    def check_outcome(self, number, outcome):
        super().check_outcome(number, outcome)  # DuckDB's profiling latency
        assert outcome.engine_memory is None  # the worker's RSS is the memory figure

    def check_explain(self, system, number, plan):
        assert plan and "bluesky" in plan.lower()

    def check_session(self, system, session):
        # the session's worker opened the file read-only
        with pytest.raises(WorkerError, match="read-only"):
            session.worker.execute("INSERT INTO bluesky VALUES ('{}')")

    def check_storage(self, system, size):
        # JSONBench's total_size.sh: distinct blocks x block size is both total and data
        assert size.total == size.data == size.detail["jsonbench_num_blocks"] * size.detail["block_size"]
        assert size.index == 0
        assert size.detail["duckdb"] == "1.1.3"
        assert sum(size.detail["row_groups_by_compression"].values()) >= 1
        assert size.on_disk and size.on_disk >= size.total

    def check_one_loaded(self, system):
        assert not (system.engine.workdir / "load-chunk.ndjson").exists()

    # ----- DuckDB 1.1.3's own -------------------------------------------------------------
    def test_refusal_messages_are_duckdbs(self, loaded: DuckDB113Analytics):
        loader = loaded.loader()
        try:
            with pytest.raises(BatchRejected, match="Malformed JSON"):
                loader.load_batch([self.refused["invalid_json"]])
            # DuckDB's words; the place in docbench's chunk file (its line one too high) is not
            # kept: the driver records the file and line
            with pytest.raises(BatchRejected) as refused:
                loader.load_batch([self.refused["lone_surrogate"]])
            assert str(refused.value) == (
                "Invalid Input Error: Malformed JSON at byte 37 of the document: no low surrogate in string."
            )
        finally:
            loader.close()


# ----- the version behaviour the system exists for --------------------------------------------


def _event(number: int, size: int | None = None) -> bytes:
    """A small like event; with ``size``, a post padded to exactly ``size`` bytes."""
    event: dict = {
        "did": f"did:plc:{number % 5000:024d}",
        "time_us": 1732206349000000 + number,
        "kind": "commit",
        "commit": {"operation": "create", "collection": "app.bsky.feed.like", "rkey": f"3lbn{number:09d}"},
    }
    line = json.dumps(event, separators=(",", ":"))
    if size is not None:
        event["text"] = "x" * (size - len(line) - len(',"text":""'))
        line = json.dumps(event, separators=(",", ":"))
    assert size is None or len(line.encode()) == size
    return line.encode()


def test_a_row_group_with_a_4_kib_document_is_stored_uncompressed(tmp_path: Path):
    """DuckDB 1.1.3's compression analysis (FSST, dictionary) gives up on a whole row group
    (122,880 rows) when one string is 4,096 bytes or longer: that row group is stored
    uncompressed. A document of 4,095 bytes leaves its row group compressed, and the current
    DuckDB (the duckdb system) compresses both."""
    lines = [_event(n, 4096 if n == 1000 else 4095 if n == 123_000 else None) for n in range(132_880)]
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"\n".join(lines) + b"\n")
    base = work_dir("duckdb113-rowgroups")
    system = open_adapter("duckdb113", "analytics", base / "old")
    current = open_adapter("duckdb", "analytics", base / "current")
    try:
        system.create()
        assert load_files(system.loader(), [data], system.load_batch_size).refused_count == 0
        groups = system.engine.connection().execute(ROW_GROUP_COMPRESSION).rows
        assert [g[0] for g in groups] == [0, 1]
        assert groups[0][1] == "Uncompressed"  # the 4,096-byte document's row group
        assert groups[1][1] != "Uncompressed"  # the 4,095-byte document's
        assert system.storage().detail["row_groups_by_compression"] == {"Uncompressed": 1, groups[1][1]: 1}
        current.create()
        load_files(current.loader(), [data], current.load_batch_size)
        current.finish_load()
        compressions = current.engine.connection().execute(
            "SELECT DISTINCT compression FROM pragma_storage_info('documents') "
            "WHERE column_name = 'doc' AND segment_type <> 'VALIDITY'"
        )
        assert "Uncompressed" not in {row[0] for row in compressions.fetchall()}
        assert current.storage().data < system.storage().data / 2
    finally:
        for each in (system, current):
            each.release()
            each.engine.stop()
        subprocess.run(["rm", "-rf", str(base)], check=False)


# ----- the worker process ------------------------------------------------------------------


def test_availability_names_the_missing_venv_and_its_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DOCBENCH_OPT", str(tmp_path / "opt"))
    availability = DuckDB113Engine.availability()
    assert not availability.ok
    assert availability.reason == f"no DuckDB 1.1.3 venv at {tmp_path / 'opt' / 'duckdb-1.1.3'}"
    assert availability.install_hint == "docbench setup duckdb113"


def test_the_worker_is_gone_after_release_stop_and_session_close(tmp_path: Path):
    system = open_adapter("duckdb113", "analytics", tmp_path / "work")
    system.create()
    first = system.engine.worker_pid()
    assert first is not None and not gone(first)
    assert system.count() == 0 and system.engine.worker_pid() == first  # one worker, reused
    system.release()
    assert gone(first) and system.engine.worker_pid() is None
    assert system.count() == 0  # started again on use
    second = system.engine.worker_pid()
    assert second is not None and second != first
    system.engine.stop()
    system.engine.stop()  # twice is safe
    assert gone(second)
    session = DuckDB113Analytics.open_session(system.session_spec())
    (pid,) = session.engine_pids()
    assert not gone(pid)
    assert session.execute(1, "SELECT count() FROM bluesky").rows == [(0,)]
    session.close()
    assert gone(pid)
    assert not (tmp_path / "work" / "docbench-server.pid").exists()


OWNER = """
import signal, sys, time
# Ctrl-C as a terminal delivers it, whatever this process inherited: a shell's background job
# (the tests started by `cmd &` without job control) ignores SIGINT, and so would its children.
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
from docbench.systems import open_adapter
system = open_adapter("duckdb113", "analytics", Path(sys.argv[1]))
system.create()
print(system.engine.worker_pid(), flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_the_worker_ends_with_docbench(tmp_path: Path, sig: int):
    """Ctrl-C: docbench stops its children by PID on the way out; SIGKILL: the kernel's death
    signal ends the worker; the next start in the directory finds nothing left to stop."""
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(tmp_path / "work")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # (Ctrl-C's traceback)
        text=True,
    )
    try:
        assert owner.stdout is not None
        pid = int(owner.stdout.readline())
        assert not gone(pid)
        owner.send_signal(sig)
        # Generous: on Ctrl-C the worker closes (checkpoints) its file before it exits, and an
        # fsync behind another test's gigabytes of writes took more than 30 s once in CI.
        owner.wait(120)
        deadline = time.monotonic() + 15
        while not gone(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert gone(pid)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
    again = open_adapter("duckdb113", "analytics", tmp_path / "work")
    assert again.count() == 0  # the file and its table, opened by a new worker
    again.engine.stop()


def test_a_run_checks_every_answer_and_leaves_no_worker(
    real_data_dir: Path, generated_6k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """`docbench run analytics --systems duckdb113` (the broad runner test runs the duckdb
    system) on the real events, 6,000 generated documents with their hard documents and lines
    that are not documents: each refused line alone is lost, with DuckDB's reason, JSONBench's
    size, every answer the oracle's, the query workers' memory measured, no worker left after."""
    home = work_dir("duckdb113-home")
    data = tmp_path / "data"
    data.mkdir()
    for path in real_files_of(real_data_dir):
        (data / path.name).write_bytes(path.read_bytes())
    for path in dataset_files(generated_6k):
        (data / f"generated_{path.name}").write_bytes(path.read_bytes())
    good = (real_data_dir / "jsonbench_file_0001_first1000.jsonl").read_bytes().splitlines()[:5]
    dirty = [
        good[0],
        good[1][: len(good[1]) // 2],
        good[2],
        b"[1, 2]",
        good[3].replace(b'"did"', b'"d\xffid"'),
    ]
    (data / "dirty_0001.json").write_bytes(b"\n".join(dirty) + b"\n")
    manifest = read_manifest(generated_6k)
    assert manifest is not None
    surrogates = {
        (f"generated_{h.file}", h.line) for h in manifest.hard_documents if h.kind == "lone_surrogate"
    }
    assert surrogates  # the test means something
    monkeypatch.setenv("DOCBENCH_OPT", str(paths.opt_dir()))  # the installed venv, whatever the home
    monkeypatch.setenv("DOCBENCH_HOME", str(home))
    try:
        request = RunRequest(
            system_names=["duckdb113"],
            data_dir=data,
            results_dir=tmp_path / "results",
            tries=2,
            timeout=120.0,
            quiet=True,
        )
        assert run_analytics(request) == 0
        (document,) = results.load_results([tmp_path / "results"])
        assert document["complete"] and document["variant"] == "jsonbench"
        assert document["version"] == "1.1.3"
        log = (tmp_path / "results" / document["load_errors"]["log"]).read_text().splitlines()
        refused = {(name, int(line)): reason for name, line, reason in (e.split("\t", 2) for e in log)}
        assert set(refused) == surrogates | {("dirty_0001.json", n) for n in (2, 4, 5)}
        assert all("no low surrogate in string" in refused[key] for key in surrogates)
        assert not any("load-chunk" in reason for reason in refused.values())
        assert document["num_loaded_documents"] == document["dataset_size"] - len(refused)
        assert [a["status"] for a in document["answers"]] == ["ok"] * 5, document["answers"]
        assert document["total_size"] == document["storage"]["detail"]["jsonbench_num_blocks"] * 262_144
        assert all(rss and rss > 0 for tries in document["memory_usage"] for rss in tries)
        assert processes_under(home) == []
    finally:
        subprocess.run(["rm", "-rf", str(home)], check=False)
