"""The oracle's caches carry their own proof and are never used to judge an engine when they
are damaged, edited, old or another oracle's: ``answers.json`` and each partial in
``.oracle-partials/`` hold a SHA-256 of their content (bound to the data files' sha256 and the
oracle's version). Such a cache is named in one line and recomputed: ``docbench run`` judges
DuckDB by the true answers and exits 0, ``docbench answers`` (with or without ``--refresh``)
prints them, and the caches it writes back are whole again. (DuckDB: conftest's EMBEDDED role.)"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import EMBEDDED

from docbench.dataset import oracle
from docbench.dataset.oracle import compute as oracle_compute
from docbench.dataset.oracle import compute_answers
from docbench.dataset.reader import dataset_files

FILES = ("file_0001.json", "file_0002.json", "file_0003.json")
QUERIES = ("q1", "q2", "q3", "q4", "q5")
EDITED = "its checksum does not match its content (edited or damaged)"
OLD = "it has no checksum (written by an older docbench)"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 generated files of 5,000 documents, with their answers.json and partials. No hard
    document: DuckDB refuses none, so it is judged by the cached answers themselves (refused
    documents would make the runner compute its expected answers from the data)."""
    from docbench.dataset.generate import generate_dataset

    out = tmp_path_factory.mktemp("caches-15k")
    generate_dataset(15_000, out, seed=30, jobs=1, docs_per_file=5_000, hard_rate=0.0, quiet=True)
    assert sorted(p.name for p in (out / ".oracle-partials").glob("*.npz")) == [f"{f}.npz" for f in FILES]
    return out


@pytest.fixture(scope="module")
def truth(pristine: Path) -> dict[str, Any]:
    """The answers computed from the data alone, without any cache."""
    return compute_answers(dataset_files(pristine))


