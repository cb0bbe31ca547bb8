"""The generic load driver: batching, line numbers and bisection, on a real SQLite loader."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from docbench.contracts.analytics import Loader
from docbench.systems import open_adapter
from docbench.workloads.load import load_files

GOOD = b'{"did":"did:plc:a","time_us":1,"kind":"commit"}'


@pytest.fixture
def sqlite(tmp_path: Path):
    system = open_adapter("sqlite", "analytics", tmp_path / "db", "jsonb")
    system.engine.start()
    system.create()
    yield system
    system.release()
    system.engine.stop()


@pytest.mark.parametrize("batch_size", [1, 3, 7, 100])
def test_refused_lines_are_exactly_the_bad_ones_with_their_line_numbers(
    sqlite, tmp_path: Path, batch_size: int
) -> None:
    lines = [GOOD] * 40
    bad_at = {2, 7, 8, 21, 40}  # 1-based line numbers in the file, incl. first-of-batch and last
    for number in bad_at:
        lines[number - 1] = b'{"did": broken'
    blank_at = {5, 13, 14, 30}  # empty and whitespace-only lines are not documents
    for number in blank_at:
        lines[number - 1] = b"" if number % 2 else b"  \t"
    data = tmp_path / "file_0001.json"
    data.write_bytes(b"\n".join(lines) + b"\n")

    report = load_files(sqlite.loader(), [data], batch_size)

    assert report.empty_lines == len(blank_at)
    assert report.offered == 40 - len(blank_at)
    assert report.refused_count == len(bad_at)
    assert {r.line for r in report.refused} == bad_at
    assert report.refused_lines == {"file_0001.json": bad_at}
    assert all(r.file == "file_0001.json" and r.reason for r in report.refused)
    assert sqlite.count() == 40 - len(blank_at) - len(bad_at)


def test_line_numbers_continue_across_files_and_blocks(sqlite, tmp_path: Path) -> None:
    first = tmp_path / "file_0001.json"
    first.write_bytes(b"\n".join([GOOD] * 5) + b"\n")
    second = tmp_path / "file_0002.json"
    # A big file (several read blocks) with one bad line far in, and no trailing newline.
    body = [GOOD] * 60_000
    body[54_321 - 1] = b"not json"
    second.write_bytes(b"\n".join(body))
    report = load_files(sqlite.loader(), [first, second], 10_000)
    assert report.offered == 60_005
    assert [(r.file, r.line) for r in report.refused] == [("file_0002.json", 54_321)]
    assert sqlite.count() == 60_004


def test_refusals_named_by_the_engine_are_recorded_without_bisection(tmp_path: Path, server_url) -> None:
    """A bulk API that names the refused items (here a real FerretDB, the session's:
    duplicate _id values) needs no bisection."""
    home = Path(tempfile.mkdtemp(prefix="docbench-ferretdb-"))
    home.chmod(0o755)
    system = open_adapter("ferretdb", "analytics", home / "db", "pglz", url=server_url("ferretdb"))
    system.engine.start()
    try:
        system.create()
        good = b'{"did":"did:plc:a","time_us":1,"kind":"identity"}'
        same = b'{"_id":"same","did":"did:plc:b","time_us":2,"kind":"identity"}'
        lines = [same if i % 3 == 0 else good for i in range(300)]
        data = tmp_path / "file_0001.json"
        data.write_bytes(b"\n".join(lines) + b"\n")
        report = load_files(system.loader(), [data], 300)
        # The first "same" is stored, the 99 after it refused as duplicate keys.
        assert report.refused_count == 99
        assert report.refused_lines == {"file_0001.json": set(range(4, 301, 3))}
        assert report.retried_batches == 1  # the named refusals, then the rest in one go
        assert system.count() == 201
    finally:
        system.release()
        system.engine.stop()
        shutil.rmtree(home, ignore_errors=True)


class WithoutSkipping(Loader):
    """A real loader offered the all-or-nothing whole-file path and batches only."""

    def __init__(self, inner: Loader) -> None:
        self.inner = inner

    def load_batch(self, lines: list[bytes]) -> None:
        self.inner.load_batch(lines)

    def load_file(self, path: Path, documents: int) -> bool:
        return self.inner.load_file(path, documents)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("skipping", [True, False])
def test_whole_file_fast_path_names_or_falls_back_to_batches(tmp_path: Path, skipping: bool) -> None:
    """DuckDB takes a plain file whole. With its skipping path the refused line is named in
    the same pass (no batch retried); with the all-or-nothing path the refused file is loaded
    in batches instead. Either way only the refused line is lost; a file with a blank line
    never takes the fast path."""
    from docbench.workloads.load import plain_file_documents

    system = open_adapter("duckdb", "analytics", tmp_path / "db")
    system.engine.start()
    system.create()
    clean = tmp_path / "file_0001.json"
    clean.write_bytes(b"\n".join([GOOD] * 10) + b"\n")
    dirty = tmp_path / "file_0002.json"
    dirty.write_bytes(b"\n".join([GOOD] * 4 + [b'{"did": broken'] + [GOOD] * 5) + b"\n")
    blank = tmp_path / "file_0003.json"
    blank.write_bytes(GOOD + b"\n\n" + GOOD + b"\n")
    assert plain_file_documents(clean) == 10 and plain_file_documents(blank) is None
    loader = system.loader() if skipping else WithoutSkipping(system.loader())
    report = load_files(loader, [clean, dirty, blank], 100)
    assert report.whole_file_refusals == (0 if skipping else 1)
    assert (report.retried_batches == 0) == skipping  # bisection only without the skipping path
    assert [(r.file, r.line) for r in report.refused] == [("file_0002.json", 5)]
    assert "Malformed JSON" in report.refused[0].reason
    assert report.offered == 10 + 10 + 2 and report.empty_lines == 1
    assert system.count() == 10 + 9 + 2
    system.release()
    system.engine.stop()


def test_the_live_line_knows_which_file_of_how_many(sqlite, tmp_path: Path) -> None:
    paths = []
    for number in (1, 2, 3):
        path = tmp_path / f"file_000{number}.json"
        path.write_bytes(b"\n".join([GOOD] * 5) + b"\n")
        paths.append(path)
    seen: list[tuple[int, int, str]] = []
    load_files(sqlite.loader(), paths, 2, on_file=lambda done, total, p: seen.append((done, total, p.name)))
    assert seen == [(0, 3, "file_0001.json"), (1, 3, "file_0002.json"), (2, 3, "file_0003.json")]
    assert sqlite.count() == 15


def test_duckdb_takes_plain_files_two_per_statement_and_names_each_files_refusals(tmp_path: Path) -> None:
    """DuckDB's reader runs its threads across files: the driver hands it two files per
    statement, commits them as one unit, and every refusal keeps its own file and line."""
    files = []
    for number in range(1, 4):
        lines = [GOOD] * 50
        lines[10 * number - 1] = b'{"did": "\\ud83d"}'  # a lone surrogate: DuckDB refuses it
        path = tmp_path / f"file_{number:04d}.json"
        path.write_bytes(b"\n".join(lines) + b"\n")
        files.append(path)
    system = open_adapter("duckdb", "analytics", tmp_path / "db")
    system.engine.start()
    try:
        system.create()
        units: list[list[str]] = []
        report = load_files(
            system.loader(), files, 7, on_committed=lambda paths, _: units.append([p.name for p in paths])
        )
        assert units == [["file_0001.json", "file_0002.json"], ["file_0003.json"]]
        assert sorted((r.file, r.line) for r in report.refused) == [
            ("file_0001.json", 10),
            ("file_0002.json", 20),
            ("file_0003.json", 30),
        ]
        assert all("surrogate" in r.reason for r in report.refused)
        assert report.retried_batches == 0
        assert system.count() == 3 * 49
    finally:
        system.release()
        system.engine.stop()
