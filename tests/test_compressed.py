"""Compressed datasets end to end: a gzip or zstd dataset loads exactly what its plain twin
loads, on every default system, with no decompressed copy on disk; DuckDB and chDB read the
compressed files with their own readers (the whole-file path), as by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import COLUMNAR, EMBEDDED, QUICK, SQL_SERVER

from docbench import results
from docbench.dataset.generate import generate_dataset
from docbench.systems import engine_class
from docbench.workloads.analytics.runner import RunRequest, run_analytics
from docbench.workloads.load import plain_file_documents

# Each test's engines and kept results live in a fresh DOCBENCH_HOME of its own.
pytestmark = pytest.mark.usefixtures("own_home")

DOCS = 6_000
PER_FILE = 3_000


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same documents (same seed, default hard documents) plain, gzip and zstd."""
    base = tmp_path_factory.mktemp("compressed")
    made = {}
    for compress in ("none", "gzip", "zstd"):
        out = base / compress
        generate_dataset(DOCS, out, seed=7, jobs=2, compress=compress, docs_per_file=PER_FILE, quiet=True)
        made[compress] = out
    return made


def test_compressed_files_are_named_and_counted_for_the_engines(twins: dict[str, Path]) -> None:
    for compress, suffix in (("gzip", ".gz"), ("zstd", ".zst")):
        files = sorted(p for p in twins[compress].iterdir() if p.name.startswith("file_"))
        assert files and all(p.name.endswith(f".json{suffix}") for p in files), files
        plain = sorted(p for p in twins["none"].iterdir() if p.name.startswith("file_"))
        assert [plain_file_documents(p) for p in files] == [plain_file_documents(p) for p in plain]


def _run(data: Path, results_dir: Path, systems: list[str], urls: dict[str, str]) -> dict[str, dict]:
    # Not about cold runs: no restarts; servers by URL (the session's).
    request = RunRequest(
        system_names=systems,
        data_dir=data,
        results_dir=results_dir,
        tries=1,
        quiet=True,
        variants=[COLUMNAR.variant, EMBEDDED.variant, QUICK.variant, SQL_SERVER.variant],
        urls=urls,
        restart_for_cold=False,
    )
    assert run_analytics(request) == 0
    return {d["system"]: d for d in results.load_results([results_dir])}


def test_compressed_input_loads_exactly_what_plain_input_loads(
    twins: dict[str, Path], tmp_path: Path, server_url
) -> None:
    systems = [COLUMNAR.system, EMBEDDED.system, QUICK.system]
    urls = {}
    if engine_class(SQL_SERVER.system).availability().ok:
        systems.append(SQL_SERVER.system)
        urls[SQL_SERVER.system] = server_url(SQL_SERVER.system)
    plain = _run(twins["none"], tmp_path / "plain", systems, urls)
    for compress in ("gzip", "zstd"):
        packed = _run(twins[compress], tmp_path / compress, systems, urls)
        for name in systems:
            a, b = plain[name], packed[name]
            assert b["num_loaded_documents"] == a["num_loaded_documents"], (compress, name)
            assert b["load_errors"]["count"] == a["load_errors"]["count"], (compress, name)
            assert [(r["line"], r["reason"]) for r in b["load_errors"]["first"]] == [
                (r["line"], r["reason"]) for r in a["load_errors"]["first"]
            ], (compress, name)
            assert [x["status"] for x in b["answers"]] == [x["status"] for x in a["answers"]]
            assert all(x["status"] in ("ok", "precision") for x in b["answers"]), (compress, name)
    # Nothing decompressed next to the data.
    decompressed = [p for p in twins["zstd"].iterdir() if p.name.startswith("file_") and p.suffix == ".json"]
    assert decompressed == []


# Two embedded engines of other families, each with its own reader of whole files.
@pytest.mark.parametrize("system", [EMBEDDED.system, COLUMNAR.system])
@pytest.mark.parametrize("compress", ["gzip", "zstd"])
def test_engines_read_compressed_files_themselves(
    system: str, compress: str, real_data_dir: Path, tmp_path: Path
) -> None:
    """The whole-file path, as by hand: the engine's own reader opens the .gz / .zst file."""
    import gzip

    import zstandard

    from docbench.systems import open_adapter

    lines = (real_data_dir / "jsonbench_file_0001_first1000.jsonl").read_bytes()
    path = tmp_path / f"file_0001.json.{'gz' if compress == 'gzip' else 'zst'}"
    packed = gzip.compress(lines) if compress == "gzip" else zstandard.ZstdCompressor().compress(lines)
    path.write_bytes(packed)
    assert plain_file_documents(path) == 1000
    adapter = open_adapter(system, "analytics", tmp_path / "db")
    adapter.engine.start()
    try:
        adapter.create()
        loader = adapter.loader()
        assert loader.takes_whole_files()
        loader.begin_file(path.name)
        assert loader.load_file_skipping(path, 1000) == {}  # nothing refused
        loader.commit_file()
        loader.close()
        assert adapter.count() == 1000
    finally:
        adapter.release()
        adapter.engine.stop()
    misnamed = tmp_path / "file_0002.json"
    misnamed.write_bytes(path.read_bytes())
    assert plain_file_documents(misnamed) is None  # the engine would not know: batches instead
