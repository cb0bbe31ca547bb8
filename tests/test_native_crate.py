"""The Rust crate's own tests (generator model, rare-event lattice, spans, clock, scanner,
client loop, the shared vectors, the three programs end to end), and its layout: one library
and the three programs scripts/build-native.sh installs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CRATE = ROOT / "native" / "docbench-gen"
PROGRAMS = {"docbench-gen", "docbench-scan", "docbench-client"}


def _cargo() -> str:
    found = shutil.which("cargo")
    fallback = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo")) / "bin" / "cargo"
    # build-native.sh (run by `make install`) needs cargo too, so a machine that ran the
    # tests' setup has one.
    assert found or fallback.exists(), "cargo not found: scripts/build-native.sh installs Rust"
    return found or str(fallback)


def test_crate_unit_tests_pass():
    done = subprocess.run(
        [_cargo(), "test", "--release", "--locked", "--quiet", "--manifest-path", str(CRATE / "Cargo.toml")],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "test result: ok" in done.stdout


def test_crate_is_a_library_and_the_installed_programs():
    manifest = tomllib.loads((CRATE / "Cargo.toml").read_text())
    assert (CRATE / manifest["lib"]["path"]).is_file()
    bins = {b["name"]: CRATE / b["path"] for b in manifest["bin"]}
    assert set(bins) == PROGRAMS
    for name, path in bins.items():
        assert path.is_file() and path.parent == CRATE / "src" / "bin" and path.stem == name
    script = (ROOT / "scripts" / "build-native.sh").read_text()
    installed = re.search(r"PROGRAMS=\(([a-z -]+)\)", script)
    assert installed is not None and set(installed.group(1).split()) == PROGRAMS
    # Both sides of the shared vectors exist.
    for name in ("ycsb_keys.json", "dids.json"):
        assert (ROOT / "tests" / "fixtures" / "vectors" / name).is_file()


def test_the_checkout_root_holds_the_crate_and_a_stale_build_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """repo_root() is the checkout (it once pointed at src/, so no source was ever newer than
    a build and a stale program ran)."""
    from docbench.core import paths
    from docbench.dataset import native_scan

    root = paths.repo_root()
    assert (root / "pyproject.toml").is_file() and (root / "native" / "docbench-gen" / "Cargo.toml").is_file()
    program = tmp_path / "bin" / "docbench-scan"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setattr(paths, "opt_dir", lambda: tmp_path)
    monkeypatch.setattr(native_scan, "_sources_mtime", lambda: program.stat().st_mtime + 1)
    assert native_scan.find_native("docbench-scan") != program
    monkeypatch.setattr(native_scan, "_sources_mtime", lambda: program.stat().st_mtime - 1)
    assert native_scan.find_native("docbench-scan") == program
