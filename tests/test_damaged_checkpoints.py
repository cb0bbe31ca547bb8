"""A load checkpoint is a claim docbench checks, and docbench deletes only what it made.

Every test runs the real `docbench run` (a process, as a user runs it) on real engines (conftest's
roles): an embedded engine (DuckDB) and the SQL server (PostgreSQL) by URL (the session's shared
server). A resumed load reconciles its `load-checkpoint.json` with the data and the engine's own
count before it skips a file: a checkpoint that lists a file as committed which was not, or that
is not of the shape docbench writes, makes the load start over, said in one line, and the run
ends with every document and five correct answers. A --data or --results inside docbench's work
directory is refused before anything runs, and a directory docbench did not make is never emptied.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import EMBEDDED, SQL_SERVER

FILES = 3
DOCS_PER_FILE = 4_000
CHECKPOINT = "load-checkpoint.json"
# The embedded engine's work directory (its name is system-variant).
EMBEDDED_DIR = f"{EMBEDDED.system}-{EMBEDDED.variant}"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 generated files of 4,000 documents (dataset.json and answers.json beside them)."""
    from docbench.dataset.generate import generate_dataset

    out = tmp_path_factory.mktemp("generated") / "full"
    out.mkdir()
    out.chmod(0o755)
    generate_dataset(FILES * DOCS_PER_FILE, out, seed=30, jobs=2, docs_per_file=DOCS_PER_FILE, quiet=True)
    return out


@pytest.fixture(scope="module")
def larger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 generated files of 20,000 documents: a file's load takes long enough for docbench to
    be killed between two commits."""
    from docbench.dataset.generate import generate_dataset

    out = tmp_path_factory.mktemp("larger") / "larger"
    out.mkdir()
    out.chmod(0o755)
    generate_dataset(FILES * 20_000, out, seed=31, jobs=2, docs_per_file=20_000, quiet=True)
    return out


@pytest.fixture(scope="module")
def plain(generated: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same files in a directory docbench did not generate: no dataset.json, so a resumed
    load counts each file's lines itself."""
    out = tmp_path_factory.mktemp("plain") / "plain-full"
    out.mkdir()
    for path in _data_files(generated):
        shutil.copy(path, out / path.name)
    return out


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o755)  # (a managed server's user must reach its work directory)
    return home


def _data_files(data: Path) -> list[Path]:
    files = sorted(p for p in data.iterdir() if p.name.startswith("file_"))
    assert len(files) == FILES, files
    return files


def _first_file_only(data: Path, tmp_path: Path) -> Path:
    """A dataset of the first file alone (same name, same bytes): loading it leaves what a
    load of `data` killed right after its first commit leaves."""
    out = tmp_path / "first-only"
    out.mkdir()
    shutil.copy(_data_files(data)[0], out / _data_files(data)[0].name)
    return out


def _env(home: Path) -> dict[str, str]:
    from docbench.core import paths

    # COLUMNS: one message, one line
    return {**os.environ, "DOCBENCH_HOME": str(home), "DOCBENCH_OPT": str(paths.opt_dir()), "COLUMNS": "2000"}


def _docbench(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docbench.cli", *argv],
        env=_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=900,
    )


def _fingerprint(home: Path, data: Path) -> str:
    """The data's identity as docbench's runner computes it (from the oracle's answers)."""
    code = (
        "import sys; from pathlib import Path\n"
        "from docbench.dataset.oracle import load_or_compute_answers\n"
        "from docbench.workloads.analytics.runner import Dataset\n"
        "p = Path(sys.argv[1])\n"
        "print(Dataset(p, '', [], load_or_compute_answers(p, jobs=1), {}, None).fingerprint)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(data)], env=_env(home), capture_output=True, text=True, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def _run_argv(
    data: Path, system: str, variant: str, results: Path, url: str | None, keep: bool = True
) -> list[str]:
    argv = ["run", "--data", str(data), "--systems", system, "--variants", variant]
    argv += ["--tries", "1", "--results", str(results), *(["--keep-databases"] if keep else [])]
    return argv + ([f"--{system}-url", url] if url else [])


def _after_first_file(
    home: Path, data: Path, tmp_path: Path, system: str, variant: str, url: str | None
) -> tuple[Path, dict[str, Any]]:
    """docbench's work directory and checkpoint as a load of `data` leaves them when it is
    killed right after committing its first file: the first file loaded by docbench (its
    database kept), the checkpoint naming it, for `data`."""
    first = _docbench(
        home, *_run_argv(_first_file_only(data, tmp_path), system, variant, tmp_path / "r0", url)
    )
    assert first.returncode == 0, first.stdout[-3000:]
    checkpoint = home / "work" / f"{system}-{variant}" / CHECKPOINT
    state = json.loads(checkpoint.read_text())
    assert state["committed"] == [_data_files(data)[0].name]
    state["dataset_fingerprint"] = _fingerprint(home, data)
    return checkpoint, state


def _only_result(results: Path) -> dict[str, Any]:
    documents = [json.loads(p.read_text()) for p in results.glob("analytics.*.json") if p.stat().st_size]
    assert len(documents) == 1, sorted(p.name for p in results.iterdir())
    return documents[0]


