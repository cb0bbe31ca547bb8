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
        pytest.skip(f"real events not found at {path} (set DOCBENCH_SHARED)")
    return path
