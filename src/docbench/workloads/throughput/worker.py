"""A spawned worker process of the throughput driver: open its clients' sessions, wait for
the common start, run them, report.

Its clients run in the multiplexed loop (multiplexed.py: one thread, non-blocking
connections) when every session is a :class:`~docbench.contracts.updates.NonBlockingSession`,
else each on a thread of its own (clients.py). Either way each client has its own connection
and one operation in flight, and the worker reports the CPU time it used, which the driver
prints per operation.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import time
from typing import Any

from docbench.contracts.updates import NonBlockingSession
from docbench.workloads.throughput.clients import Client, WorkerConfig, final_message, run_threads
from docbench.workloads.throughput.multiplexed import MultiplexedWorker


def _join_cgroups(files: list[str]) -> None:
    for path in files:
        with open(path, "w") as handle:
            handle.write(str(os.getpid()))


def _open_sessions(config: WorkerConfig) -> tuple[list[tuple[int, Any]], list[int]]:
    target = importlib.import_module(config.target_module).ADAPTER
    sessions, connect_ns = [], []
    for client_id in config.client_ids:
        began = time.monotonic_ns()
        sessions.append((client_id, target.open_session(config.session_spec)))
        connect_ns.append(time.monotonic_ns() - began)
    return sessions, connect_ns


def multiplexed(sessions: list[tuple[int, Any]], config: WorkerConfig) -> bool:
    return not config.threads and all(isinstance(s, NonBlockingSession) for _, s in sessions)


def worker_main(config: WorkerConfig, events, go, start_at) -> None:
    """Entry point of a spawned worker: open sessions, wait for the start, run, report."""
    # numpy (the histograms) would start an OpenBLAS thread pool whose idle threads spin a
    # while after each use: measured at 1% of the machine, taken from the server.
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    try:
        _join_cgroups(config.cgroup_files)
        sessions, connect_ns = _open_sessions(config)
    except Exception as exc:  # noqa: BLE001 - the driver reports it and stops the run
        events.put(("failed", config.worker_id, f"{type(exc).__name__}: {exc}"))
        return
    events.put(("ready", config.worker_id, connect_ns))
    try:
        if not go.wait(timeout=600):
            return
        start_ns = start_at.value
        if multiplexed(sessions, config):
            loop = MultiplexedWorker(config, sessions, events)
            loop.run(start_ns)
            events.put(("final", config.worker_id, loop.final_message(connect_ns)))
        else:
            clients = [Client(client_id, config, session) for client_id, session in sessions]
            used = run_threads(config, clients, start_ns, events)
            events.put(("final", config.worker_id, final_message(clients, connect_ns, used)))
    finally:
        for _, session in sessions:
            with contextlib.suppress(Exception):
                session.close()
