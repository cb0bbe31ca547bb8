"""Refusals at native speed: an engine that skips and names the documents it refuses finds
exactly the hard documents it cannot take -- the same ones bisection finds -- and loads all the
others, on real engines, from plain and compressed files."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import broad_systems

from docbench.contracts.analytics import Loader
from docbench.dataset.lines import read_numbered_lines
from docbench.dataset.manifest import read_manifest
from docbench.dataset.reader import dataset_files
from docbench.systems import adapter_class, engine_class, open_adapter
from docbench.workloads.load import LoadReport, load_files

# The systems docbench starts or embeds (what each refuses: its adapter's refused_hard_kinds).
SYSTEMS = sorted(
    name
    for name in broad_systems()
    if adapter_class(name, "analytics") is not None and not engine_class(name).url_only
)
# Engines with a native path that names refused documents (adapter.native_refusals): "skips"
# them in one pass, or "stops" at each (PostgreSQL's COPY before 17: its block is sent again).
NATIVE = sorted(name for name in SYSTEMS if adapter_class(name, "analytics").native_refusals)
SKIPPING = sorted(name for name in NATIVE if adapter_class(name, "analytics").native_refusals == "skips")


class BatchesOnly(Loader):
    """The same engine's loader, offered batches only: the bisection path."""

    def __init__(self, inner: Loader) -> None:
        self.inner = inner

    def load_batch(self, lines: list[bytes]) -> None:
        self.inner.load_batch(lines)

    def begin_file(self, name: str) -> None:
        self.inner.begin_file(name)

    def commit_file(self) -> None:
        self.inner.commit_file()

    def close(self) -> None:
        self.inner.close()


@pytest.fixture(scope="module")
def hard_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """6,000 documents in 3 files of 2,000, one in a hundred of them hard (every kind, in
    every file)."""
    from docbench.dataset.generate import generate_dataset

    out = tmp_path_factory.mktemp("hard-6k")
    out.chmod(0o755)
    generate_dataset(6_000, out, seed=14, jobs=2, docs_per_file=2_000, hard_rate=0.01, quiet=True)
    return out


def _expected(data: Path, system: str) -> dict[str, set[int]]:
    manifest = read_manifest(data)
    assert manifest is not None
    expected: dict[str, set[int]] = {}
    for hard in manifest.hard_documents:
        if hard.kind in adapter_class(system, "analytics").refused_hard_kinds:
            expected.setdefault(hard.file, set()).add(hard.line)
    return expected


def _load(system, files: list[Path], batches_only: bool) -> LoadReport:
    system.create()
    loader = system.loader()
    return load_files(BatchesOnly(loader) if batches_only else loader, files, type(system).load_batch_size)


@pytest.mark.parametrize("name", SYSTEMS)
def test_native_capture_finds_exactly_the_hard_documents_bisection_finds(
    name: str, hard_data: Path, server_url
) -> None:
    home = Path(tempfile.mkdtemp(prefix=f"docbench-refusals-{name}-"))
    home.chmod(0o755)
    system = open_adapter(name, "analytics", home / "db", url=server_url(name))
    system.engine.start()
    try:
        files = dataset_files(hard_data)
        expected = _expected(hard_data, name)
        assert sum(map(len, expected.values())) >= 6  # the test means something
        native = _load(system, files, batches_only=False)
        native_count = system.count()
        assert native.refused_lines == expected
        assert native_count == 6_000 - sum(map(len, expected.values()))
        assert all(r.reason.strip() for r in native.refused)
        if name in NATIVE:
            # no batch was retried: the engine named the refused lines in one pass per file
            assert native.retried_batches == 0 and native.whole_file_refusals == 0
        if type(system.loader()).atomic_batches:  # (else no bisection can find them)
            # Bisection over the first file (it holds every kind): the same lines, and only them.
            bisected = _load(system, files[:1], batches_only=True)
            in_first = {k: v for k, v in native.refused_lines.items() if Path(k).name == files[0].name}
            assert in_first and bisected.refused_lines == in_first
            assert system.count() == 2_000 - sum(map(len, in_first.values()))
            if name in NATIVE:
                assert bisected.retried_batches > 0
    finally:
        system.release()
        system.engine.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.parametrize("name", NATIVE)
def test_compressed_files_load_exactly_what_plain_files_load(
    name: str, hard_data: Path, tmp_path: Path, server_url
) -> None:
    import gzip

    import zstandard

    files = dataset_files(hard_data)
    compressed = []
    for number, path in enumerate(files):
        if number % 2:
            target = tmp_path / f"{path.name}.gz"
            target.write_bytes(gzip.compress(path.read_bytes()))
        else:
            target = tmp_path / f"{path.name}.zst"
            target.write_bytes(zstandard.ZstdCompressor().compress(path.read_bytes()))
        compressed.append(target)
    system = open_adapter(name, "analytics", tmp_path / "db", url=server_url(name))
    system.engine.start()
    try:
        plain = _load(system, files, batches_only=False)
        plain_count = system.count()
        packed = _load(system, compressed, batches_only=False)
        assert system.count() == plain_count
        assert {Path(n).name.split(".json")[0]: lines for n, lines in packed.refused_lines.items()} == {
            Path(n).name.split(".json")[0]: lines for n, lines in plain.refused_lines.items()
        }
        assert packed.retried_batches == 0
    finally:
        system.release()
        system.engine.stop()


def test_numbered_lines_are_found_across_chunks(tmp_path: Path) -> None:
    lines = [f'{{"n":{i},"pad":"{"x" * (i % 300)}"}}'.encode() for i in range(1, 120_001)]
    path = tmp_path / "file.json"
    path.write_bytes(b"\n".join(lines))  # no newline at the end
    wanted = [1, 2, 59_999, 60_000, 119_999, 120_000, 120_001]
    found = read_numbered_lines(path, wanted)
    assert found == {n: lines[n - 1] for n in wanted if n <= 120_000}


@pytest.mark.parametrize("name", SKIPPING)
def test_a_file_mostly_refused_costs_no_query_per_line(name: str, tmp_path: Path, server_url) -> None:
    """250 of 300 lines refused: all named in one pass, each line's reason probed only for the
    first ones (chDB: 100, then 'gives no reason'; DuckDB: up to 1000)."""
    good = b'{"did":"did:plc:a","time_us":1,"kind":"commit"}'
    # A kind of document the engine refuses (SQLite takes lone surrogates, not deep nesting).
    if "lone_surrogate" in adapter_class(name, "analytics").refused_hard_kinds:
        bad = b'{"did":"did:plc:b","time_us":2,"kind":"commit","t":"\\ud800"}'
    else:
        bad = b'{"did":"did:plc:b","t":' + b"[" * 2000 + b"]" * 2000 + b"}"
    data = tmp_path / "file_0001.json"
    data.write_bytes(b"\n".join(bad if i % 6 else good for i in range(300)) + b"\n")
    system = open_adapter(name, "analytics", tmp_path / "db", url=server_url(name))
    system.engine.start()
    try:
        report = _load(system, [data], batches_only=False)
        assert report.refused_lines == {"file_0001.json": {i + 1 for i in range(300) if i % 6}}
        assert system.count() == 50 and report.retried_batches == 0
    finally:
        system.release()
        system.engine.stop()
