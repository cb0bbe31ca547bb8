"""Managed servers cannot outlive docbench, and one run per work directory (issue #13 part A).

Real runs of the ``docbench`` command on a real SQL server (conftest's SQL_SERVER role:
PostgreSQL, whose postmaster, data directory and pg_stat_activity the helpers know; and every
managed server for the death signal): killed with SIGKILL mid-load, hung up (SIGHUP),
terminated (SIGTERM), started twice on one home, and started over a stale pid file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import QUICK, SQL_SERVER, SQL_SERVER_OTHER, managed_server_systems

from docbench.core.ownership import claim_directory
from docbench.servers import managed as server
from docbench.servers.managed import PID_FILE_NAME, boot_id, process_cmdline, process_start_time
from docbench.systems import engine_class

ROOT = Path(__file__).resolve().parents[1]
DOCS = 100_000
VARIANT_DIR = f"{SQL_SERVER.system}-{SQL_SERVER.variant}"
RUN = ["run", "--systems", SQL_SERVER.system, "--variants", SQL_SERVER.variant, "--tries", "1"]
# A result another run wrote (format 1, the quick engine's): its registry name in `system_name`.
OTHER_RESULT = ROOT / "tests" / "fixtures" / "format1" / "sqlite.jsonb.1m.json"


# ----- fixtures ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data_100k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100,000 generated documents: a load of a few seconds, long enough to be killed in."""
    from docbench.dataset.generate import generate_dataset

    out = tmp_path_factory.mktemp("bluesky-100k")
    generate_dataset(DOCS, out, seed=13, jobs=2, quiet=True)
    return out


