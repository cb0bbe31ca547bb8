"""Runs that something damages from outside -- a results directory that fills up, a SIGKILL, a
server killed under the clients, a mistyped option, a password that cuts its URL short -- end
with a non-zero status and one line that says what happened, never with a result that looks
right (issue #30, item 5). On the real engines (conftest's roles): an embedded engine (DuckDB),
the session's SQL server (PostgreSQL) by URL, and one the run starts itself for the server
killed under the clients."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import BY_URL_ONLY, EMBEDDED, QUICK, SEARCH_OTHER, SQL_SERVER

from docbench import results
from docbench.cli import main
from docbench.core import paths
from docbench.results.files import MIN_FREE_BYTES
from docbench.servers.managed import PID_FILE_NAME
from docbench.systems import engine_class
from docbench.workloads.analytics import runner as analytics_runner


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


class Docbench:
    """``docbench`` as a user starts it, in its own home; its output kept in a file."""

    def __init__(self, home: Path, out: Path, *args: str) -> None:
        self.out = out
        env = {
            **os.environ,
            "DOCBENCH_HOME": str(home),
            "DOCBENCH_OPT": str(paths.opt_dir()),
            "PYTHONUNBUFFERED": "1",
        }
        with out.open("wb") as sink:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "docbench.cli", *args],
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    def output(self) -> str:
        return self.out.read_text(errors="replace")

    def stop(self) -> None:
        """SIGTERM (docbench stops the servers it started), then SIGKILL if it does not end."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ----- a. a results directory that fills up during the run ----------------------------------


