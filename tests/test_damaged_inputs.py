"""Damaged input files stop a run before any engine starts, named: a compressed file cut
short (zstd, gzip, lz4) or with bytes after its last frame, and a file of a generated dataset
that is not what its dataset.json records. The runs go through the command line, as a user's
do, with the real embedded engines (conftest's roles: DuckDB, chDB) and the SQL server
(PostgreSQL) by URL. (The verification module is imported where it is used: the tests of the
command line run on a docbench without it too, and fail there for what they check.)"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import lz4.frame
import pytest
import zstandard
from conftest import COLUMNAR, EMBEDDED, SQL_SERVER

from docbench.dataset.generate import generate_dataset
from docbench.dataset.manifest import read_manifest
from docbench.dataset.reader import dataset_files
from docbench.systems import engine_class

DOCS = 6_000
PER_FILE = 3_000
SUFFIX = {"zstd": ".zst", "gzip": ".gz", "lz4": ".lz4"}
EMBEDDED_ENGINES = [EMBEDDED.system, COLUMNAR.system]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same 6,000 documents in two files, plain, gzip and zstd, with their manifests."""
    base = tmp_path_factory.mktemp("generated")
    made = {}
    for compress in ("none", "gzip", "zstd"):
        made[compress] = base / compress
        generate_dataset(DOCS, made[compress], seed=3, compress=compress, docs_per_file=PER_FILE, quiet=True)
    return made


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A DOCBENCH_HOME of the test's own (the unprivileged server user may enter it)."""
    tmp_path.chmod(0o755)
    path = tmp_path / "home"
    path.mkdir(mode=0o755)
    return path


def own_data(generated: dict[str, Path], compression: str, target: Path) -> list[Path]:
    """A user's directory (no dataset.json) with the two files in ``compression``."""
    target.mkdir()
    files = []
    for plain in dataset_files(generated["none"]):
        path = target / (plain.name + SUFFIX[compression])
        if compression == "lz4":
            path.write_bytes(lz4.frame.compress(plain.read_bytes()))
        else:
            shutil.copy(generated[compression] / path.name, path)
        files.append(path)
    return files