@pytest.fixture
def base() -> Iterator[Path]:
    """A fresh directory the unprivileged server user can reach (not pytest's 0700 tmp); at
    the end, whatever a failed test left running there is killed and the directory removed."""
    path = Path(tempfile.mkdtemp(prefix="docbench-lifecycle-", dir="/var/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for pid in processes_of(path):
            server.stop_process(pid, process_start_time(pid), signal.SIGKILL, 10)
        shutil.rmtree(path, ignore_errors=True)


# ----- helpers -------------------------------------------------------------------------------
def url_scheme(system: str) -> str:
    """The scheme of a system's URLs (that of its documented example)."""
    example = engine_class(system).url_example
    assert example, system
    return example.partition("://")[0]


def processes_of(directory: Path) -> list[int]:
    """Live processes whose command line names ``directory`` or which run inside it (server
    backends change their titles but keep their data directory as working directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        with contextlib.suppress(OSError):
            cwd = os.readlink(entry / "cwd")
            if process_start_time(pid) is not None and (
                str(directory) in process_cmdline(pid) or cwd.startswith(str(directory))
            ):
                found.append(pid)
    return found


def wait_for(condition, timeout: float, what: str):  # noqa: ANN001, ANN201 - test helper
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


class Docbench:
    """``docbench`` as a user starts it, in its own home; output kept in files."""

    def __init__(self, base: Path, *args: str, name: str = "run") -> None:
        self.home = base / "home"
        self.out = base / f"{name}.out"
        self.err = base / f"{name}.err"
        env = {**os.environ, "DOCBENCH_HOME": str(self.home), "DOCBENCH_RESULTS": str(base / "results")}
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "docbench.cli", *args],
                cwd=base,
                env=env,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
            )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait(self, timeout: float = 600) -> int:
        return self.proc.wait(timeout=timeout)

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def output(self) -> str:
        return self.out.read_text(errors="replace") + self.stderr()


def postmaster_of(home: Path) -> int | None:
    """The PID of the postmaster serving ``home``'s pglz cluster (`postgres -D .../pgdata`)."""
    data_dir = f"{home}/work/{VARIANT_DIR}/pgdata"
    for pid in processes_of(home):
        if data_dir in process_cmdline(pid):
            return pid
    return None


def loading(home: Path) -> bool:
    """Whether docbench's COPY into the cluster has started (the load is under way)."""
    import psycopg

    workdir = home / "work" / VARIANT_DIR
    try:
        port = int((workdir / "port").read_text())
        password = (workdir / "password").read_text().strip()
        with psycopg.connect(
            host="127.0.0.1",
            port=port,
            user="docbench",
            dbname="postgres",
            password=password,
            connect_timeout=2,
        ) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'COPY %%FROM STDIN%%'"
            ).fetchone()
            return bool(row and row[0])
    except (OSError, ValueError, psycopg.Error):
        return False


def started_load(run: Docbench) -> int:
    """Wait until ``run`` is loading into its postmaster; return the postmaster's PID."""
    wait_for(lambda: loading(run.home) or run.proc.poll() is not None, 240, "the load to start")
    assert run.proc.poll() is None, f"docbench ended before the load:\n{run.output()}"
    pid = postmaster_of(run.home)
    assert pid, "no postmaster found"
    return pid


def last_result(base: Path) -> dict:
    files = sorted(
        (base / "results").glob(f"analytics.{SQL_SERVER.system}.*.json"), key=lambda p: p.stat().st_mtime
    )
    assert files, "no result file written"
    return json.loads(files[-1].read_text())


def assert_complete_and_exact(run: Docbench, base: Path) -> None:
    assert run.wait() == 0, run.output()
    result = last_result(base)
    assert result["complete"], result.get("error")
    assert result["num_loaded_documents"] == DOCS


# ----- (a) SIGKILL of docbench mid-load ------------------------------------------------------
def test_postmaster_dies_with_a_killed_docbench_and_resume_completes(data_100k: Path, base: Path) -> None:
    """kill -9 of docbench during the load: the kernel's death signal stops the postmaster by
    itself (no other docbench runs meanwhile), and `--resume` then completes with every
    document; nothing of the home is left running."""
    run = Docbench(base, *RUN, "--data", str(data_100k))
    postmaster = started_load(run)
    os.kill(run.pid, signal.SIGKILL)
    run.wait(30)
    wait_for(lambda: not processes_of(run.home), 60, "the orphaned postmaster to exit by itself")
    assert process_start_time(postmaster) is None

    # Another run's result in the same results directory is not reported by this one.
    (base / "results").mkdir(exist_ok=True)
    shutil.copy(OTHER_RESULT, base / "results")
    other_system = json.loads(OTHER_RESULT.read_text())["system_name"]
    assert other_system != SQL_SERVER.system
    resume = Docbench(base, *RUN, "--data", str(data_100k), "--resume", name="resume")
    assert_complete_and_exact(resume, base)
    assert "left running" not in resume.stderr()  # there was nothing to clean up
    assert other_system not in resume.output()
    assert not processes_of(run.home)


def test_a_postmaster_that_survived_a_killed_docbench_is_stopped_by_the_next_run(
    data_100k: Path, base: Path
) -> None:
    """A postmaster that outlives a SIGKILLed docbench (here: stopped with SIGSTOP, so the
    death signal waits; as on a system without one) is the server the pid file records: the
    next `--resume` stops it, says so, and completes with every document."""
    run = Docbench(base, *RUN, "--data", str(data_100k))
    postmaster = started_load(run)
    os.kill(postmaster, signal.SIGSTOP)
    os.kill(run.pid, signal.SIGKILL)
    run.wait(30)
    time.sleep(2)
    assert process_start_time(postmaster) is not None, "the postmaster did not outlive docbench"

    resume = Docbench(base, *RUN, "--data", str(data_100k), "--resume", name="resume")
    assert_complete_and_exact(resume, base)
    assert (
        f"stopping server PID {postmaster} left running in {run.home}/work/{VARIANT_DIR}" in resume.stderr()
    )
    assert process_start_time(postmaster) is None
    assert not processes_of(run.home)


# ----- (b) SIGHUP / SIGTERM ------------------------------------------------------------------
@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM], ids=["SIGHUP", "SIGTERM"])
def test_hangup_and_terminate_stop_the_servers_and_exit_128_plus_signal(
    signum: signal.Signals, data_100k: Path, base: Path
) -> None:
    """SIGHUP (a dropped ssh session) and SIGTERM end the run like Ctrl-C: one line naming the
    signal, exit status 128+signal, and the postmaster already stopped by docbench when it
    exits (not left to its death signal)."""
    run = Docbench(base, *RUN, "--data", str(data_100k))
    postmaster = started_load(run)
    os.kill(run.pid, signum)
    assert run.wait(180) == 128 + signum
    assert process_start_time(postmaster) is None, "docbench exited before its postmaster"
    assert not processes_of(run.home)
    lines = [line for line in run.stderr().splitlines() if signum.name in line]
    assert len(lines) == 1 and "stopping the servers" in lines[0], run.stderr()
    assert "Traceback" not in run.stderr()


# ----- (c) one run per home ------------------------------------------------------------------
def test_a_second_run_on_the_same_home_stops_at_once_naming_the_first(data_100k: Path, base: Path) -> None:
    """Two runs on one DOCBENCH_HOME: the second exits non-zero at once and names the first
    run's PID and command; the first is not disturbed and completes."""
    first = Docbench(base, *RUN, "--data", str(data_100k), name="first")
    started_load(first)
    began = time.monotonic()
    second = Docbench(base, *RUN, "--data", str(data_100k), name="second")
    status = second.wait(60)
    assert status not in (0, None)
    assert time.monotonic() - began < 30
    message = second.stderr()
    assert f"PID {first.pid}" in message and f"docbench run --systems {SQL_SERVER.system}" in message, message
    assert_complete_and_exact(first, base)
    assert len(list((base / "results").glob("*.json"))) == 1
    assert not processes_of(first.home)


