"""One definition of a document for every system and the oracle (issue #13, part B).

A line is a document only if it is a JSON object. Lines that are valid JSON but not objects
(arrays, strings, numbers, true/false/null) used to be judged differently by every engine
(PostgreSQL loaded them, ClickHouse turned ``[{...}]`` into a row, DuckDB and SQLite refused
them); the load driver now refuses them itself, with one reason text for every system, and
the oracle counts them as invalid lines. A dataset without a single document is an error,
and ``--data DIR`` never writes into DIR.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import QUICK

from docbench import results
from docbench.core import paths
from docbench.core.answers import check_answer
from docbench.dataset.oracle import compute_answers, parse_document
from docbench.dataset.reader import dataset_files
from docbench.systems import REGISTERED, adapter_class, adapter_variants, engine_class, open_adapter
from docbench.workloads.analytics.runner import RunRequest, run_analytics
from docbench.workloads.load import (
    LoadReport,
    batches,
    load_files,
    not_object_reason,
    plain_file_documents,
)

TRUSTED = {"ok", "precision"}
# The systems a run without --systems runs (the embedded engines and a SQL server).
DEFAULT_SYSTEMS = [name for name in REGISTERED if engine_class(name).runs_by_default]

# Valid JSON that is not an object, as users' files had them, and the reason every system
# must give. Leading JSON whitespace (space, tab, CR) does not make a line an object either.
NOT_OBJECTS = {
    b"[1]": "not a JSON object: an array",
    b'[{"did":"x"}]': "not a JSON object: an array",
    b"[]": "not a JSON object: an array",
    b'"text"': "not a JSON object: a string",
    b"42": "not a JSON object: a number",
    b"true": "not a JSON object: true",
    b"false": "not a JSON object: false",
    b"null": "not a JSON object: null",
    b"  [1]": "not a JSON object: an array",
    b'  [{"did":"x"}]': "not a JSON object: an array",
    b"\t null": "not a JSON object: null",
    b' \r "x" ': "not a JSON object: a string",
    b"  -1.5e3": "not a JSON object: a number",
}


def real_lines(real_data_dir: Path, count: int) -> list[bytes]:
    return (real_data_dir / "jsonbench_file_0001_first1000.jsonl").read_bytes().splitlines()[:count]


def mixed_dataset(real_data_dir: Path, target: Path) -> tuple[int, dict[int, str]]:
    """file_0001.json: real events with every non-object line mixed in (and an empty line,
    and an object after leading spaces, which is a document); file_0002.json: only real
    events (it takes the whole-file fast path). Returns (documents, {line: reason})."""
    target.mkdir()
    good = real_lines(real_data_dir, 200)
    lines: list[bytes] = []
    refused: dict[int, str] = {}
    pending = list(NOT_OBJECTS.items())
    for i, line in enumerate(good):
        lines.append(line)
        if i % 15 == 3 and pending:
            text, reason = pending.pop()
            lines.append(text)
            refused[len(lines)] = reason
    lines.insert(50, b"  ")  # not a document, not refused
    refused = {n + (n > 50): reason for n, reason in refused.items()}
    lines.append(b"   " + good[0])  # an object after JSON whitespace: a document everywhere
    assert not pending
    (target / "file_0001.json").write_bytes(b"\n".join(lines) + b"\n")
    clean = real_data_dir / "jetstream_2026_capture_152.jsonl"
    shutil.copyfile(clean, target / "file_0002.json")
    assert plain_file_documents(target / "file_0002.json") == 152
    assert plain_file_documents(target / "file_0001.json") is None
    return len(good) + 1 + 152, refused


def available(names: list[str]) -> list[str]:
    return [n for n in names if engine_class(n).availability().ok]


def main_variants(systems: list[str]) -> list[str]:
    return sorted(
        {v.name for s in systems for v in adapter_variants(s, "analytics") if v.role in ("default", "best")}
    )


def run(data: Path, results_dir: Path, systems: list[str], **kwargs: object) -> list[dict]:
    request = RunRequest(
        system_names=systems,
        data_dir=data,
        results_dir=results_dir,
        tries=1,
        timeout=120.0,
        quiet=True,
        restart_for_cold=False,
        **kwargs,
    )  # type: ignore[arg-type]
    assert run_analytics(request) == 0
    return results.load_results([results_dir])


# ----- the rule, line by line ---------------------------------------------------------------


def test_reasons_name_what_the_line_is() -> None:
    for text, reason in NOT_OBJECTS.items():
        assert not_object_reason(text) == reason, text
    assert not_object_reason(b"[1,") == "not a JSON object: starts with '['"
    assert not_object_reason(b"trueish") == "not a JSON object: starts with 't'"
    assert not_object_reason(b"\xef\xbb\xbf{}") == "not a JSON object: starts with byte 0xef"


def test_the_driver_and_the_oracle_agree_on_every_line(tmp_path: Path) -> None:
    """The driver refuses a line itself exactly when it cannot be an object; the oracle never
    counts such a line as a document; lines left to the engine all start with '{'."""
    odd = [
        b"",
        b" \t",
        b"{}",
        b'  {"a":1}',
        b"\t{} ",
        b"\r {}",
        b"{broken",
        b"\xef\xbb\xbf{}",
        b"\x0c{}",
        b"\xc2\xa0{}",
        b"not json",
        b"[1,",
        b"\x00",
    ]
    lines = [*NOT_OBJECTS, *odd]
    data = tmp_path / "lines.json"
    data.write_bytes(b"\n".join(lines) + b"\n")
    report = LoadReport()
    kept = [line for batch in batches(data, 3, report) for line in batch.lines]
    refused = {r.line for r in report.refused}
    assert report.empty_lines == 2
    assert report.not_objects == report.refused_count == len(refused)
    # every non-empty line is sent to the engine or refused (and counted as offered) here
    assert len(kept) + report.offered == len(lines) - 2
    for number, line in enumerate(lines, start=1):
        doc = parse_document(line)
        if doc is None:  # empty: neither a document nor refused
            assert number not in refused and line not in kept
        elif number in refused:
            assert not isinstance(doc, dict), line
            assert not line.lstrip(b" \t\r\n").startswith(b"{")
        else:
            assert line in kept and line.lstrip(b" \t\r\n").startswith(b"{"), line
    answers = compute_answers([data])
    assert answers["documents"] == 4  # the four objects, whatever JSON whitespace is around
    assert answers["invalid_lines"] == len(lines) - 2 - 4
    assert answers["empty_lines"] == 2


def test_refused_non_objects_count_as_offered_and_in_progress(tmp_path: Path, own_home: Path) -> None:
    lines = [b'{"did":"a"}', b"[1]", b"", b'{"did":"b"}', b"null", b"  ", b"42"]
    data = tmp_path / "file_0001.json"
    data.write_bytes(b"\n".join(lines))  # no newline after the last line either
    system = open_adapter(QUICK.system, "analytics", own_home / "db", QUICK.variant)
    system.engine.start()
    try:
        system.create()
        seen: list[int] = []
        report = load_files(system.loader(), [data], 2, on_progress=seen.append)
        assert system.count() == 2
    finally:
        system.release()
        system.engine.stop()
    assert report.offered == sum(seen) == 5 and report.empty_lines == 2
    assert report.refused_count == report.not_objects == 3
    assert report.refused_lines == {"file_0001.json": {2, 5, 7}}


def test_the_oracle_counts_non_objects_as_invalid(real_data_dir: Path, tmp_path: Path) -> None:
    documents, refused = mixed_dataset(real_data_dir, tmp_path / "mixed")
    answers = compute_answers(dataset_files(tmp_path / "mixed"))
    assert answers["documents"] == documents
    assert answers["invalid_lines"] == len(NOT_OBJECTS) == len(refused)
    assert answers["empty_lines"] == 1
    # the same data without those lines has the same answers: they are no document at all
    # (a `null` line is not a document with a null collection)
    clean = tmp_path / "clean"
    clean.mkdir()
    lines = (tmp_path / "mixed" / "file_0001.json").read_bytes().split(b"\n")[:-1]
    kept = [line for n, line in enumerate(lines, start=1) if n not in refused]
    (clean / "file_0001.json").write_bytes(b"\n".join(kept) + b"\n")
    shutil.copyfile(tmp_path / "mixed" / "file_0002.json", clean / "file_0002.json")
    expected = compute_answers(dataset_files(clean))
    assert expected["invalid_lines"] == 0
    for key in ("documents", "q1", "q2", "q3", "q4", "q5", "q4_ties", "q5_ties"):
        assert answers[key] == expected[key], key


# ----- every default system ---------------------------------------------------------------


def test_every_default_system_refuses_non_objects_alike(
    real_data_dir: Path, tmp_path: Path, own_home: Path, server_url
) -> None:
    systems = available(DEFAULT_SYSTEMS)
    embedded = {name for name in DEFAULT_SYSTEMS if engine_class(name).embedded}
    assert len(embedded) >= 3 and embedded <= set(systems)
    if os.environ.get("CI"):
        assert set(systems) == set(DEFAULT_SYSTEMS)
    data = tmp_path / "mixed"
    documents, refused = mixed_dataset(real_data_dir, data)
    oracle = compute_answers(dataset_files(data))
    out = tmp_path / "results"
    urls = {s: url for s in systems if (url := server_url(s))}  # the session's servers
    runs = run(data, out, systems, variants=main_variants(systems), urls=urls)
    assert {d["system"] for d in runs} == set(systems)
    expected_log = "".join(f"file_0001.json\t{n}\t{reason}\n" for n, reason in sorted(refused.items()))
    for document in runs:
        name = f"{document['system']}/{document['variant']}"
        assert document["complete"], (name, document.get("error"))
        assert document["dataset_size"] == documents + len(refused), name
        assert document["num_loaded_documents"] == documents, name
        errors = document["load_errors"]
        assert errors["count"] == len(refused), (name, errors)
        assert {e["line"]: e["reason"] for e in errors["first"]} == refused, name
        assert (out / errors["log"]).read_text() == expected_log, name
        precision = adapter_class(document["system"], "analytics").time_precision_us
        for answer in document["answers"]:
            assert answer["status"] in TRUSTED, (name, answer)
            # judged against the oracle of the whole dataset too, not only "what was loaded"
            check = check_answer(answer["query"], answer["rows"], oracle, time_precision_us=precision)
            assert check.status in TRUSTED, (name, answer["query"], check.detail)


# ----- datasets that cannot be benchmarked --------------------------------------------------


def docbench_command() -> list[str]:
    script = Path(sys.executable).with_name("docbench")
    return (
        [str(script)] if script.exists() else [sys.executable, "-c", "from docbench.cli import main; main()"]
    )


def test_a_directory_without_documents_is_an_error(tmp_path: Path, own_home: Path) -> None:
    noise = tmp_path / "noise"
    noise.mkdir()
    (noise / "random.json").write_bytes(random.Random(13).randbytes(200_000))
    assert compute_answers(dataset_files(noise))["documents"] == 0
    out = tmp_path / "results"
    proc = subprocess.run(
        [
            *docbench_command(),
            "run",
            "--data",
            str(noise),
            "--systems",
            QUICK.system,
            "--results",
            str(out),
            "--tries",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert "no documents" in proc.stderr and str(noise) in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists() or not list(out.glob("*.json"))  # no system ran


@pytest.mark.parametrize("read_only", [True, False])
def test_data_option_writes_nothing_into_the_data_directory(
    real_data_dir: Path, tmp_path: Path, own_home: Path, read_only: bool
) -> None:
    data = tmp_path / "users-data"
    data.mkdir()
    for name in ("misc_real_events_12.jsonl", "jetstream_2026_golden_10.jsonl"):
        shutil.copyfile(real_data_dir / name, data / name)
    before = {p.name: p.stat().st_mtime_ns for p in data.iterdir()}
    if read_only:
        data.chmod(0o555)
    try:
        [document] = run(data, tmp_path / "results", [QUICK.system], variants=[QUICK.variant])
    finally:
        data.chmod(0o755)
    assert document["complete"]
    assert all(a["status"] in TRUSTED for a in document["answers"]), document["answers"]
    assert {p.name: p.stat().st_mtime_ns for p in data.iterdir()} == before
    # the derived files went to docbench's own cache instead
    cache = paths.cache_dir_for(data)
    assert cache.is_relative_to(own_home)
    assert (cache / "answers.json").exists() and (cache / "baselines.json").exists()


def test_a_dataset_docbench_generated_keeps_its_answers_beside_it(tmp_path: Path) -> None:
    data = tmp_path / "bluesky-x"
    data.mkdir()
    (data / "dataset.json").write_text("{}")
    assert paths.cache_dir_for(data) == data.resolve()


_UNREADABLE_SCRIPT = """
import os, sys
from pathlib import Path
from docbench.dataset import oracle
from docbench.workloads.analytics import runner

