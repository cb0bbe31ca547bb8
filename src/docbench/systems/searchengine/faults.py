"""What a cluster goes through during a run: its health over time (how long it was yellow or
red), and the node kill ``--kill-node load|queries[@SECONDS]`` injects into a managed cluster.

The monitor polls ``GET /_cluster/health`` twice a second on its own connection (failing over
like every client) and keeps the status changes; a restart docbench makes for a cold run pauses
it, so only faults count. The injector SIGKILLs one node (its JVM and launcher, by PID) a few
seconds after the phase started: the run goes on on the surviving nodes and the result says
what happened.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import TYPE_CHECKING, TypedDict

from docbench.contracts.cluster import NodeKill
from docbench.core.jsontypes import JsonObject
from docbench.systems.searchengine.http import HttpClient, to_int

if TYPE_CHECKING:
    from docbench.systems.searchengine.engine import SearchEngineBase

POLL_SECONDS = 0.5


class HealthChange(TypedDict):
    """The cluster's status from ``at`` (epoch seconds) on."""

    at: float
    status: str
    nodes: int
    unassigned_shards: int


class HealthMonitor:
    """The cluster's status (green/yellow/red/unreachable) over time, from a thread."""

    def __init__(self, urls: str) -> None:
        self.urls = urls
        self.changes: list[HealthChange] = []
        self.worst_unassigned = 0
        self._paused = threading.Event()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="cluster-health", daemon=True)
        self._started = time.time()
        self._pauses: list[tuple[float, float]] = []
        self._paused_at: float | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=10)

    def pause(self) -> None:
        with self._lock:
            self._paused.set()
            self._paused_at = time.time()

    def resume(self, urls: str) -> None:
        with self._lock:
            self.urls = urls
            if self._paused_at is not None:
                self._pauses.append((self._paused_at, time.time()))
            self._paused_at = None
            self._paused.clear()

    def _run(self) -> None:
        client: HttpClient | None = None
        client_urls = None
        while not self._stopped.wait(POLL_SECONDS):
            if self._paused.is_set():
                continue
            if client is None or client_urls != self.urls:
                if client is not None:
                    client.close()
                client_urls = self.urls
                client = HttpClient(client_urls, timeout=2)
            try:
                health = client.request_object("GET", "/_cluster/health?timeout=1s", ok=(200, 408))
                status = str(health.get("status", "unknown"))
                unassigned = to_int(health.get("unassigned_shards", 0))
                nodes = to_int(health.get("number_of_nodes", 0))
            except Exception:  # noqa: BLE001 - no node answered: that is a status too
                status, unassigned, nodes = "unreachable", 0, 0
            self._record(status, unassigned, nodes)
        if client is not None:
            client.close()

    def _record(self, status: str, unassigned: int, nodes: int) -> None:
        with self._lock:
            if self._paused.is_set():
                return
            self.worst_unassigned = max(self.worst_unassigned, unassigned)
            last = self.changes[-1] if self.changes else None
            if last is None or last["status"] != status or last["nodes"] != nodes:
                self.changes.append(
                    {"at": time.time(), "status": status, "nodes": nodes, "unassigned_shards": unassigned}
                )

    def summary(self) -> JsonObject:
        """Seconds in each status (pauses for docbench's own restarts left out), the changes
        with their time from the start of monitoring."""
        with self._lock:
            changes = list(self.changes)
            pauses = list(self._pauses)
        end = time.time()
        seconds: dict[str, float] = {}
        for index, change in enumerate(changes):
            until = changes[index + 1]["at"] if index + 1 < len(changes) else end
            span = until - change["at"]
            for paused_from, paused_to in pauses:
                span -= max(0.0, min(until, paused_to) - max(change["at"], paused_from))
            seconds[change["status"]] = seconds.get(change["status"], 0.0) + max(0.0, span)
        return {
            "poll_seconds": POLL_SECONDS,
            "seconds": {status: round(value, 1) for status, value in seconds.items()},
            "worst_unassigned_shards": self.worst_unassigned,
            "changes": [
                {
                    "at": c["at"],
                    "status": c["status"],
                    "nodes": c["nodes"],
                    "unassigned_shards": c["unassigned_shards"],
                    "after_s": round(c["at"] - self._started, 1),
                }
                for c in changes
            ],
            "paused_for_restarts": len(pauses),
        }


class FaultInjector:
    """Kills one node of the engine's managed cluster ``kill.delay`` s after ``kill.phase``
    started (once per run)."""

    def __init__(self, engine: SearchEngineBase, kill: NodeKill) -> None:
        self.engine = engine
        self.kill = kill
        self.events: list[JsonObject] = []
        self._timer: threading.Timer | None = None
        self._phase_started: float | None = None

    def phase_started(self, phase: str) -> None:
        if phase != self.kill.phase or self._timer is not None:
            return
        self._phase_started = time.time()
        self._timer = threading.Timer(self.kill.delay, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def phase_ended(self, phase: str) -> None:
        if phase == self.kill.phase and self._timer is not None and not self.events:
            self._timer.cancel()
            self.events.append(
                {
                    "phase": phase,
                    "killed": None,
                    "note": f"the {phase} phase ended before {self.kill.delay:g} s: no node was killed",
                }
            )

    def _fire(self) -> None:
        from docbench.systems.searchengine.node import SearchCluster

        cluster = self.engine.node
        if not isinstance(cluster, SearchCluster):
            return
        try:
            name, pids = cluster.kill()
        except Exception as error:  # noqa: BLE001 - recorded: the run goes on
            self.events.append({"phase": self.kill.phase, "killed": None, "error": str(error)})
            return
        started = self._phase_started or time.time()
        self.events.append(
            {
                "phase": self.kill.phase,
                "killed": name,
                "signal": "SIGKILL",
                "pids": [*pids],
                "at": time.time(),
                "after_phase_start_s": round(time.time() - started, 1),
            }
        )

    def cancel(self) -> None:
        if self._timer is not None:
            with contextlib.suppress(Exception):
                self._timer.cancel()

    def record(self) -> JsonObject:
        return {
            "planned": {"phase": self.kill.phase, "delay_s": self.kill.delay},
            "events": list(self.events),
        }
