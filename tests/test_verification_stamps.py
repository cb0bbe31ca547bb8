"""Verification stamps: a data file found whole is not read again by the next run while its
size, mtime, ctime, inode and device are those of its stamp; any change (even one that keeps
the size and puts the mtime back), an edited or damaged stamp file, another verifier's stamps,
and ``--verify full`` make the file be read and checked again. The command line is exercised
with ``docbench answers`` (no engine needed: the check comes before anything else)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docbench.dataset import stamps as stamps_module
from docbench.dataset.generate import generate_dataset
from docbench.dataset.reader import dataset_files
from docbench.dataset.verify import DamagedDataset, verify_dataset

DOCS = 4_000
PER_FILE = 2_000


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    generate_dataset(DOCS, data, seed=5, compress="zstd", docs_per_file=PER_FILE, quiet=True)
    return data


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("DOCBENCH_HOME", str(path))
    return path


@pytest.fixture
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files just generated are stamped (the tests do not wait out the 2 s a file must be
    older than its check; the window itself has its own test)."""
    monkeypatch.setattr(stamps_module, "RECENT_NS", 0)


def verify(data: Path, full: bool = False):
    return verify_dataset(data, dataset_files(data), jobs=2, full=full)


def test_a_second_run_reads_no_unchanged_file(dataset: Path, no_racy_window: None) -> None:
    first = verify(dataset)
    assert (first.read, len(first.unchanged)) == (2, 0)
    assert (dataset / stamps_module.STAMPS_NAME).exists()
    second = verify(dataset)
    assert (second.read, len(second.unchanged)) == (0, 2)
    assert "0 read" in second.summary(dataset) and "2 unchanged since" in second.summary(dataset)
    assert verify(dataset, full=True).read == 2


def test_a_file_changed_in_place_with_its_mtime_put_back_is_read_and_caught(
    dataset: Path, no_racy_window: None
) -> None:
    verify(dataset)
    victim = dataset_files(dataset)[1]
    before = victim.stat()
    with open(victim, "r+b") as fh:  # same size, one byte inside the last frame changed
        fh.seek(before.st_size - 100)
        byte = fh.read(1)
        fh.seek(before.st_size - 100)
        fh.write(bytes([byte[0] ^ 0xFF]))
    os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (victim.stat().st_size, victim.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    with pytest.raises(DamagedDataset) as damaged:
        verify(dataset)
    assert any(victim.name in line for line in damaged.value.problems)
    with pytest.raises(DamagedDataset):  # and again: a damaged file never gets a stamp
        verify(dataset)


def test_an_edited_stamp_file_is_named_and_every_file_read(dataset: Path, no_racy_window: None) -> None:
    verify(dataset)
    path = dataset / stamps_module.STAMPS_NAME
    doc = json.loads(path.read_text())
    name = sorted(doc["files"])[0]
    doc["files"][name]["size"] += 1
    path.write_text(json.dumps(doc))
    again = verify(dataset)
    assert again.read == 2
    assert any("checksum does not match" in note for note in again.notes)
    assert verify(dataset).read == 0  # rewritten by the run that read everything


@pytest.mark.parametrize("damage", ["truncated", "other verifier", "not json"])
def test_a_stamp_file_not_usable_is_named_and_every_file_read(
    dataset: Path, no_racy_window: None, damage: str
) -> None:
    verify(dataset)
    path = dataset / stamps_module.STAMPS_NAME
    text = path.read_text()
    if damage == "truncated":
        path.write_text(text[: len(text) // 2])
    elif damage == "other verifier":
        doc = json.loads(text)
        doc["verifier"] = "0123456789abcdef"
        doc["checksum"] = stamps_module.stamps_checksum(doc)
        path.write_text(json.dumps(doc))
    else:
        path.write_text("[1, 2, 3]")
    again = verify(dataset)
    assert again.read == 2 and len(again.notes) == 1 and str(path) in again.notes[0]


def test_a_file_checked_within_its_ctime_granularity_gets_no_stamp(dataset: Path) -> None:
    """A file whose ctime is less than 2 s before its check could change again unseen: the
    next run reads it again (the generated files here are seconds old)."""
    verify(dataset)
    assert verify(dataset).read == 2


def test_a_read_only_generated_dataset_keeps_its_stamps_in_docbench_home(
    dataset: Path, home: Path, no_racy_window: None
) -> None:
    dataset.chmod(0o555)
    try:
        verify(dataset)
        assert not (dataset / stamps_module.STAMPS_NAME).exists()
        assert list(home.rglob(stamps_module.STAMPS_NAME))
        assert verify(dataset).read == 0
    finally:
        dataset.chmod(0o755)


def test_docbench_answers_says_what_it_read_and_verify_full_reads_all(dataset: Path, home: Path) -> None:
    time.sleep(stamps_module.RECENT_NS / 1e9 + 0.1)  # out of the racy window: stamped

    def answers(*extra: str) -> str:
        process = subprocess.run(
            [sys.executable, "-m", "docbench.cli", "answers", str(dataset), *extra],
            env={**os.environ, "DOCBENCH_HOME": str(home), "COLUMNS": "300"},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert process.returncode == 0, process.stderr
        return process.stdout

    assert ": 2 read (SHA-256, frames, dataset.json)" in answers()
    second = answers()
    assert ": 0 read" in second and "2 unchanged since" in second
    assert ": 2 read (SHA-256, frames, dataset.json; --verify full)" in answers("--verify", "full")
