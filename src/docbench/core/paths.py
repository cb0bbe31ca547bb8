"""Where docbench keeps what it owns: datasets, results, engine work directories, installs.

Everything lives under one home directory (``$DOCBENCH_HOME``, default ``./.docbench``) so
that a run never writes anywhere it does not own and cleaning up is one ``rm -rf``.
"""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    return Path(os.environ.get("DOCBENCH_HOME", ".docbench")).resolve()


def datasets_dir() -> Path:
    return Path(os.environ.get("DOCBENCH_DATA", "data")).resolve()


def results_dir() -> Path:
    return Path(os.environ.get("DOCBENCH_RESULTS", "results")).resolve()


def work_dir() -> Path:
    """Engine data directories (databases, server clusters) that docbench creates and owns."""
    return home() / "work"


def opt_dir() -> Path:
    """Software that ``docbench setup`` installs (servers, built binaries).

    ``$DOCBENCH_OPT`` overrides it, so that several homes (e.g. one per test) share one install.
    """
    override = os.environ.get("DOCBENCH_OPT")
    return Path(override).resolve() if override else home() / "opt"


def repo_root() -> Path:
    """The source checkout, when docbench runs from one (for the native generator build)."""
    return Path(__file__).resolve().parents[3]


def cache_dir_for(data_dir: Path) -> Path:
    """Where derived files of a dataset (answers.json, baselines.json) are kept.

    Next to the data when docbench generated that dataset (it has docbench's dataset.json);
    otherwise under docbench's home, so a directory docbench does not own is never written.
    """
    data_dir = data_dir.resolve()
    if data_dir.is_dir() and (data_dir / "dataset.json").exists():
        return data_dir
    return own_cache_dir_for(data_dir)


def own_cache_dir_for(data_dir: Path) -> Path:
    """The place under docbench's home for derived files of a dataset, by its resolved path
    (for data docbench did not generate, and for a generated dataset it may not write to)."""
    import hashlib

    data_dir = data_dir.resolve()
    digest = hashlib.sha1(str(data_dir).encode()).hexdigest()[:16]
    return home() / "cache" / f"{data_dir.name}-{digest}"
