"""Databend's query session: the analytics workload's query worker starts a Databend process
of its own on the database directory (a fresh engine: the first try is cold) and runs the
queries through it.

Only one process may hold a database directory, so the sessions of one process (concurrent
clients as threads) share one Databend process, which runs their statements one at a time.
"""

from __future__ import annotations

import threading
from pathlib import Path

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.core.jsontypes import JsonMapping
from docbench.systems.databend.engine import DatabendEngine, DatabendHost

_hosts_lock = threading.Lock()
# workdir -> (the Databend process, the sessions open on it)
_hosts: dict[str, tuple[DatabendHost, int]] = {}


def _open_host(workdir: str) -> DatabendHost:
    with _hosts_lock:
        host, users = _hosts.get(workdir, (None, 0))
        if host is None or host.process.poll() is not None:
            host, users = DatabendEngine(Path(workdir)).connect(), 0
        _hosts[workdir] = (host, users + 1)
        return host


def _close_host(workdir: str, host: DatabendHost) -> None:
    with _hosts_lock:
        current, users = _hosts.get(workdir, (None, 0))
        if current is not host:
            host.close()
            return
        if users <= 1:
            del _hosts[workdir]
            host.close()
        else:
            _hosts[workdir] = (host, users - 1)


class DatabendSession(QuerySession):
    def __init__(self, spec: JsonMapping) -> None:
        self.workdir = str(spec["workdir"])
        self.host = _open_host(self.workdir)

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        rows, seconds = self.host.execute(text)
        # The engine's time: measured in its process around the statement (rows included,
        # the pickling of the answer back to this process not).
        return QueryOutcome(rows=[tuple(row) for row in rows], engine_seconds=seconds)

    def explain(self, query_number: int, text: str) -> str | None:
        return "\n".join(str(row[0]) for row in self.host.rows(f"EXPLAIN {text}"))

    def engine_pids(self) -> list[int]:
        """The engine runs in the session's Databend process, not in the worker."""
        return [self.host.pid]

    def cancel(self) -> None:
        """This build cannot interrupt a statement from outside (no KILL QUERY without a
        server): the Databend process is stopped, and the statement fails."""
        self.host.kill()

    def close(self) -> None:
        _close_host(self.workdir, self.host)
