"""`docbench bench load`: docbench's load of data with hard documents against the engine's
native load of its clean twin, on real engines, leaving no database behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EMBEDDED, QUICK

from docbench.dataset.generate import generate_dataset
from docbench.dataset.manifest import read_manifest
from docbench.systems import adapter_class
from docbench.workloads.analytics.loadbench import bench_load_overhead


def test_bench_load_compares_with_the_clean_twin_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCBENCH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("DOCBENCH_HOME", str(tmp_path / "home"))
    data = tmp_path / "data" / "hard-6k"
    generate_dataset(6_000, data, seed=3, docs_per_file=3_000, hard_rate=2e-3, quiet=True)
    hard = read_manifest(data).hard_documents
    assert hard, "the dataset must hold hard documents"

    systems = [QUICK.system, EMBEDDED.system]
    rows = {row["system"]: row for row in bench_load_overhead(systems, data_dir=data, repeat=1)}

    twin = read_manifest(tmp_path / "data" / "hard-6k-clean")
    assert twin.hard_rate == 0 and twin.docs == 6_000 and len(twin.files) == 2
    # What each engine refuses (its adapter's refused_hard_kinds, held to the engine by
    # test_native_refusals): two engines that refuse different kinds.
    refusable = {name: adapter_class(name, "analytics").refused_hard_kinds for name in systems}
    assert all(refusable.values()) and refusable[QUICK.system] != refusable[EMBEDDED.system]
    for name, kinds in refusable.items():
        row = rows[name]
        expected = sum(1 for h in hard if h.kind in kinds)
        assert expected > 0
        assert row["refused"] == expected
        assert row["documents"] == 6_000 - expected
        assert row["docbench_seconds"] > 0 and row["native_seconds"] > 0
        assert row["ratio"] == pytest.approx(row["docbench_seconds"] / row["native_seconds"])
    assert not list((tmp_path / "home").rglob("loadbench-*")), "bench load left a database"
