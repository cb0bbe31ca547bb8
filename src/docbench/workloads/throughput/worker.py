"""A spawned worker process of the throughput driver: open its clients' sessions, wait for
the common start, run them, report.

Its clients run in the compiled loop (compiled.py: docbench-client, where the system offers
it), else in the multiplexed loop (multiplexed.py: one thread, non-blocking
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

from docbench.contracts.updates import CompiledClient, NonBlockingSession
from docbench.workloads.throughput.clients import Client, WorkerConfig, final_message, run_threads
from docbench.workloads.throughput.compiled import CompiledClientError, CompiledWorker, find_client
from docbench.workloads.throughput.multiplexed import MultiplexedWorker


def _join_cgroups(files: list[str]) -> None:
    for path in files:
        with open(path, "w") as handle:
            handle.write(str(os.getpid()))


def _open_sessions(target: Any, config: WorkerConfig) -> tuple[list[tuple[int, Any]], list[int]]:
    sessions, connect_ns = [], []
    for client_id in config.client_ids:
        began = time.monotonic_ns()
        sessions.append((client_id, target.open_session(config.session_spec)))
        connect_ns.append(time.monotonic_ns() - began)
    return sessions, connect_ns


def multiplexed(sessions: list[tuple[int, Any]], config: WorkerConfig) -> bool:
    return config.loop in ("auto", "multiplexed") and all(
        isinstance(s, NonBlockingSession) for _, s in sessions
    )


def compiled_worker(target: Any, config: WorkerConfig, events: Any) -> CompiledWorker | None:
    """docbench-client for this worker's clients, when the loop allows it, the system
    describes its operations to it and it is built; None: the Python loops run."""
    if config.loop not in ("auto", "compiled"):
        return None
    # the target's class travels to the worker (its sessions are opened from the spec)
    kind = target if isinstance(target, type) else type(target)
    description = kind.compiled_client(config.session_spec) if issubclass(kind, CompiledClient) else None
    binary = find_client()
    if description is None or binary is None:
        if config.loop == "compiled":
            raise CompiledClientError(
                "the compiled client loop is not available here: "
                + (
                    "this system has no compiled session"
                    if description is None
                    else "docbench-client is not built (make native)"
                )
            )
        return None
    return CompiledWorker(config, description, events, binary)


def worker_main(config: WorkerConfig, events, go, start_at) -> None:
    """Entry point of a spawned worker: open sessions, wait for the start, run, report."""
    # numpy (the histograms) would start an OpenBLAS thread pool whose idle threads spin a
    # while after each use: measured at 1% of the machine, taken from the server.
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    sessions: list[tuple[int, Any]] = []
    compiled: CompiledWorker | None = None
    try:
        _join_cgroups(config.cgroup_files)
        target = importlib.import_module(config.target_module).ADAPTER
        compiled = compiled_worker(target, config, events)
        if compiled is not None:
            connect_ns = compiled.connect()
        else:
            sessions, connect_ns = _open_sessions(target, config)
    except Exception as exc:  # noqa: BLE001 - the driver reports it and stops the run
        events.put(("failed", config.worker_id, f"{type(exc).__name__}: {exc}"))
        return
    events.put(("ready", config.worker_id, connect_ns))
    try:
        if not go.wait(timeout=600):
            return
        start_ns = start_at.value
        if compiled is not None:
            compiled.run(start_ns)
            events.put(("final", config.worker_id, compiled.final_message(connect_ns)))
        elif multiplexed(sessions, config):
            loop = MultiplexedWorker(config, sessions, events)
            loop.run(start_ns)
            events.put(("final", config.worker_id, loop.final_message(connect_ns)))
        else:
            clients = [Client(client_id, config, session) for client_id, session in sessions]
            used = run_threads(config, clients, start_ns, events)
            events.put(("final", config.worker_id, final_message(clients, connect_ns, used)))
    finally:
        if compiled is not None:
            compiled.close()
        for _, session in sessions:
            with contextlib.suppress(Exception):
                session.close()
