"""Storage baselines at scale: per file, in parallel, cached per file, sampled beyond 10 files
(the raw bytes stay exact)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docbench.dataset import baselines
from docbench.dataset.reader import dataset_files


@pytest.fixture(scope="module")
def twelve_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from docbench.dataset.generate import generate_dataset

    out = tmp_path_factory.mktemp("twelve")
    generate_dataset(12_000, out, seed=5, jobs=2, docs_per_file=1_000, quiet=True)
    return out


def test_every_file_up_to_ten_then_a_sample_with_exact_raw_bytes(twelve_files: Path) -> None:
    files = dataset_files(twelve_files)
    exact, _, basis = baselines.compute_baselines(files[:10])
    assert basis == "every file (10) compressed"
    assert exact["raw"] == sum(p.stat().st_size for p in files[:10])
    sampled, per_file, basis = baselines.compute_baselines(files, jobs=2)
    assert "from 10 evenly spread files" in basis and len(per_file) == 10
    assert sampled["raw"] == sum(p.stat().st_size for p in files)  # exact
    every = [baselines.file_baselines(p) for p in files]
    for name in ("gzip", "zstd", "lz4"):
        assert sampled[name] == pytest.approx(sum(s[name] for s in every), rel=0.03)


def test_cached_per_file_and_only_new_files_are_compressed(
    twelve_files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for path in dataset_files(twelve_files)[:3]:
        (data / path.name).write_bytes(path.read_bytes())
    monkeypatch.setenv("DOCBENCH_HOME", str(tmp_path / "home"))
    compressed: list[str] = []
    real = baselines.file_baselines

    def counting(path: Path) -> dict[str, int]:
        compressed.append(path.name)
        return real(path)

    monkeypatch.setattr(baselines, "file_baselines", counting)
    first = baselines.dataset_baselines(data)
    assert sorted(compressed) == ["file_0001.json", "file_0002.json", "file_0003.json"]
    assert baselines.dataset_baselines(data) == first and len(compressed) == 3  # cached
    fourth = dataset_files(twelve_files)[3]
    (data / fourth.name).write_bytes(fourth.read_bytes())
    grown = baselines.dataset_baselines(data)
    assert compressed[3:] == [fourth.name]  # only the new file
    assert grown["raw"] == first["raw"] + fourth.stat().st_size
    cache = json.loads(next((tmp_path / "home" / "cache").rglob("baselines.json")).read_text())
    assert sorted(cache["files"]) == sorted(p.name for p in dataset_files(data))
