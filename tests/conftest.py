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


@pytest.fixture(scope="session")
def mongodb_url():
    """The server the mongodb system's tests reach by URL: $DOCBENCH_MONGODB_URL when set (a
    real MongoDB), else a FerretDB 2 on DocumentDB the tests start (``docbench setup
    ferretdb``), so that no mongodb test is skipped for want of a server."""
    import os
    import shutil
    import tempfile

    given = os.environ.get("DOCBENCH_MONGODB_URL")
    if given:
        yield given
        return
    from docbench.setup import setup_systems
    from docbench.systems.ferretdb.engine import FerretDBServer

    assert setup_systems(["ferretdb"]) == 0
    base = Path(tempfile.mkdtemp(prefix="docbench-mongodb-url-"))
    base.chmod(0o711)  # the server user walks to its data (pytest's tmp is 0700 root)
    server = FerretDBServer(base)
    server.start()
    try:
        yield server.uri
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
