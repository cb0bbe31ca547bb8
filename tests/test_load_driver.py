"""The generic load driver: batching, line numbers and bisection, on a real loader (the QUICK role's)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import DOCUMENT_SERVER, QUICK

from docbench.systems import open_adapter
from docbench.workloads.load import load_files

GOOD = b'{"did":"did:plc:a","time_us":1,"kind":"commit"}'


@pytest.fixture
def quick(tmp_path: Path):
    system = open_adapter(QUICK.system, "analytics", tmp_path / "db", QUICK.variant)
    system.engine.start()
    system.create()
    yield system
    system.release()
    system.engine.stop()


@pytest.mark.parametrize("batch_size", [1, 3, 7, 100])
def test_refused_lines_are_exactly_the_bad_ones_with_their_line_numbers(
    quick, tmp_path: Path, batch_size: int
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

    report = load_files(quick.loader(), [data], batch_size)

    assert report.empty_lines == len(blank_at)
    assert report.offered == 40 - len(blank_at)
    assert report.refused_count == len(bad_at)
    assert {r.line for r in report.refused} == bad_at
    assert report.refused_lines == {"file_0001.json": bad_at}
    assert all(r.file == "file_0001.json" and r.reason for r in report.refused)
    assert quick.count() == 40 - len(blank_at) - len(bad_at)


def test_line_numbers_continue_across_files_and_blocks(quick, tmp_path: Path) -> None:
    first = tmp_path / "file_0001.json"
    first.write_bytes(b"\n".join([GOOD] * 5) + b"\n")
    second = tmp_path / "file_0002.json"
    # A big file (several read blocks) with one bad line far in, and no trailing newline.
    body = [GOOD] * 60_000
    body[54_321 - 1] = b"not json"
    second.write_bytes(b"\n".join(body))
    report = load_files(quick.loader(), [first, second], 10_000)
    assert report.offered == 60_005
    assert [(r.file, r.line) for r in report.refused] == [("file_0002.json", 54_321)]
    assert quick.count() == 60_004


def test_refusals_named_by_the_engine_are_recorded_without_bisection(tmp_path: Path, server_url) -> None:
    """A bulk API that names the refused items (here a real DOCUMENT_SERVER, the session's:
    duplicate _id values) needs no bisection."""
    home = Path(tempfile.mkdtemp(prefix=f"docbench-{DOCUMENT_SERVER.system}-"))
    home.chmod(0o755)
    # pglz: a variant the session's server takes by URL (lz4 is for a managed server only)
    url = server_url(DOCUMENT_SERVER.system)
    system = open_adapter(DOCUMENT_SERVER.system, "analytics", home / "db", "pglz", url=url)
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


def test_the_live_line_knows_which_file_of_how_many(quick, tmp_path: Path) -> None:
    paths = []
    for number in (1, 2, 3):
        path = tmp_path / f"file_000{number}.json"
        path.write_bytes(b"\n".join([GOOD] * 5) + b"\n")
        paths.append(path)
    seen: list[tuple[int, int, str]] = []
    load_files(quick.loader(), paths, 2, on_file=lambda done, total, p: seen.append((done, total, p.name)))
    assert seen == [(0, 3, "file_0001.json"), (1, 3, "file_0002.json"), (2, 3, "file_0003.json")]
    assert quick.count() == 15
