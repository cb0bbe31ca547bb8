"""`docbench setup NAME`: run a system folder's idempotent installer (its setup.sh)."""

from __future__ import annotations

import os
import subprocess
import time

from rich.console import Console

from docbench.contracts.engine import setup_script
from docbench.core import paths
from docbench.systems import REGISTERED, check_names, engine_class

console = Console(stderr=True)


def setup_systems(names: list[str]) -> int:
    """Run each system's installer; 1 when one failed. ``all``: every registered system, where
    one that the machine cannot run for a reason docbench cannot install around (a full JDK
    21+ on Debian 12) is reported as not available here, not as a failure."""
    every = names == ["all"]
    if every:
        names = list(REGISTERED)
    check_names(names)
    failures = 0
    for name in names:
        if not install(name, tolerate_machine=every):
            failures += 1
    return 1 if failures else 0


def install(name: str, tolerate_machine: bool = False) -> bool:
    """Run one system's setup.sh and check the system is available after it."""
    cls = engine_class(name)
    script = setup_script(cls)
    if script is None:
        console.print(f"{name}: nothing to install (its libraries come with docbench)")
        return True
    console.print(f"{name}: running {script}")
    env = {**os.environ, "DOCBENCH_OPT": str(paths.opt_dir())}
    started = time.perf_counter()
    result = subprocess.run(["bash", str(script)], env=env, check=False)
    seconds = time.perf_counter() - started
    availability = cls.availability()
    if result.returncode == 0 and availability.ok:
        console.print(f"[green]{name}: ready, {availability.version} (setup {seconds:.0f} s)[/green]")
        return True
    if result.returncode == 0 and availability.machine_lacks and tolerate_machine:
        console.print(
            f"[yellow]{name}: not available on this machine: {availability.reason} "
            f"({availability.install_hint}); its tests skip[/yellow]"
        )
        return True
    console.print(
        f"[red]{name}: setup failed after {seconds:.0f} s ({availability.reason or result.returncode})[/red]"
    )
    return False