@contextlib.contextmanager
def small_file_system(path: Path, size: int) -> Iterator[Path]:
    """A tmpfs of ``size`` bytes mounted at ``path`` (a full disk for real, not a permission)."""
    path.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        (pytest.fail if os.environ.get("CI") else pytest.skip)(f"cannot mount a tmpfs: {mounted.stderr}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(directory: Path) -> None:
    """Write to ``directory`` until its file system says it is full."""
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for chunk in (b"x" * (1 << 20), b"x" * 4096, b"x"):
            with contextlib.suppress(OSError):  # ENOSPC: the next, smaller chunk
                while True:
                    os.write(fd, chunk)
    finally:
        os.close(fd)
    with pytest.raises(OSError) as full:
        (directory / "probe").write_bytes(b"x")
    (directory / "probe").unlink()
    assert full.value.errno == errno.ENOSPC


def test_a_results_directory_that_fills_up_fails_the_run_and_says_why(
    real_small: Path, tmp_path: Path, own_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk of --results fills up while an embedded engine runs: the exit status is 1, and stderr
    gives the OS's reason, the path that could not be written and where the result is."""
    results_dir = tmp_path / "results"
    real_run_system = analytics_runner.run_system

    def run_then_fill(*args: Any, **kwargs: Any) -> dict[str, Any]:
        document = real_run_system(*args, **kwargs)
        fill(results_dir)
        return document

    monkeypatch.setattr(analytics_runner, "run_system", run_then_fill)
    with small_file_system(results_dir, MIN_FREE_BYTES + (1 << 20)):
        argv = ["run", "--systems", EMBEDDED.system, "--data", str(real_small), "--results", str(results_dir)]
        outcome = CliRunner().invoke(main, [*argv, "--tries", "1"])
        left = sorted(p.name for p in results_dir.iterdir())
    said = outcome.output
    assert outcome.exit_code == 1 and isinstance(outcome.exception, SystemExit), (said, outcome.exception)
    kept = list((own_home / "work" / "unsaved-results").glob(f"analytics.{EMBEDDED.system}.*.json"))
    assert len(kept) == 1, said
    line = next(line for line in said.splitlines() if "could not write the result" in line)
    assert f"could not write the result to {results_dir / kept[0].name}: " in line
    assert "No space left on device (ENOSPC)" in line and f"saved at {kept[0]} instead" in line
    document = results.read_result(kept[0])
    assert document is not None and document["complete"] is True
    assert "No analytics results." not in said  # the report shows the kept result
    assert left == ["filler"]  # no reservation, no temporary file, no empty file


# ----- b. SIGKILL: no empty result file; the next run removes what the kill left ------------


def test_a_killed_run_leaves_no_empty_result_file_and_the_next_run_removes_its_name(
    real_small: Path, tmp_path: Path
) -> None:
    home, results_dir = tmp_path / "home", tmp_path / "results"
    argv = ["run", "--systems", EMBEDDED.system, "--data", str(real_small), "--results", str(results_dir)]
    first = Docbench(home, tmp_path / "first.out", *argv, "--tries", "1")
    try:
        reserved = wait_for(
            lambda: list(results_dir.glob(f"analytics.{EMBEDDED.system}.*.json")), 120, "the result's name"
        )
    finally:
        first.proc.kill()
        first.proc.wait()
    (name,) = reserved
    assert [p for p in results_dir.iterdir() if p.stat().st_size == 0] == [], first.output()
    assert name.stat().st_size > 0
    assert results.load_results([results_dir]) == []  # the reservation is no result

    second = Docbench(home, tmp_path / "second.out", *argv, "--tries", "1")
    assert second.proc.wait(timeout=600) == 0, second.output()
    said = second.output()
    assert (
        f"note: removed {name}: the name reserved by docbench PID {first.proc.pid}, which ended "
        "without writing its result"
    ) in said
    (document,) = results.load_results([results_dir])
    assert document["complete"] is True
    assert sorted(p.name for p in results_dir.iterdir()) == [Path(document["_path"]).name]
    # The freed name is gone, unless the second run started in the same second and took it
    # for its own (complete) result: names carry the start time to the second.
    assert not name.exists() or Path(document["_path"]) == name


def test_the_refusal_log_of_a_killed_run_goes_with_its_name(tmp_path: Path) -> None:
    """A run killed after its first refusal leaves its refusal log (empty when the lines were
    still in its buffer) beside its reserved name: the next run removes both, saying so; the
    refusal log of a written result stays."""
    from docbench.results.environment import machine_slug
    from docbench.results.files import RESERVATION_KEY, release_abandoned

    dead = {"pid": 1, "start_time": 1, "boot_id": "another boot", "machine": machine_slug()}
    killed = tmp_path / f"analytics.{EMBEDDED.system}.{EMBEDDED.variant}.1m.vm.20261128T000000Z.json"
    killed.write_text(json.dumps({RESERVATION_KEY: dead}))
    killed.with_suffix(".refused.tsv").write_text("")
    alone = tmp_path / "analytics.chdb.lz4.1m.vm.20261128T000001Z.refused.tsv"
    alone.write_text("file_0001.json\t3\treason\n")
    kept = tmp_path / f"analytics.{QUICK.system}.{QUICK.variant}.1m.vm.20261128T000002Z.json"
    kept.write_text(json.dumps({"system": QUICK.system, "result": []}))
    kept.with_suffix(".refused.tsv").write_text("file_0001.json\t3\treason\n")
    notes = release_abandoned(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [kept.name, kept.with_suffix(".refused.tsv").name]
    )
    log_note = "the refusal log of a run killed before it wrote its result"
    assert f"removed {killed.with_suffix('.refused.tsv')}: {log_note}" in notes
    assert f"removed {alone}: {log_note}" in notes
    assert any(note.startswith(f"removed {killed}: the name reserved by docbench PID 1") for note in notes)


# ----- c. the server killed during a throughput run -----------------------------------------


def postmaster_pid(home: Path) -> int | None:
    for pid_file in (home / "work" / "throughput").rglob(PID_FILE_NAME):
        with contextlib.suppress(OSError, ValueError, KeyError, IndexError):
            return int(json.loads(pid_file.read_text())["processes"][0]["pid"])
    return None


@pytest.mark.server  # a server or a 1m dataset: not the quick loop's
def test_a_server_killed_during_a_throughput_run_is_noticed_at_once(tmp_path: Path) -> None:
    """SIGKILL to the server docbench started (the SQL server's: PostgreSQL's postmaster): within
    seconds the run says which server (and PID) died, records it, and the next run goes on with
    a new server."""
    if not engine_class(SQL_SERVER.system).availability().ok:
        pytest.skip(f"{SQL_SERVER.system}: {engine_class(SQL_SERVER.system).availability().reason}")
    # Not pytest's 0700 temp root: the unprivileged server user must reach its data.
    home = Path(tempfile.mkdtemp(prefix="docbench-damaged-"))
    home.chmod(0o711)
    results_dir = tmp_path / "results"
    run = Docbench(
        home,
        tmp_path / "throughput.out",
        *("run", "throughput", "--systems", SQL_SERVER.system, "--docs", "2k", "--clients", "2,3"),
        *("--duration", "4", "--warmup", "1", "--progress", "1", "--mix", "read-only"),
        *("--no-ceiling", "--no-native", "--results", str(results_dir)),
    )
    try:
        wait_for(lambda: "progress:" in run.output(), 300, "the first run's progress")
        postmaster = wait_for(lambda: postmaster_pid(home), 30, "the postmaster's pid file")
        killed = time.monotonic()
        os.kill(postmaster, signal.SIGKILL)
        said = f"{SQL_SERVER.system} server (PID {postmaster}) died during the run"
        # Seconds, not the 120 s of patience for a server in recovery (a loaded machine's
        # margin: the run itself says it within about 0.1 s).
        wait_for(lambda: said in run.output(), 60, "the run to say the server died")
        assert time.monotonic() - killed < 10
        assert run.proc.wait(timeout=120) == 1, run.output()
    finally:
        run.stop()
        shutil.rmtree(home, ignore_errors=True)
    (document,) = results.load_results([results_dir])
    results.validate(document)
    killed_run, next_run = document["runs"]
    assert killed_run["error"] == said and killed_run["server_died"] is True
    assert next_run["check"]["verdict"] == "ok", next_run
    assert document["complete"] is False


# ----- d. option values checked where they are parsed ---------------------------------------


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["run", "--kill-node", "load@-1"], "'load@-1': the delay after @ must be 0 or more seconds"),
        (["run", "--kill-node", "queries@nan"], "the delay after @ must be 0 or more seconds"),
        (["run", "throughput", "--clients", "1,,2"], "'1,,2': item 2 is empty (a stray comma?)"),
        (["run", "throughput", "--clients", "8,8"], "'8,8': 8 is given twice"),
        (["run", "throughput", "--duration", "nan"], "'nan' is not a finite number"),
        (["run", "throughput", "--rate", "inf"], "'inf' is not a finite number"),
        (["run", "throughput", "--mix", "read-only,"], "'read-only,': item 2 is empty"),
        (
            ["run", "--systems", f"{EMBEDDED.system},{EMBEDDED.system}"],
            f"'{EMBEDDED.system},{EMBEDDED.system}': {EMBEDDED.system} is given twice",
        ),
        (["run", "--variants", ""], "give at least one value"),
        (["run", "--timeout", "inf"], "'inf' is not a finite number"),
        (["run", "storage", "--sizes", "1000,1k"], "'1000,1k': 1000 is given twice"),
        (["run", "updates", "--distribution", "uniform,,zipfian"], "item 2 is empty"),
    ],
)
def test_option_values_are_checked_where_they_are_parsed(argv: list[str], says: str, own_home: Path) -> None:
    # A results directory no run can write: a value that slipped through would stop there
    # (exit 1, the directory named), not run a benchmark.
    outcome = CliRunner().invoke(main, [*argv, "--results", "/proc/docbench-unwritable"])
    assert outcome.exit_code == 2, outcome.output
    assert says in outcome.output, outcome.output
    assert "Traceback" not in outcome.output and isinstance(outcome.exception, SystemExit)
    assert not (own_home / "work").exists()  # nothing ran


