"""The storage workload on real engines, with small row counts (issue #7)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from docbench.results import result_path
from docbench.systems import system_class
from docbench.workloads.storage import documents
from docbench.workloads.storage.report import (
    cross_system_table,
    experiment_tables,
    load_storage_results,
    print_storage_report,
)
from docbench.workloads.storage.runner import StorageRequest, matrix_module, run_storage

ROWS = 200
SIZES = [1000, 9000]


def _available(name: str) -> bool:
    return matrix_module(name) is not None and system_class(name).availability().ok


def _run(tmp_path: Path, systems: list[str], variants: list[str],
         entropies: list[str]) -> Path:
    results = tmp_path / "results"
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    os.chmod(tmp_path, 0o755)
    os.chmod(work, 0o755)
    request = StorageRequest(system_names=systems, results_dir=results, rows=ROWS, sizes=SIZES,
                             entropies=entropies, variants=variants, work_dir=work)
    assert run_storage(request) == 0
    return results


def _cells(results: Path, system: str, variant: str) -> dict[tuple[int, str], dict]:
    path = result_path(results, system, variant, f"r{ROWS}", workload="storage")
    document = json.loads(path.read_text())
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
    loaded = load_storage_results([results])
    assert {d["system"] for d in loaded} == set(systems)
    assert experiment_tables(loaded) and cross_system_table(loaded).row_count == len(loaded)
    from rich.console import Console

    console = Console(record=True, width=200)
    assert print_storage_report([results], console=console)
    assert "bytes on disk per byte of input" in console.export_text()


def test_report_without_storage_results(tmp_path: Path) -> None:
    assert print_storage_report([tmp_path]) is False
