"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def shared_dir() -> Path:
    """The shared directory beside the repository (``$DOCBENCH_SHARED`` overrides it)."""
    env = os.environ.get("DOCBENCH_SHARED")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The real Bluesky events of ``shared/data/bluesky-real`` (skips when absent)."""
    path = shared_dir() / "data" / "bluesky-real"
    if not path.is_dir():
        # CI always has shared/ beside the clone: there a missing directory is a failure.
        missing = pytest.fail if os.environ.get("CI") else pytest.skip
        missing(f"real events not found at {path} (set DOCBENCH_SHARED)")
    return path


@pytest.fixture(scope="session")
def generated_20k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated dataset of 20,000 documents in two files (with its manifest and answers)."""
    from docbench.dataset.generate import generate_dataset

    out = tmp_path_factory.mktemp("bluesky-20k")
    generate_dataset(20_000, out, seed=20, jobs=2, docs_per_file=10_000, quiet=True)
    return out