# ----- e. a password that cuts its URL short ------------------------------------------------

PASSWORD = "p@ss/w0rd"


def scheme_of(system: str) -> str:
    """The scheme of a system's URLs (that of its documented example)."""
    example = engine_class(system).url_example
    assert example, system
    return example.partition("://")[0]


@pytest.fixture
def role_with_slash(server_url: Callable[[str], str | None]) -> Iterator[tuple[str, str]]:
    """A role on the session's SQL server (PostgreSQL) whose password holds "@" and "/": its URL
    as a user would first type it (unencoded) and percent-encoded."""
    import psycopg
    from psycopg import sql

    admin = server_url(SQL_SERVER.system)
    assert admin is not None
    scheme = admin.partition("://")[0]
    role = "docbench_slash"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN SUPERUSER PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(PASSWORD)
            )
        )
    address = admin.rpartition("@")[2]
    try:
        yield f"{scheme}://{role}:{PASSWORD}@{address}", f"{scheme}://{role}:p%40ss%2Fw0rd@{address}"
    finally:
        for database in ("docbench", "postgres"):  # what the role made goes to the admin
            with (
                contextlib.suppress(psycopg.OperationalError),
                psycopg.connect(admin.rpartition("/")[0] + f"/{database}", autocommit=True) as conn,
            ):
                conn.execute(sql.SQL("REASSIGN OWNED BY {} TO CURRENT_USER").format(sql.Identifier(role)))
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_a_password_that_cuts_its_url_short_gets_a_hint(
    role_with_slash: tuple[str, str], real_small: Path, tmp_path: Path, own_home: Path
) -> None:
    """Unencoded, the URL is refused before anything runs with what to encode (the password
    never shown); encoded as the hint says, the same password runs."""
    typed, encoded = role_with_slash
    results_dir = tmp_path / "results"
    server, by_url, search = SQL_SERVER.system, BY_URL_ONLY.system, SEARCH_OTHER.system
    run = [
        "run",
        "--systems",
        server,
        "--variants",
        SQL_SERVER.variant,
        "--data",
        str(real_small),
        "--tries",
        "1",
    ]
    hint = "the URL's password seems to contain '@' or '/': percent-encode it (%40, %2F)"
    for argv, env in (
        ([*run, f"--{server}-url", typed], {}),
        (run, {f"DOCBENCH_{server.upper()}_URL": typed}),
        (
            [
                "run",
                "updates",
                "--systems",
                by_url,
                f"--{by_url}-url",
                f"{scheme_of(by_url)}://u:p@ss/w@127.0.0.1:1/db",
            ],
            {},
        ),
        (
            [
                "run",
                "--systems",
                search,
                f"--{search}-url",
                f"{scheme_of(search)}://admin:p@ss/w@127.0.0.1:1",
            ],
            {},
        ),
    ):
        outcome = CliRunner().invoke(main, [*argv, "--results", str(results_dir)], env=env)
        said = " ".join(outcome.output.split())
        assert outcome.exit_code == 2 and hint in said, said
        assert "ss/w" not in said and "p@ss" not in said
        assert not results_dir.exists()
    outcome = CliRunner().invoke(
        main, [*run, "--results", str(results_dir)], env={f"DOCBENCH_{server.upper()}_URL": encoded}
    )
    assert outcome.exit_code == 0, outcome.output
    (document,) = results.load_results([results_dir])
    assert document["complete"] is True and document["system"] == server