@pytest.fixture
def data(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the dataset (mtimes kept: its caches stay valid for it) to damage."""
    tmp_path.chmod(0o755)
    return Path(shutil.copytree(pristine, tmp_path / "data"))


def partial(data: Path, name: str) -> Path:
    return data / ".oracle-partials" / f"{name}.npz"


def truncate(path: Path) -> None:
    content = path.read_bytes()
    path.write_bytes(content[: len(content) // 2])


def overwrite_middle(path: Path) -> None:
    """4 KiB of random bytes in the middle of the file (bit rot: the size is the same)."""
    content = bytearray(path.read_bytes())
    middle = len(content) // 2
    content[middle : middle + 4096] = random.Random(4096).randbytes(4096)
    path.write_bytes(bytes(content))


def rewrite_meta(path: Path, change: Any) -> None:
    """Rewrite a partial as a whole, valid archive with its metadata changed by ``change``."""
    with np.load(path, allow_pickle=False) as stored:
        arrays = {name: stored[name] for name in stored.files}
    meta = json.loads(bytes(arrays["meta"]))
    change(meta)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def add_a_document(meta: dict[str, Any]) -> None:
    meta["colls"][0][1] += 1  # one more document in the file's first collection


def damage_every_partial(data: Path) -> None:
    truncate(partial(data, FILES[0]))
    overwrite_middle(partial(data, FILES[1]))
    rewrite_meta(partial(data, FILES[2]), add_a_document)


def docbench(*argv: str, home: Path) -> subprocess.CompletedProcess[str]:
    from docbench.core import paths

    env = {
        **os.environ,
        "DOCBENCH_HOME": str(home),
        "DOCBENCH_OPT": str(paths.opt_dir()),
        "COLUMNS": "400",  # each note on one line
    }
    return subprocess.run(
        [sys.executable, "-m", "docbench.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def printed_q1_like(output: str) -> int:
    """The count of likes in the Q1 table ``docbench answers`` printed (its first table)."""
    found = re.search(r"app\.bsky\.feed\.like +([\d,]+)", output)
    assert found, output
    return int(found.group(1).replace(",", ""))


def like_count(answers: dict[str, Any]) -> int:
    return dict(map(tuple, answers["q1"]))["app.bsky.feed.like"]


def same_answers(doc: dict[str, Any], truth: dict[str, Any]) -> bool:
    return all(doc[q] == truth[q] for q in (*QUERIES, "documents", "files"))


def cached_answers(data: Path) -> dict[str, Any]:
    return json.loads((data / "answers.json").read_text())


def assert_partial_notes(output: str, data: Path) -> None:
    """One line for each damaged partial, naming it and why; then its file is scanned."""
    lines = output.splitlines()

    def note_of(name: str) -> str:
        found = [line for line in lines if line.startswith(f"{partial(data, name)}: ")]
        assert len(found) == 1, output
        assert found[0].endswith(f"; scanning {name} again"), found[0]
        return found[0]

    assert "not readable: truncated or not a partial (BadZipFile" in note_of(FILES[0])
    assert "not readable: truncated or not a partial (BadZipFile" in note_of(FILES[1])
    assert f": {EDITED};" in note_of(FILES[2])


def assert_partials_whole_again(data: Path, truth: dict[str, Any], home: Path) -> None:
    """The partials written back are used as they are: nothing is scanned, nothing said."""
    (data / "answers.json").unlink()
    again = docbench("answers", str(data), home=home)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 file(s) scanned, 3 from cached partials" in again.stdout, again.stdout
    assert "scanning" not in again.stdout and "recomputing" not in again.stdout, again.stdout
    assert same_answers(cached_answers(data), truth)


def analytics_result(results: Path) -> dict[str, Any]:
    documents = [json.loads(p.read_text()) for p in results.glob("analytics.*.json")]
    assert len(documents) == 1, [p.name for p in results.iterdir()]
    return documents[0]


def run_duckdb(data: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    results = tmp_path / "results"
    argv = ["run", "--data", str(data), "--systems", EMBEDDED.system, "--tries", "1"]
    argv += ["--results", str(results)]
    run = docbench(*argv, home=tmp_path / "home")
    result = analytics_result(results)
    assert result["num_loaded_documents"] == 15_000, run.stderr[-3000:]  # none refused
    return run, result


def assert_judged_correct(run: subprocess.CompletedProcess[str], result: dict[str, Any]) -> None:
    assert [a["status"] for a in result["answers"]] == ["ok"] * 5, result["answers"]
    assert result["complete"] is True
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr, run.stderr[-3000:]


def test_an_edited_answers_json_is_recomputed_and_duckdb_judged_correct(
    data: Path, truth: dict[str, Any], tmp_path: Path
) -> None:
    """The user's report: one Q1 count edited in answers.json (8928 to 8929) made DuckDB
    "Q1: wrong" with exit 0. The edit is named, the answers recomputed, DuckDB is right."""
    likes = like_count(truth)
    text = (data / "answers.json").read_text()
    row = f'["app.bsky.feed.like", {likes}]'
    assert text.count(row) == 1
    (data / "answers.json").write_text(text.replace(row, f'["app.bsky.feed.like", {likes + 1}]'))
    run, result = run_duckdb(data, tmp_path)
    assert_judged_correct(run, result)
    note = f"{data / 'answers.json'}: {EDITED}; recomputing the answers"
    assert note in run.stderr.splitlines(), run.stderr
    assert same_answers(cached_answers(data), truth)  # written back, true and sealed again


def test_damaged_partials_are_recomputed_by_run(data: Path, truth: dict[str, Any], tmp_path: Path) -> None:
    """A truncated, an overwritten and an edited partial (answers.json gone, so they are
    needed): each is named and its file scanned again; DuckDB is judged by the true answers."""
    (data / "answers.json").unlink()
    damage_every_partial(data)
    run, result = run_duckdb(data, tmp_path)
    assert_judged_correct(run, result)
    assert_partial_notes(run.stderr, data)
    assert same_answers(cached_answers(data), truth)
    assert_partials_whole_again(data, truth, tmp_path / "home")


@pytest.mark.parametrize("refresh", [False, True], ids=["answers", "answers-refresh"])
def test_damaged_partials_are_recomputed_by_answers(
    data: Path, truth: dict[str, Any], tmp_path: Path, refresh: bool
) -> None:
    """``docbench answers`` recovers when every partial is damaged (answers.json gone);
    ``--refresh`` too, with answers.json truncated as well (the partials' recorded sha256
    may be read then, which once gave a BadZipFile traceback on every run)."""
    if refresh:
        truncate(data / "answers.json")
    else:
        (data / "answers.json").unlink()
    damage_every_partial(data)
    home = tmp_path / "home"
    shown = docbench("answers", str(data), *(["--refresh"] if refresh else []), home=home)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "Traceback" not in shown.stderr, shown.stderr
    if refresh:  # (the partials are ignored then: named only if their sha256 was needed)
        unreadable = f"{data / 'answers.json'}: not readable as JSON, truncated or damaged ("
        assert any(line.startswith(unreadable) for line in shown.stdout.splitlines()), shown.stdout
    else:
        assert_partial_notes(shown.stdout, data)
    assert "3 file(s) scanned" in shown.stdout, shown.stdout
    assert printed_q1_like(shown.stdout) == like_count(truth)
    assert same_answers(cached_answers(data), truth)
    assert_partials_whole_again(data, truth, home)


def test_caches_of_another_oracle_version_are_not_used(
    data: Path, truth: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """answers.json and partials that another version of the oracle computed (here one that
    counted one like too many) are named and recomputed, never used."""
    real_finalize = oracle_compute.finalize

    def counting_one_like_too_many(*args: Any, **kwargs: Any) -> dict[str, Any]:
        doc = real_finalize(*args, **kwargs)
        doc["q1"] = [[c, n + 1] if c == "app.bsky.feed.like" else [c, n] for c, n in doc["q1"]]
        return doc

    with monkeypatch.context() as other_oracle:
        other_oracle.setattr(oracle, "_VERSION", "0ther0racle00000")
        other_oracle.setattr(oracle_compute, "finalize", counting_one_like_too_many)
        other_oracle.setattr(oracle, "_MEMO", {})
        oracle.write_answers(data)
    assert like_count(cached_answers(data)) == like_count(truth) + 1
    shown = docbench("answers", str(data), home=tmp_path / "home")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    another = "computed by another version of the oracle (0ther0racle00000; this one is "
    lines = shown.stdout.splitlines()
    assert any(line.startswith(f"{data / 'answers.json'}: {another}") for line in lines), shown.stdout
    for name in FILES:  # the partials too: their files are scanned again
        assert any(
            line.startswith(f"{partial(data, name)}: {another}") and line.endswith(f"scanning {name} again")
            for line in lines
        ), shown.stdout
    assert "3 file(s) scanned" in shown.stdout, shown.stdout
    assert printed_q1_like(shown.stdout) == like_count(truth)
    assert same_answers(cached_answers(data), truth)


def test_an_old_cache_without_checksums_is_recomputed_with_a_note(
    data: Path, truth: dict[str, Any], tmp_path: Path
) -> None:
    """What an older docbench wrote carries no checksum: it is recomputed, with a note; an
    old answers.json beside whole partials costs no scan."""
    old = cached_answers(data)
    old.pop("checksum", None)
    old.pop("oracle", None)
    (data / "answers.json").write_text(json.dumps(old))
    shown = docbench("answers", str(data), home=tmp_path / "home")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    note = f"{data / 'answers.json'}: {OLD}; recomputing the answers"
    assert note in shown.stdout.splitlines(), shown.stdout
    assert "0 file(s) scanned, 3 from cached partials" in shown.stdout, shown.stdout
    assert same_answers(cached_answers(data), truth)
    # old partials too: each file is scanned again
    (data / "answers.json").unlink()
    for name in FILES:
        rewrite_meta(partial(data, name), lambda meta: meta.pop("checksum", None))
    shown = docbench("answers", str(data), home=tmp_path / "home")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    for name in FILES:
        note = f"{partial(data, name)}: {OLD}; scanning {name} again"
        assert note in shown.stdout.splitlines(), shown.stdout
    assert same_answers(cached_answers(data), truth)
