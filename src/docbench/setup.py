"""`docbench setup NAME`: run a system folder's idempotent installer (its setup.sh)."""

from __future__ import annotations

import os
import subprocess
import time

from rich.console import Console

from docbench import paths
from docbench.systems import REGISTERED, check_names, engine_class

console = Console(stderr=True)


def setup_systems(names: list[str]) -> int:
    if names == ["all"]:
        names = list(REGISTERED)
    check_names(names)
    failures = 0
    for name in names:
        cls = engine_class(name)
        script = cls.setup_script()
        if script is None:
            console.print(f"{name}: nothing to install (its libraries come with docbench)")
            continue
        console.print(f"{name}: running {script}")
        env = {**os.environ, "DOCBENCH_OPT": str(paths.opt_dir())}
        started = time.perf_counter()
        result = subprocess.run(["bash", str(script)], env=env, check=False)
        seconds = time.perf_counter() - started
        availability = cls.availability()
        if result.returncode != 0 or not availability.ok:
            failures += 1
            console.print(f"[red]{name}: setup failed after {seconds:.0f} s "
                          f"({availability.reason or result.returncode})[/red]")
        else:
            console.print(f"[green]{name}: ready, {availability.version} (setup {seconds:.0f} s)[/green]")
    return 1 if failures else 0