def test_the_holder_is_named_without_the_password_of_a_url(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a run holds the home (here: this process, run as `docbench run ... --mariadb-url
    <url with a password>`, a SQL server's URL), any other workload's run stops before it does
    anything, naming the holder's PID and command -- with the URL hidden, in the message and in
    the lock file."""
    from docbench.core import runlock

    secret = "s3cret-pw"
    other, server = SQL_SERVER_OTHER.system, SQL_SERVER.system
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "docbench",
            "run",
            "--systems",
            other,
            f"--{other}-url",
            f"{url_scheme(other)}://docbench:{secret}@127.0.0.1:3306/db",
            f"--{server}-url={url_scheme(server)}://u:{secret}@127.0.0.1/x",
        ],
    )
    work = base / "home" / "work"
    with runlock.hold(work) as lock:
        assert secret not in lock.read_text()
        for workload in ("storage", "updates", "throughput"):
            blocked = Docbench(base, "run", workload, "--systems", QUICK.system, name=workload)
            assert blocked.wait(60) == runlock.BUSY_EXIT_STATUS
            message = blocked.stderr()
            assert f"PID {os.getpid()}" in message and f"--{other}-url '***'" in message, message
            assert secret not in message
        assert not (base / "results").exists() and sorted(p.name for p in work.iterdir()) == ["run.lock"]
    again = Docbench(
        base,
        "run",
        "storage",
        "--systems",
        QUICK.system,
        "--rows",
        "100",
        "--sizes",
        "1000",
        "--entropy",
        "random",
        name="after",
    )
    assert again.wait(300) == 0, again.output()


def test_the_lock_is_released_by_a_killed_run(data_100k: Path, base: Path) -> None:
    """The lock is the kernel's (flock): a SIGKILLed run leaves no lock behind."""
    run = Docbench(base, *RUN, "--data", str(data_100k))
    started_load(run)
    os.kill(run.pid, signal.SIGKILL)
    run.wait(30)
    wait_for(lambda: not processes_of(run.home), 60, "the postmaster to exit")
    again = Docbench(base, *RUN, "--data", str(data_100k), name="again")
    assert_complete_and_exact(again, base)


# ----- (d) a stale pid file ------------------------------------------------------------------
@pytest.mark.parametrize("same_start", [True, False], ids=["same-start-time", "other-start-time"])
def test_a_stale_pid_file_naming_an_unrelated_process_leaves_it_alone(
    same_start: bool, real_data_dir: Path, base: Path
) -> None:
    """The pid file names a PID that is now an unrelated live process (a `sleep`), recorded
    with its very start time or another one: it is not signalled, the file is replaced, and
    the run completes."""
    workdir = base / "home" / "work" / VARIANT_DIR
    claim_directory(workdir)  # the work directory of the docbench that left the pid file
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        started = wait_for(lambda: process_start_time(sleeper.pid), 10, "sleep to start")
        (workdir / PID_FILE_NAME).write_text(
            json.dumps(
                {
                    "boot_id": boot_id(),
                    "owner": {"pid": 1, "start_time": -1},
                    "stop_signal": 2,
                    "processes": [
                        {
                            "pid": sleeper.pid,
                            "start_time": started if same_start else started - 7,
                            "command": f"/usr/lib/postgresql/16/bin/postgres -D {workdir}/pgdata",
                        }
                    ],
                }
            )
        )
        run = Docbench(base, *RUN, "--data", str(real_data_dir))
        assert run.wait() == 0, run.output()
        assert sleeper.poll() is None, "docbench signalled an unrelated process"
        assert process_start_time(sleeper.pid) == started
        assert f"PID {sleeper.pid} is now another process" in run.stderr()
        assert not (workdir / PID_FILE_NAME).exists()  # replaced, then removed at the stop
        assert not processes_of(run.home)
    finally:
        sleeper.kill()
        sleeper.wait()


_NO_COMMAND_LINE = textwrap.dedent("""
    import ctypes, os
    # /bin/cat with an empty argv: a live process whose /proc/PID/cmdline is empty, as that of
    # an exiting process is (its memory, the command line with it, goes first).
    argv = (ctypes.c_char_p * 1)(None)
    ctypes.CDLL(None).execve(b"/bin/cat", argv, argv)
    os._exit(127)
""")


def test_a_recorded_process_whose_command_line_is_gone_is_waited_for(tmp_path: Path, capsys) -> None:
    """A process of the pid file that is still the recorded one (same boot, PID and start time)
    but has no command line any more is exiting -- e.g. the DuckDB worker of a query process
    the runner has just killed (duckdb113), reaped by the next query's worker start: it is
    stopped through its pidfd and waited for, not called "another process" and left alone."""
    reader, writer = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", _NO_COMMAND_LINE], stdin=reader)
    os.close(reader)
    try:
        # (its command line reads empty for a moment before the first exec too: wait for cat)
        comm = Path(f"/proc/{child.pid}/comm")
        started = wait_for(
            lambda: comm.read_text().strip() == "cat" and process_start_time(child.pid), 10, "exec"
        )
        assert process_cmdline(child.pid) == ""
        pid_file = tmp_path / PID_FILE_NAME
        pid_file.write_text(
            json.dumps(
                {
                    "boot_id": boot_id(),
                    "owner": {"pid": 1, "start_time": -1},
                    "stop_signal": int(signal.SIGTERM),
                    "processes": [{"pid": child.pid, "start_time": started, "command": f"worker {tmp_path}"}],
                }
            )
        )
        server.reap_leftovers(pid_file)
        assert child.wait(5) == -signal.SIGTERM
        assert not pid_file.exists()
        assert "another process" not in capsys.readouterr().err
    finally:
        os.close(writer)
        if child.poll() is None:
            child.kill()
            child.wait()


# ----- every engine's real server gets the death signal --------------------------------------
_HOLDER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from docbench.systems import engine_class

    name, workdir = sys.argv[1], Path(sys.argv[2])
    engine = engine_class(name)(workdir)
    engine.start()
    print(json.dumps(engine.server_pids()), flush=True)
    time.sleep(3600)
""")


@pytest.mark.parametrize("name", managed_server_systems())
def test_every_managed_server_dies_with_the_process_that_started_it(name: str, base: Path) -> None:
    """A process that started a managed server is killed with SIGKILL: the server -- the
    process that serves, also when a launcher started it (Elasticsearch) -- stops by itself."""
    from docbench.systems import engine_class

    availability = engine_class(name).availability()
    if not availability.ok:
        pytest.skip(f"{name}: {availability.reason}")
    workdir = base / "work" / name
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, name, str(workdir)],
        cwd=base,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = holder.stdout.readline()
        assert line, holder.stderr.read()
        pids = json.loads(line)
        # The main process is alive (a server's short-lived children, such as PostgreSQL's
        # startup or autovacuum workers, may be gone by the time they are looked at).
        assert pids and process_start_time(pids[0])
        # The pid files (one per server: FerretDB's and its PostgreSQL's) record the servers
        # so that a later docbench would recognise them: same start time, a command line naming
        # the work directory. (PostgreSQL's backends are not recorded: they die with it.)
        recorded = [
            entry
            for path in sorted(workdir.rglob(PID_FILE_NAME))
            for entry in json.loads(path.read_text())["processes"]
        ]
        assert pids[0] in {entry["pid"] for entry in recorded}
        assert {entry["pid"] for entry in recorded} <= set(pids)
        for entry in recorded:
            assert entry["start_time"] == process_start_time(entry["pid"])
            assert str(workdir) in process_cmdline(entry["pid"])
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(30)
        wait_for(
            lambda: not any(process_start_time(pid) for pid in pids),
            120,
            f"{name} ({pids}) to stop after its parent died",
        )
        wait_for(lambda: not processes_of(workdir), 60, f"every process of {workdir} to end")
    finally:
        with contextlib.suppress(ProcessLookupError):
            holder.kill()
        holder.wait()


_FORKED_WORKER = textwrap.dedent("""
    import multiprocessing, os, sys, time
    from docbench.core.runlock import exit_on_signals

    def sleep(_):
        time.sleep(60)

    if __name__ == "__main__":
        exit_on_signals()
        context = multiprocessing.get_context(sys.argv[1])
        pool = context.Pool(1, initializer=exit_on_signals)  # (as a spawned docbench import does)
        pool.map_async(sleep, [0])
        time.sleep(1)
        pool.terminate()  # SIGTERM to the worker, which inherited the run's handler
        pool.join()
        print("parent done", flush=True)
""")


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_a_pool_worker_terminated_by_sigterm_does_not_speak_for_the_run(
    start_method: str, tmp_path: Path
) -> None:
    """A multiprocessing worker has docbench's SIGTERM handler (inherited when forked, installed
    again by its import of docbench when spawned): terminated by its pool, it dies by the signal
    quietly instead of printing "SIGTERM received: stopping the servers this run started" in the
    middle of a run that goes on."""
    script = tmp_path / "pool.py"  # (a file: spawned workers import the main module)
    script.write_text(_FORKED_WORKER)
    process = subprocess.run(
        [sys.executable, str(script), start_method], capture_output=True, text=True, timeout=60
    )
    assert process.returncode == 0, process.stderr
    assert process.stdout.strip() == "parent done"
    assert "received" not in process.stderr
