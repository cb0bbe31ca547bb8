"""Worker processes (docbench.workloads.fresh_process): forked from a forkserver that imported
docbench but no engine, each one new, each in the caller's environment and directory as they
are when it starts (the forkserver keeps those it started with)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from multiprocessing.connection import Connection
from pathlib import Path

import pytest
from conftest import QUICK

import docbench
from docbench.systems import REGISTERED
from docbench.workloads import fresh_process


def libraries_imported(paths: list[Path]) -> set[str]:
    """The top-level modules these files import, but the standard library's and docbench."""
    found: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.partition(".")[0])
    return found - set(sys.stdlib_module_names) - {"docbench"}


def engine_libraries() -> tuple[str, ...]:
    """What the systems' packages import that the rest of docbench does not: the engines and
    their clients (chDB, DuckDB, psycopg, PyMongo, PyMySQL...), and the standard library's SQLite."""
    source = Path(docbench.__file__).parent
    systems = libraries_imported(
        [path for name in REGISTERED for path in (source / "systems" / name).rglob("*.py")]
    )
    rest = libraries_imported(
        [path for path in source.rglob("*.py") if path.relative_to(source).parts[0] != "systems"]
    )
    return tuple(sorted(systems - rest | {"sqlite3"}))


ENGINE_LIBRARIES = engine_libraries()


def report(conn: Connection) -> None:
    loaded = sorted(name for name in ENGINE_LIBRARIES if name in sys.modules)
    conn.send((os.getpid(), os.environ.get("DOCBENCH_PROBE"), os.getcwd(), loaded))
    conn.close()


def run_report() -> tuple[int, str | None, str, list[str]]:
    receiver, sender = fresh_process.context().Pipe(duplex=False)
    worker = fresh_process.process(report, (sender,), daemon=True)
    worker.start()
    sender.close()
    answer = receiver.recv()
    worker.join(10)
    assert worker.exitcode == 0
    return answer  # type: ignore[no-any-return]


def test_each_worker_is_new_and_takes_the_callers_environment_and_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCBENCH_PROBE", "first")
    first = run_report()  # (starts the forkserver, if no earlier test did)
    monkeypatch.setenv("DOCBENCH_PROBE", "second")
    monkeypatch.chdir(tmp_path)
    second = run_report()
    assert first[1] == "first" and second[1] == "second"
    assert second[2] == str(tmp_path)
    assert first[0] != second[0] and os.getpid() not in (first[0], second[0])


def test_no_engine_library_is_loaded_before_the_worker_opens_one() -> None:
    """A cold query's process opens its engine itself: the forkserver imports none."""
    assert set(ENGINE_LIBRARIES) > {"sqlite3"}  # the systems' libraries were found
    assert run_report()[3] == []


# As the `docbench` console script: its __main__ imports the CLI, and with it the servers'
# module, which installs the run's SIGTERM/SIGHUP handler in the process that imports it.
_CLI_LIKE = textwrap.dedent("""
    import signal
    from docbench.cli import main  # noqa: F401 (the console script's import)
    from docbench.workloads import fresh_process

    def handlers(conn):
        conn.send([signal.getsignal(s) == signal.SIG_DFL for s in (signal.SIGTERM, signal.SIGHUP)])

    if __name__ == "__main__":
        receiver, sender = fresh_process.context().Pipe(duplex=False)
        worker = fresh_process.process(handlers, (sender,), daemon=True)
        worker.start()
        print(receiver.recv(), flush=True)
        worker.join(10)
""")


def test_a_worker_ends_by_sigterm_quietly(tmp_path: Path) -> None:
    """The run's SIGTERM handler ("stopping the servers this run started") stays the run's
    process's: a worker (and the forkserver) die by the signal as spawned workers did."""
    script = tmp_path / "cli_like.py"
    script.write_text(_CLI_LIKE)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[True, True]"


def test_a_run_under_python_m_prints_no_warning_per_worker(real_data_dir: Path, tmp_path: Path) -> None:
    """`python -m docbench.cli`: each worker runs the main module again (multiprocessing does),
    which Python would warn about on every query since the forkserver preloaded it."""
    data = tmp_path / "data"
    data.mkdir()
    first = sorted(real_data_dir.glob("*.jsonl"))[0]
    (data / first.name).write_bytes(first.read_bytes())
    home = tmp_path / "home"
    run = ["run", "analytics", "--systems", QUICK.system, "--variants", QUICK.variant]
    run += ["--tries", "1", "--no-restart"]
    paths = ["--data", str(data), "--results", str(tmp_path / "results")]
    done = subprocess.run(
        [sys.executable, "-m", "docbench.cli", *run, *paths],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DOCBENCH_HOME": str(home)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "answers 5/5 correct" in done.stdout
    assert "Warning" not in done.stderr, done.stderr[-3000:]