def docbench(home: Path, *argv: str, urls: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DOCBENCH_HOME": str(home), "COLUMNS": "400"}
    for name, url in (urls or {}).items():
        env[f"DOCBENCH_{name.upper()}_URL"] = url  # (not on the command line: no password in ps)
    return subprocess.run(
        [sys.executable, "-m", "docbench.cli", *argv], env=env, capture_output=True, text=True, timeout=900
    )


def run(home: Path, data: Path, systems: list[str], urls: dict[str, str] | None = None):
    results = home / "results"
    process = docbench(
        home, "run", "--data", str(data), "--systems", ",".join(systems), "--tries", "1",
        "--results", str(results), urls=urls,
    )  # fmt: skip
    return process, results


def assert_stopped_before_any_engine(process: subprocess.CompletedProcess[str], home: Path, results: Path):
    assert process.returncode != 0, process.stdout + process.stderr
    assert "Traceback" not in process.stderr, process.stderr
    assert not results.exists() or not any(results.iterdir()), list(results.iterdir())
    work = home / ".docbench" / "work"
    engines = [p.name for p in work.iterdir() if p.is_dir()] if work.exists() else []
    assert engines == [], engines  # no engine had a work directory: none was started


def error_lines(process: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in process.stderr.splitlines() if line.strip()]


# -- the run ------------------------------------------------------------------------------------


@pytest.mark.parametrize("compression", ["zstd", "gzip", "lz4"])
def test_a_file_cut_short_stops_the_run_before_any_engine_naming_file_offset_and_reason(
    compression: str, generated: dict[str, Path], home: Path, tmp_path: Path, server_url
) -> None:
    files = own_data(generated, compression, tmp_path / "data")
    cut = files[0].stat().st_size * 6 // 10
    files[0].write_bytes(files[0].read_bytes()[:cut])  # a download cut short (head -c)
    systems, urls = list(EMBEDDED_ENGINES), {}
    if compression == "zstd" and engine_class(SQL_SERVER.system).availability().ok:
        systems.append(SQL_SERVER.system)
        urls[SQL_SERVER.system] = server_url(SQL_SERVER.system)
    process, results = run(home, tmp_path / "data", systems, urls)
    assert_stopped_before_any_engine(process, home, results)
    [line] = [line for line in error_lines(process) if files[0].name in line]
    assert f"{files[0]}: truncated at byte {cut:,}: the {compression} " in line, line
    assert "incomplete" in line and "cut short" in line, line
    assert files[1].name not in process.stderr  # the whole file is not blamed


def test_bytes_after_the_last_zstd_frame_stop_the_run_naming_where_they_begin(
    generated: dict[str, Path], home: Path, tmp_path: Path
) -> None:
    files = own_data(generated, "zstd", tmp_path / "data")
    end = files[1].stat().st_size
    with open(files[1], "ab") as fh:
        fh.write(b"<html>not found</html>\n")
    process, results = run(home, tmp_path / "data", EMBEDDED_ENGINES)
    assert_stopped_before_any_engine(process, home, results)
    [line] = [line for line in error_lines(process) if files[1].name in line]
    assert f"{files[1]}: trailing garbage at byte {end:,}: the 23 bytes after the last zstd frame" in line


def test_a_byte_changed_in_a_generated_file_stops_the_run_naming_the_file(
    generated: dict[str, Path], home: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    shutil.copytree(generated["none"], data)
    path = data / "file_0002.json"
    content = bytearray(path.read_bytes())
    at = content.index(b'"did":"did:plc:', len(content) // 2) + 16
    content[at] = ord("a") if content[at] != ord("a") else ord("b")  # still valid JSON, another did
    path.write_bytes(content)
    process, results = run(home, data, EMBEDDED_ENGINES)
    assert_stopped_before_any_engine(process, home, results)
    [line] = error_lines(process)[-1:]
    assert line.startswith(f"{path}: changed since docbench generated it: its SHA-256 begins "), line
    assert f"(same size, {len(content):,} bytes)" in line, line


def test_a_generated_file_cut_short_or_missing_or_not_listed_is_named_against_the_manifest(
    generated: dict[str, Path], tmp_path: Path
) -> None:
    from docbench.dataset.verify import DamagedDataset, verify_dataset

    data = tmp_path / "data"
    shutil.copytree(generated["zstd"], data)
    recorded = {entry.name: entry.bytes for entry in read_manifest(data).files}  # type: ignore[union-attr]
    first, second = data / "file_0001.json.zst", data / "file_0002.json.zst"
    first.write_bytes(first.read_bytes()[:1000])
    second.rename(data / "file_0003.json.zst")
    with pytest.raises(DamagedDataset) as raised:
        verify_dataset(data, dataset_files(data))
    cut, missing, extra = raised.value.problems
    assert cut.startswith(f"{first}: truncated at byte 1,000: the zstd frame that begins at byte 0"), cut
    assert f"dataset.json records {recorded[first.name]:,} bytes" in cut, cut
    assert missing.startswith(f"{second}: missing: dataset.json lists it"), missing
    assert extra.startswith(f"{data / 'file_0003.json.zst'}: not in dataset.json"), extra


# -- the oracle ---------------------------------------------------------------------------------


def test_the_oracle_computes_no_answers_from_a_file_cut_short(
    generated: dict[str, Path], home: Path, tmp_path: Path
) -> None:
    files = own_data(generated, "zstd", tmp_path / "data")
    files[1].write_bytes(files[1].read_bytes()[:-10])
    process = docbench(home, "answers", str(tmp_path / "data"))
    assert process.returncode != 0, process.stdout
    assert "Traceback" not in process.stderr, process.stderr
    assert "Q1" not in process.stdout  # no answers printed
    assert f"{files[1]}: truncated at byte {files[1].stat().st_size:,}" in process.stderr


# -- the check itself ---------------------------------------------------------------------------


def walk(fmt: str, data: bytes, step: int) -> None:
    """Feed ``data`` to a frame walk in reads of ``step`` bytes (headers split between reads)."""
    from docbench.dataset.verify import FORMATS, FrameWalk

    frames = FrameWalk(FORMATS[fmt], len(data))
    for at in range(0, len(data), step):
        frames.feed(data[at : at + step])
    frames.finish()


def test_whole_files_of_several_frames_pass_in_reads_of_any_size() -> None:
    text = b"".join(b'{"n":%d,"kind":"commit"}\n' % i for i in range(20_000))
    half = len(text) // 2
    skippable = (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"12345"
    zstd = zstandard.ZstdCompressor(write_checksum=True)
    from docbench.dataset.verify import Damage

    whole = {
        "zstd": zstd.compress(text[:half]) + skippable + zstd.compress(text[half:]),
        "gzip": gzip.compress(text[:half]) + gzip.compress(text[half:]),
        "lz4": lz4.frame.compress(text[:half], content_checksum=True)
        + skippable
        + lz4.frame.compress(text[half:]),
    }
    for fmt, data in whole.items():
        for step in (1 << 20, 65_537, 7, 3):
            walk(fmt, data, step)  # no Damage
        for cut in (len(data) - 1, len(data) - 4, 2, 5):
            with pytest.raises(Damage, match=f"truncated at byte {cut:,}"):
                walk(fmt, data[:cut], 7)
        with pytest.raises(Damage, match=f"trailing garbage at byte {len(data):,}: the 2 bytes"):
            walk(fmt, data + b"\n\n", 3)


def test_damaged_compressed_data_is_named_with_the_decompressor_reason(tmp_path: Path) -> None:
    from docbench.dataset.verify import Damage

    text = b"".join(b'{"n":%d}\n' % i for i in range(50_000))
    data = bytearray(gzip.compress(text))
    data[-6] ^= 0xFF  # the CRC-32 of the member
    with pytest.raises(Damage, match="damaged at byte .*: .*incorrect data check"):
        walk("gzip", bytes(data), 1 << 20)


def test_a_whole_dataset_is_hashed_once_for_the_oracle(generated: dict[str, Path]) -> None:
    from docbench.dataset.reader import known_sha256
    from docbench.dataset.verify import verify_dataset

    data = generated["gzip"]
    verified = verify_dataset(data, dataset_files(data), jobs=2)
    assert (verified.files, verified.manifest) == (2, True)
    for entry in read_manifest(data).files:  # type: ignore[union-attr]
        assert known_sha256(data / entry.name) == entry.sha256  # nothing hashes it again