def _assert_everything_loaded_and_correct(results: Path, generated: Path) -> None:
    document = _only_result(results)
    expected = json.loads((generated / "answers.json").read_text())["documents"]
    assert document["complete"] is True, document.get("error")
    assert document["load"]["offered"] >= expected
    assert document["num_loaded_documents"] == expected - document["load_errors"]["count"]
    assert [a["status"] for a in document["answers"]] == ["ok"] * 5, document["answers"]
    assert document["load"]["resumed_after_files"] == 0  # started over


def _lines_about(output: str, text: str) -> list[str]:
    return [line for line in output.splitlines() if text in line]


# ----- a checkpoint that lies -----------------------------------------------------------------
def _killed_after_first_commit(home: Path, argv: list[str]) -> tuple[Path, dict[str, Any]]:
    """Start `docbench run`, SIGKILL it as soon as its checkpoint names a committed file."""
    checkpoint = home / "work" / f"{SQL_SERVER.system}-{SQL_SERVER.variant}" / CHECKPOINT
    run = subprocess.Popen(
        [sys.executable, "-m", "docbench.cli", *argv], env=_env(home), stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 300
    try:
        while not _committed(checkpoint):
            assert run.poll() is None and time.monotonic() < deadline, "no file was committed"
            time.sleep(0.01)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    state = json.loads(checkpoint.read_text())
    assert 1 <= len(state["committed"]) < FILES, state["committed"]  # killed mid-load
    return checkpoint, state


def _committed(checkpoint: Path) -> list[str]:
    try:
        return list(json.loads(checkpoint.read_text())["committed"])
    except (OSError, ValueError, KeyError):
        return []


def _assert_started_over_and_correct(
    resumed: subprocess.CompletedProcess[str], system: str, state: dict[str, Any], results: Path, data: Path
) -> None:
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    _assert_everything_loaded_and_correct(results, data)
    said = _lines_about(resumed.stdout, f"{CHECKPOINT} lists {len(state['committed'])} files as committed")
    assert len(said) == 1, resumed.stdout[-3000:]
    holds = state["expected_count"]  # what the engine holds: the files really committed
    assert f"{system} holds {holds:,}" in said[0] and said[0].rstrip().endswith("the load starts over")


def test_postgresql_killed_mid_load_with_a_checkpoint_listing_an_uncommitted_file(
    larger: Path, home: Path, tmp_path: Path, server_url: Any
) -> None:
    """docbench is SIGKILLed after committing its first file into the SQL server (PostgreSQL,
    by URL); the checkpoint is then edited to list the next file too, with the count the engine
    has. The resumed run does not skip that file: the files listed hold more than the server
    does, so the load starts over, loads everything, and every answer is right."""
    url = server_url(SQL_SERVER.system)
    results = tmp_path / "results"
    argv = _run_argv(larger, SQL_SERVER.system, SQL_SERVER.variant, results, url)
    checkpoint, state = _killed_after_first_commit(home, argv)
    state["committed"] = [path.name for path in _data_files(larger)[: len(state["committed"]) + 1]]
    checkpoint.write_text(json.dumps(state))  # one file more than was committed; same count

    resumed = _docbench(home, *argv, "--resume")

    _assert_started_over_and_correct(resumed, SQL_SERVER.system, state, results, larger)


def test_duckdb_with_a_checkpoint_listing_an_uncommitted_file(
    plain: Path, generated: Path, home: Path, tmp_path: Path
) -> None:
    """The same lie on the embedded engine (DuckDB), for data docbench did not generate (the
    resumed load counts the listed files' lines itself): it holds file 1, the checkpoint lists
    files 1-2."""
    checkpoint, state = _after_first_file(home, plain, tmp_path, EMBEDDED.system, EMBEDDED.variant, None)
    state["committed"] = [path.name for path in _data_files(plain)[:2]]  # file 2 never was
    checkpoint.write_text(json.dumps(state))

    results = tmp_path / "results"
    resumed = _docbench(home, *_run_argv(plain, EMBEDDED.system, EMBEDDED.variant, results, None), "--resume")

    _assert_started_over_and_correct(resumed, EMBEDDED.system, state, results, generated)


# ----- a checkpoint of the wrong shape --------------------------------------------------------
def _array(_state: dict[str, Any]) -> bytes:
    return b"[1,2,3]"


def _count_not_a_number(state: dict[str, Any]) -> bytes:
    return json.dumps({**state, "expected_count": "abc"}).encode()


def _no_report(state: dict[str, Any]) -> bytes:
    return json.dumps({k: v for k, v in state.items() if k != "report"}).encode()


def _not_json(state: dict[str, Any]) -> bytes:
    return json.dumps(state).encode()[:40]  # cut short


@pytest.fixture(scope="module")
def duckdb_after_first_file(generated: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The embedded engine's work directory and checkpoint after the first file of `generated`,
    made once for the damages below (each test damages a copy in its own home)."""
    home = tmp_path_factory.mktemp("first-file-home")
    _checkpoint, state = _after_first_file(
        home, generated, tmp_path_factory.mktemp("first-file"), EMBEDDED.system, EMBEDDED.variant, None
    )
    return home / "work" / EMBEDDED_DIR, state


@pytest.mark.parametrize("damage", [_array, _count_not_a_number, _no_report, _not_json])
def test_a_malformed_checkpoint_is_said_in_one_line_and_the_load_starts_over(
    damage: Any, duckdb_after_first_file: tuple[Path, dict], generated: Path, home: Path, tmp_path: Path
) -> None:
    left, state = duckdb_after_first_file
    shutil.copytree(left, home / "work" / EMBEDDED_DIR)
    checkpoint = home / "work" / EMBEDDED_DIR / CHECKPOINT
    checkpoint.write_bytes(damage(state))

    results = tmp_path / "results"
    resumed = _docbench(
        home, *_run_argv(generated, EMBEDDED.system, EMBEDDED.variant, results, None), "--resume"
    )

    assert resumed.returncode == 0, resumed.stdout[-3000:]
    _assert_everything_loaded_and_correct(results, generated)
    said = _lines_about(resumed.stdout, str(checkpoint))
    assert len(said) == 1, resumed.stdout[-3000:]
    assert said[0].rstrip().endswith("the load starts over"), said[0]
    assert "Traceback" not in resumed.stdout
    assert "--resume" not in resumed.stdout  # no advice that would fail the same way


# ----- what docbench may delete ---------------------------------------------------------------
def _files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_data_inside_the_work_directory_is_refused_and_kept(
    generated: Path, home: Path, tmp_path: Path
) -> None:
    inside = home / "work" / EMBEDDED_DIR / "mydata"
    shutil.copytree(generated, inside)
    before = _files_under(inside)

    run = _docbench(
        home, *_run_argv(inside, EMBEDDED.system, EMBEDDED.variant, tmp_path / "results", None, keep=False)
    )

    assert _files_under(inside) == before
    assert run.returncode == 2, run.stdout[-3000:]
    refusal = _lines_about(run.stdout, "Invalid value for '--data'")
    assert len(refusal) == 1 and "inside docbench's work directory" in refusal[0], run.stdout
    assert not list((tmp_path / "results").glob("*.json"))  # nothing ran


def test_results_inside_the_work_directory_are_refused_and_kept(
    generated: Path, home: Path, tmp_path: Path
) -> None:
    results = home / "work" / EMBEDDED_DIR / "results"
    results.mkdir(parents=True)
    (results / "analytics.earlier.json").write_text('{"an": "earlier result"}\n')
    before = _files_under(results)

    run = _docbench(home, *_run_argv(generated, EMBEDDED.system, EMBEDDED.variant, results, None, keep=False))

    assert _files_under(results) == before
    assert run.returncode == 2, run.stdout[-3000:]
    refusal = _lines_about(run.stdout, "Invalid value for '--results'")
    assert len(refusal) == 1 and "inside docbench's work directory" in refusal[0], run.stdout


def test_a_results_directory_where_a_work_directory_goes_is_never_wiped(
    generated: Path, home: Path, tmp_path: Path
) -> None:
    """A results directory (not the run's --results) sits in $DOCBENCH_HOME/work/duckdb-default,
    where docbench would make the embedded engine's (DuckDB's) work directory: docbench does not
    take it over, and nothing in it is removed."""
    workdir = home / "work" / EMBEDDED_DIR
    kept = workdir / "results"
    kept.mkdir(parents=True)
    (kept / f"analytics.{EMBEDDED.system}.{EMBEDDED.variant}.json").write_text('{"an": "earlier result"}\n')
    before = _files_under(workdir)

    run = _docbench(
        home, *_run_argv(generated, EMBEDDED.system, EMBEDDED.variant, tmp_path / "results", None, keep=False)
    )

    assert _files_under(workdir) == before
    assert run.returncode == 1, run.stdout[-3000:]  # the embedded engine's run could not take place
    assert len(_lines_about(run.stdout, f"{workdir} exists and was not created by docbench")) >= 1, run.stdout


def test_cleanup_removes_a_marked_directory_only_and_never_what_it_protects(tmp_path: Path) -> None:
    """The guard every cleanup goes through: a directory without docbench's mark, or one that
    holds a protected directory (the run's --data or --results), stays as it is."""
    from docbench.core.ownership import ForeignDirectory, claim_directory, protect_directory
    from docbench.servers.managed import clear_work_directory

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "dataset.ndjson").write_text("{}\n")
    clear_work_directory(foreign)
    assert (foreign / "dataset.ndjson").exists()
    with pytest.raises(ForeignDirectory, match="was not created by docbench"):
        claim_directory(foreign)  # not taken over either

    holding = tmp_path / "holding"
    claim_directory(holding)
    (holding / "results").mkdir()
    (holding / "results" / "analytics.json").write_text("{}\n")
    protect_directory(holding / "results")
    clear_work_directory(holding)
    assert (holding / "results" / "analytics.json").exists()

    owned = tmp_path / "owned"
    claim_directory(owned)
    (owned / f"docbench.{EMBEDDED.system}").write_bytes(b"\0")
    clear_work_directory(owned)
    assert not owned.exists()
