"""The storage workload on real engines, with small row counts (issue #7)."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import COLUMNAR, EMBEDDED, QUICK, SEARCH, SEARCH_OTHER

from docbench import results as result_files
from docbench.contracts import storage_documents as documents
from docbench.systems import adapter_module, adapter_variants, engine_class
from docbench.workloads.storage.report import (
    cross_system_table,
    experiment_tables,
    print_storage_report,
)
from docbench.workloads.storage.runner import StorageRequest, run_storage

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


# The embedded engines' storage variants this test runs (each its role's engine's own).
EMBEDDED_CELLS = ((COLUMNAR.system, "zstd1"), (EMBEDDED.system, "auto"), (QUICK.system, QUICK.variant))


def own_checks(system: str, name: str):
    """The check a system's own test module (tests/test_system_<system>.py) defines under
    ``name`` for what its engine does in a cross-cutting run, or None."""
    return getattr(importlib.import_module(f"test_system_{system}"), name, None)


@pytest.mark.skipif(not _available(COLUMNAR.system), reason=f"{COLUMNAR.display_name} is not available")
def test_embedded_engine_cells(tmp_path: Path) -> None:
    """The embedded engines together: every cell loaded and sized, then what each engine's
    own module says of its cells (``check_storage_cells``), and the report of them all."""
    systems = [s for s, _ in EMBEDDED_CELLS if _available(s)]
    results = _run(tmp_path, systems, [v for _, v in EMBEDDED_CELLS], ["random", "repetitive"])
    for system, variant in EMBEDDED_CELLS:
        if system not in systems:
            continue
        cells = _cells(results, system, variant)
        assert len(cells) == 4
        for cell in cells.values():
            assert cell["failure"] is None, cell
            assert cell["rows_loaded"] == ROWS
            assert cell["total_size"] > 0 and cell["on_disk"] > 0
            assert cell["insert_seconds"] is not None
    for system in (COLUMNAR.system, QUICK.system):
        check = own_checks(system, "check_storage_cells")
        assert check is not None, system
        check(results)

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


@pytest.mark.parametrize("engine", [SEARCH, SEARCH_OTHER], ids=lambda role: role.system)
def test_search_engines_storage_variants_mirror_their_analytics(engine) -> None:
    """The search engines mirror their analytics variants' names (JSONBench's configuration
    and the representations aside)."""
    # (not the analytics' jsonbench variants: JSONBench's template and Filebeat's documents)
    analytics = [
        v.name
        for v in adapter_variants(engine.system, "analytics")
        if not v.name.startswith("jsonbench") and v.role != "representation"
    ]
    assert [v.name for v in adapter_variants(engine.system, "storage")] == analytics


def test_report_without_storage_results(tmp_path: Path) -> None:
    assert print_storage_report([tmp_path]) is False


def search_engine_cells(engine: str) -> dict:
    """best_compression on a few hundred rows (one node start), then no_source on one cell
    (a second start, and a wait of up to 30 s for the retention lease). Nodes of docbench's
    own: the split of the bytes into data and index comes from their data directory. Returns
    the no_source cell (tests/test_system_elasticsearch.py and test_system_opensearch.py).

    Not tmp_path: its directories are 0700, which the unprivileged user the search engines
    run as cannot enter (see tests/test_system_elasticsearch.py)."""
    if not _available(engine):
        pytest.skip(f"{engine} is not installed")
    from docbench.servers import managed as server

    search_tmp = Path(tempfile.mkdtemp(prefix="docbench-test-storage-"))
    os.chmod(search_tmp, 0o755)
    try:
        running_before = set(server.running_pids())  # the session's shared servers
        base = search_tmp / engine
        base.mkdir()
        results = _run(
            base,
            [engine],
            ["best_compression"],
            ["random", "repetitive"],
            rows=SERVER_ROWS,
            sizes=SERVER_SIZES,
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
        assert set(server.running_pids()) <= running_before  # the runs' own nodes stopped with them
        return cell
    finally:
        shutil.rmtree(search_tmp, ignore_errors=True)
