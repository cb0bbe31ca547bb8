"""The storage workload on real engines, with small row counts (issue #7)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from docbench import results as result_files
from docbench.contracts import storage_documents as documents
from docbench.systems import adapter_module, adapter_variants, engine_class, open_adapter
from docbench.workloads.storage.report import (
    cross_system_table,
    experiment_tables,
    print_storage_report,
)
from docbench.workloads.storage.runner import StorageRequest, run_cell, run_storage

ROWS = 200
SIZES = [1000, 9000]


def _available(name: str) -> bool:
    return adapter_module(name, "storage") is not None and engine_class(name).availability().ok


def _run(
    tmp_path: Path,
    systems: list[str],
    variants: list[str],
    entropies: list[str],
    rows: int = ROWS,
    sizes: list[int] | None = None,
    urls: dict[str, str] | None = None,
) -> Path:
    results = tmp_path / "results"
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    os.chmod(tmp_path, 0o755)
    os.chmod(work, 0o755)
    request = StorageRequest(
        system_names=systems,
        results_dir=results,
        rows=rows,
        sizes=sizes or SIZES,
        entropies=entropies,
        variants=variants,
        work_dir=work,
        urls=urls or {},
    )
    assert run_storage(request) == 0
    return results


def _cells(results: Path, system: str, variant: str, rows: int = ROWS) -> dict[tuple[int, str], dict]:
    latest = result_files.latest_run(results, "storage", system, variant, f"r{rows}")
    assert latest is not None
    document = json.loads(latest[0].read_text())
    result_files.validate(document)
    assert document["workload"] == "storage"
    assert document["complete"] is True
    assert document["system"] == system and document["variant"] == variant
    for key in ("version", "date", "machine", "environment"):
        assert document[key]
    return {(c["size"], c["entropy"]): c for c in document["cells"]}


def test_documents_are_deterministic_and_sized() -> None:
    for entropy in documents.ENTROPIES:
        first = list(documents.rows(entropy, 3000, 3, seed=7))
        assert first == list(documents.rows(entropy, 3000, 3, seed=7))
        assert all(len(payload) == 3000 and payload.isascii() for _, payload in first)
        assert all('"' not in p and "\\" not in p for _, p in first)
    assert set(next(documents.rows("repetitive", 100, 1))[1]) == {"x"}
    text = next(documents.rows("text", 2000, 1))[1]
    assert " the " in text.lower() and "." in text


@pytest.mark.skipif(not _available("postgresql"), reason="PostgreSQL is not available")
def test_postgresql_toast_matrix(tmp_path: Path) -> None:
    variants = ["jsonb-plain-pglz", "jsonb-extended-pglz", "jsonb-external-pglz"]
    results = _run(tmp_path, ["postgresql"], variants, ["random", "repetitive"])

    plain = _cells(results, "postgresql", "jsonb-plain-pglz")
    assert plain[(1000, "random")]["failure"] is None
    assert plain[(1000, "random")]["rows_loaded"] == ROWS
    refused = plain[(9000, "random")]
    assert refused["failure"]["kind"] == "refused"
    assert "row is too big" in refused["failure"]["message"]
    assert refused["rows_loaded"] == 0

    extended = _cells(results, "postgresql", "jsonb-extended-pglz")
    random_cell, repetitive_cell = extended[(9000, "random")], extended[(9000, "repetitive")]
    assert random_cell["failure"] is None and random_cell["rows_loaded"] == ROWS
    # Random printable data does not shrink under pglz; one repeated character does.
    assert random_cell["bytes_per_input_byte"] > 0.95
    assert repetitive_cell["bytes_per_input_byte"] < 0.2
    assert repetitive_cell["detail"]["compressed_values"] == ROWS

    external = _cells(results, "postgresql", "jsonb-external-pglz")[(9000, "random")]
    detail = external["detail"]
    # The total includes the TOAST relation, where the values went, and the index.
    assert detail["toast"] > ROWS * 9000
    assert external["total_size"] == detail["table"] + detail["toast"] + detail["index"]
    assert external["total_size"] >= detail["toast"] + detail["table"]
    # Cross-check: the relations' files in the data directory.
    assert external["on_disk"] == pytest.approx(external["total_size"], rel=0.1)


@pytest.mark.skipif(not _available("clickhouse"), reason="chDB is not available")
def test_clickhouse_duckdb_sqlite_cells(tmp_path: Path) -> None:
    systems = [s for s in ("clickhouse", "duckdb", "sqlite") if _available(s)]
    results = _run(tmp_path, systems, ["zstd1", "auto", "jsonb"], ["random", "repetitive"])
    for system, variant in (("clickhouse", "zstd1"), ("duckdb", "auto"), ("sqlite", "jsonb")):
        if system not in systems:
            continue
        cells = _cells(results, system, variant)
        assert len(cells) == 4
        for cell in cells.values():
            assert cell["failure"] is None, cell
            assert cell["rows_loaded"] == ROWS
            assert cell["total_size"] > 0 and cell["on_disk"] > 0
            assert cell["insert_seconds"] is not None
    clickhouse = _cells(results, "clickhouse", "zstd1")
    assert clickhouse[(9000, "repetitive")]["bytes_per_input_byte"] < 0.05
    assert clickhouse[(9000, "random")]["bytes_per_input_byte"] > 0.7
    sqlite = _cells(results, "sqlite", "jsonb")
    # No compression in SQLite: repetitive takes the same room as random (overflow pages).
    assert sqlite[(9000, "repetitive")]["total_size"] == sqlite[(9000, "random")]["total_size"]
    assert sqlite[(9000, "random")]["detail"]["overflow"] > 0

    # The report reads the files.
    loaded = [d for d in result_files.load_results([results]) if d["workload"] == "storage"]
    assert {d["system"] for d in loaded} == set(systems)
    assert experiment_tables(loaded) and cross_system_table(loaded).row_count == len(loaded)
    from rich.console import Console

    console = Console(record=True, width=200)
    assert print_storage_report([results], console=console)
    assert "bytes on disk per byte of input" in console.export_text()


# The document stores and search engines: a few hundred rows at two sizes.
SERVER_ROWS = 300
SERVER_SIZES = [1000, 7000]


def _check_loaded(
    cells: dict[tuple[int, str], dict], rows: int = SERVER_ROWS, own_directory: bool = True
) -> None:
    """Every cell loaded all rows, and its total counts the data and the index (and is
    close to the data directory's size where docbench owns it)."""
    for cell in cells.values():
        assert cell["failure"] is None, cell
        assert cell["rows_loaded"] == rows
        assert cell["insert_seconds"] is not None and cell["finish_seconds"] is not None
        assert cell["data_size"] > 0 and cell["index_size"] > 0
        assert cell["total_size"] >= cell["data_size"] + cell["index_size"]
        if own_directory:
            assert cell["on_disk"] >= cell["total_size"] * 0.9


def test_matrix_variants_declared() -> None:
    """MongoDB: one variant per block compressor; the search engines mirror their analytics
    variants' names (JSONBench's configuration and the representations aside); FerretDB has
    a single one (DocumentDB's TOAST, no block compressor)."""
    names = {
        name: [v.name for v in adapter_variants(name, "storage")]
        for name in ("mongodb", "ferretdb", "elasticsearch", "opensearch")
    }
    assert names["mongodb"] == ["snappy", "zstd", "zlib", "none"]
    assert names["ferretdb"] == ["default"]
    # (not the analytics' jsonbench variants: JSONBench's template and Filebeat's documents)
    for engine in ("elasticsearch", "opensearch"):
        analytics = [
            v.name
            for v in adapter_variants(engine, "analytics")
            if not v.name.startswith("jsonbench") and v.role != "representation"
        ]
        assert names[engine] == analytics
    assert "jsonbench" in [v.name for v in adapter_variants("elasticsearch", "analytics")]
    no_source = adapter_variants("elasticsearch", "storage")[2]
    assert "cannot be retrieved" in no_source.description


@pytest.mark.skipif(not _available("ferretdb"), reason="FerretDB is not installed")
def test_ferretdb_cells(tmp_path: Path) -> None:
    results = _run(
        tmp_path, ["ferretdb"], ["default"], ["random", "repetitive"], rows=SERVER_ROWS, sizes=SERVER_SIZES
    )
    cells = _cells(results, "ferretdb", "default", rows=SERVER_ROWS)
    assert len(cells) == 4
    _check_loaded(cells)
    for cell in cells.values():
        # The servers were restarted in finish(): PostgreSQL's shutdown checkpoint wrote every
        # page; the data directory holds the cluster (catalogs, WAL) besides the collection.
        assert cell["detail"]["checkpoint"].startswith("servers restarted")
        assert cell["on_disk"] >= cell["total_size"]
    # DocumentDB is PostgreSQL: rows under TOAST's ~2 kB threshold are stored as they are,
    # larger ones compressed (pglz), which repetitive data shows and random data does not.
    small, large = min(SERVER_SIZES), max(SERVER_SIZES)
    assert small < 2000 < large
    assert cells[(small, "repetitive")]["bytes_per_input_byte"] > 0.9
    assert cells[(large, "repetitive")]["bytes_per_input_byte"] < 0.3
    assert cells[(large, "random")]["bytes_per_input_byte"] > 0.9


def test_mongodb_target_by_url_on_ferretdb(tmp_path: Path, mongodb_url: str) -> None:
    """The mongodb module (no mongod here) against a FerretDB server given by URL: the
    create option is sent (FerretDB ignores it), fsync is refused and recorded."""
    target = open_adapter("mongodb", "storage", tmp_path / "work", "zstd", url=mongodb_url)
    request = StorageRequest(
        rows=SERVER_ROWS, sizes=[1000], entropies=["random"], work_dir=tmp_path / "documents"
    )
    target.start()
    try:
        if not target.version().startswith("FerretDB"):
            pytest.skip("DOCBENCH_MONGODB_URL is not a FerretDB server")
        cell = run_cell(target, 1000, "random", request)
    finally:
        target.stop()
    _check_loaded({(1000, "random"): cell}, own_directory=False)
    assert cell["on_disk"] is None  # a server by URL: its directory is not docbench's
    assert cell["detail"]["block_compressor_requested"] == "zstd"
    assert cell["detail"]["checkpoint"].startswith("fsync refused")


@pytest.fixture(scope="module")
def search_tmp() -> Iterator[Path]:
    """Not tmp_path: its directories are 0700, which the unprivileged user the search
    engines run as cannot enter (see tests/test_system_elasticsearch.py)."""
    top = Path(tempfile.mkdtemp(prefix="docbench-test-storage-"))
    os.chmod(top, 0o755)
    try:
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.parametrize("engine", ["elasticsearch", "opensearch"])
def test_search_engine_cells(engine: str, search_tmp: Path) -> None:
    """best_compression on a few hundred rows (one node start), then no_source on one cell
    (a second start, and a wait of up to 30 s for the retention lease). Nodes of docbench's
    own: the split of the bytes into data and index comes from their data directory."""
    if not _available(engine):
        pytest.skip(f"{engine} is not installed")
    from docbench.servers import managed as server

    running_before = set(server.running_pids())  # the session's shared servers
    base = search_tmp / engine
    base.mkdir()
    results = _run(
        base, [engine], ["best_compression"], ["random", "repetitive"], rows=SERVER_ROWS, sizes=SERVER_SIZES
    )
    cells = _cells(results, engine, "best_compression", rows=SERVER_ROWS)
    assert len(cells) == 4
    _check_loaded(cells)
    for size in SERVER_SIZES:
        random_cell, repetitive_cell = cells[(size, "random")], cells[(size, "repetitive")]
        # Random printable characters do not shrink (and their words fill the inverted
        # index); one repeated character does, in _source and in the index.
        assert random_cell["bytes_per_input_byte"] > 0.9
        assert repetitive_cell["bytes_per_input_byte"] < 0.25
        assert repetitive_cell["total_size"] * 10 < random_cell["total_size"]
        assert random_cell["detail"]["segments"] == 1
        assert random_cell["detail"]["docs"] == SERVER_ROWS

    no_source_dir = search_tmp / f"{engine}-no-source"
    no_source_dir.mkdir()
    results = _run(no_source_dir, [engine], ["no_source"], ["random"], rows=SERVER_ROWS, sizes=[7000])
    cell = _cells(results, engine, "no_source", rows=SERVER_ROWS)[(7000, "random")]
    _check_loaded({(7000, "random"): cell})
    assert cell["detail"]["recovery_source"]["pruned"] is True
    assert cell["detail"]["deleted_docs"] == 0 and cell["detail"]["segments"] == 1
    # Stored fields are no longer the documents: only ids and sequence numbers.
    assert cell["data_size"] < SERVER_ROWS * 7000 * 0.05
    assert cell["total_size"] < cells[(7000, "random")]["total_size"] * 0.8
    if engine == "elasticsearch":
        assert not cell["detail"]["largest_fields"].get("_recovery_source")
    assert set(server.running_pids()) <= running_before  # the runs' own nodes stopped with them


def test_report_without_storage_results(tmp_path: Path) -> None:
    assert print_storage_report([tmp_path]) is False
