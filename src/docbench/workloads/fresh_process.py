"""Fresh worker processes, started cheaply.

A cold query needs a process that has never opened the engine; it does not need a new
interpreter that imports docbench again. multiprocessing's ``spawn`` paid that import (0.2-0.9
s of CPU, and the caller's ``__main__`` again) for every query. Here a *forkserver*, started
once per docbench process, imports docbench's modules (never an engine: no database library
is opened or started in it) and forks each worker from that clean, single-threaded state;
fork from the caller itself is never used (its engine threads could leave a lock held in the
child).

The forkserver keeps the environment it started with, while the caller changes it (a test's
own ``DOCBENCH_HOME``): each worker takes the caller's as it is when the worker starts, as a
spawned one would (:func:`run_in_callers_environment`; multiprocessing already passes the
working directory).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from multiprocessing.context import BaseContext
from typing import Any

# Imported once by the forkserver: docbench's CLI (a worker of the `docbench` command runs its
# console script again, which imports it: then a lookup in sys.modules), the workers, the system
# registry and the libraries they use (none starts a thread on import). Not "__main__":
# Python 3.11's forkserver never receives the main module's path.
PRELOAD = [
    "docbench.cli",
    "docbench.workloads.query_worker",
    "docbench.workloads.analytics.concurrent_clients",
    "docbench.workloads.throughput.worker",
    "docbench.systems",
    "docbench.workloads.forkserver_preload",  # last: the run's signal handlers undone
]

_context: BaseContext | None = None


def context() -> BaseContext:
    """The multiprocessing context of docbench's worker processes (a forkserver where the
    platform has one, else spawn)."""
    global _context
    if _context is None:
        if "forkserver" in multiprocessing.get_all_start_methods():
            forkserver = multiprocessing.get_context("forkserver")
            forkserver.set_forkserver_preload(PRELOAD)
            _context = forkserver
        else:
            _context = multiprocessing.get_context("spawn")
    return _context


def process(target: Callable[..., Any], args: tuple[Any, ...], **options: Any) -> multiprocessing.Process:
    """A process (not started) that runs ``target(*args)`` in the caller's environment as it
    is now."""
    return context().Process(  # type: ignore[attr-defined]
        target=run_in_callers_environment, args=(dict(os.environ), target, args), **options
    )


def run_in_callers_environment(
    environ: dict[str, str], target: Callable[..., Any], args: tuple[Any, ...]
) -> Any:
    os.environ.clear()
    os.environ.update(environ)
    return target(*args)


def end_processes(processes: list[multiprocessing.Process], grace_s: float) -> None:
    """End the workers: those that finish within ``grace_s`` (one wait for all, not one per
    process) by themselves, the others by SIGTERM, then SIGKILL. A caller cut short (Ctrl-C,
    SIGTERM) passes 0: nothing is left to measure, and its workers may be minutes from the
    end of their window."""
    started = [process for process in processes if process.pid is not None]
    for limit, stop in ((grace_s, None), (5.0, "terminate"), (5.0, "kill")):
        if stop is not None:
            for process in started:
                if process.is_alive():
                    getattr(process, stop)()
        deadline = time.monotonic() + limit
        for process in started:
            process.join(max(0.0, deadline - time.monotonic()))