data = Path(sys.argv[2])
request = runner.RunRequest(system_names=[sys.argv[4]], data_dir=data, results_dir=Path(sys.argv[3]),
                            quiet=True)
# Root reads any file: drop to nobody (after the imports), so the kernel refuses it for real.
if os.geteuid() == 0:
    os.setegid(65534)
    os.seteuid(65534)
if sys.argv[1] == "run":
    runner.prepare_dataset(request)
else:
    oracle.answers_command(data)
"""


@pytest.mark.parametrize("command", ["run", "answers"])
def test_an_unreadable_file_is_named_not_a_traceback(
    real_data_dir: Path, command: str, own_home: Path
) -> None:
    base = Path(tempfile.mkdtemp(prefix="docbench-unreadable-"))
    try:
        base.chmod(0o755)
        data = base / "data"
        data.mkdir(mode=0o755)
        shutil.copyfile(real_data_dir / "misc_real_events_12.jsonl", data / "a.jsonl")
        locked = data / "b.jsonl"
        shutil.copyfile(real_data_dir / "jetstream_2026_golden_10.jsonl", locked)
        (data / "a.jsonl").chmod(0o644)
        locked.chmod(0o000)
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                _UNREADABLE_SCRIPT,
                command,
                str(data),
                str(base / "results"),
                QUICK.system,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "COLUMNS": "250"},
        )
        assert proc.returncode == 1, (proc.stdout, proc.stderr)
        out = proc.stderr + proc.stdout
        assert f"cannot read {locked}: Permission denied" in " ".join(out.split()), out
        assert "Traceback" not in out
    finally:
        shutil.rmtree(base, ignore_errors=True)
