"""A load killed mid-way (docbench with SIGKILL, or the server) resumes with --resume at the
first file not committed, and ends with exactly the documents offered minus the refused ones:
none twice, none lost -- checked by the engine's count and by the five answers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import COLUMNAR, EMBEDDED, QUICK, SQL_SERVER

from docbench.servers.managed import PID_FILE_NAME

FILES = 4


@pytest.fixture(scope="module")
def four_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 files of 100,000 generated documents, with their hard documents."""
    from docbench.dataset.generate import generate_dataset

    out = tmp_path_factory.mktemp("resume-400k")
    out.chmod(0o755)
    generate_dataset(FILES * 100_000, out, seed=31, jobs=2, docs_per_file=100_000, quiet=True)
    return out


def _env(home: Path, results: Path) -> dict[str, str]:
    from docbench.core import paths

    return {
        **os.environ,
        "DOCBENCH_HOME": str(home),
        "DOCBENCH_RESULTS": str(results),
        "DOCBENCH_OPT": str(paths.opt_dir()),
        "COLUMNS": "400",
    }


def _docbench(*argv: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "docbench.cli", *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def _committed(checkpoint: Path) -> int:
    try:
        return len(json.loads(checkpoint.read_text())["committed"])
    except (OSError, ValueError, KeyError):
        return 0


def _wait_for_commit(checkpoint: Path, process: subprocess.Popen[bytes], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while _committed(checkpoint) < 1:
        assert process.poll() is None, process.stdout.read().decode()[-3000:]  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "no file was committed in time"
        time.sleep(0.02)


def _result(results: Path) -> dict:
    documents = [json.loads(p.read_text()) for p in results.glob("analytics.*.json") if p.stat().st_size]
    assert len(documents) == 1, [p.name for p in results.iterdir()]
    return documents[0]


def _assert_whole_and_once(document: dict, data: Path) -> None:
    answers = json.loads((data / "answers.json").read_text())
    assert document["complete"] is True
    assert 1 <= document["load"]["resumed_after_files"] < FILES
    refused = document["load_errors"]["count"]
    assert document["num_loaded_documents"] == answers["documents"] - refused
    assert [a["status"] for a in document["answers"]] == ["ok"] * 5, document["answers"]


@pytest.mark.parametrize(("system", "variant"), [(r.system, r.variant) for r in (COLUMNAR, EMBEDDED, QUICK)])
def test_sigkill_of_docbench_mid_load_then_resume(
    system: str, variant: str, four_files: Path, tmp_path: Path
) -> None:
    home, results = tmp_path / "home", tmp_path / "results"
    env = _env(home, results)
    argv = ["run", "--data", str(four_files), "--systems", system, "--variants", variant, "--tries", "1"]
    checkpoint = home / "work" / f"{system}-{variant}" / "load-checkpoint.json"
    first = _docbench(*argv, env=env)
    _wait_for_commit(checkpoint, first)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert 1 <= _committed(checkpoint) < FILES  # killed mid-load
    second = _docbench(*argv, "--resume", env=env)
    output = second.communicate(timeout=600)[0].decode()
    assert second.returncode == 0, output[-3000:]
    assert "resuming the load after" in output, output
    _assert_whole_and_once(_result(results), four_files)


def test_a_killed_server_mid_load_then_resume(four_files: Path, tmp_path: Path) -> None:
    """The SQL server's main process (PostgreSQL's postmaster) SIGKILLed mid-load: the run fails
    and keeps its database; with --resume the server recovers, and the load continues after the
    last committed file."""
    home, results = tmp_path / "home", tmp_path / "results"
    home.mkdir()
    home.chmod(0o755)
    env = _env(home, results)
    argv = [
        "run",
        "--data",
        str(four_files),
        "--systems",
        SQL_SERVER.system,
        "--variants",
        SQL_SERVER.variant,
        "--tries",
        "1",
        "--no-restart",
    ]  # about the load: no restart before each query
    workdir = home / "work" / f"{SQL_SERVER.system}-{SQL_SERVER.variant}"
    first = _docbench(*argv, env=env)
    _wait_for_commit(workdir / "load-checkpoint.json", first)
    # The server's main process, as docbench's pid file records it.
    (pid_file,) = workdir.rglob(PID_FILE_NAME)
    postmaster = int(json.loads(pid_file.read_text())["processes"][0]["pid"])
    os.kill(postmaster, signal.SIGKILL)
    output = first.communicate(timeout=300)[0].decode()
    assert first.returncode != 0, output[-3000:]
    assert "kept in" in output
    for leftover in results.glob("analytics.*.json"):  # the failed run's result: not complete
        assert json.loads(leftover.read_text())["complete"] is False
        leftover.unlink()
    second = _docbench(*argv, "--resume", env=env)
    output = second.communicate(timeout=600)[0].decode()
    assert second.returncode == 0, output[-3000:]
    assert "resuming the load after" in output, output
    _assert_whole_and_once(_result(results), four_files)
