"""The Rust crate's own tests (generator model, rare-event lattice, spans, clock, scanner)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

CRATE = Path(__file__).resolve().parents[1] / "native" / "docbench-gen"


def _cargo() -> str:
    found = shutil.which("cargo")
    fallback = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo")) / "bin" / "cargo"
    # build-native.sh (run by `make install`) needs cargo too, so a machine that ran the
    # tests' setup has one.
    assert found or fallback.exists(), "cargo not found: scripts/build-native.sh installs Rust"
    return found or str(fallback)


def test_crate_unit_tests_pass():
    done = subprocess.run([_cargo(), "test", "--release", "--locked", "--quiet", "--manifest-path",
                           str(CRATE / "Cargo.toml")], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "test result: ok" in done.stdout
