"""Marker documents of live ingest: freshness measured on documents a query looks for.

Once a second (or, when the system's lookup takes longer, as soon as the marker before it
has been found) the stream puts a marker at the head of its batch: a generated event (from a
generator file of its own, with no hard documents, so no engine refuses it for its content)
with a top-level ``"id"`` no Bluesky event has. Once its batch is acknowledged, a poller
thread asks the system whether a query sees it, with the system's own point lookup (the
portable ``point`` query, compiled: the value of ``did`` in the document with that id), until
one does. A marker's freshness is the time from its acknowledgement to the start of the
poll that first saw it: the poll's own duration is not counted, and its resolution is one
poll interval (plus the polls spent on the markers before it).

Markers are counted documents like the others (offered, acknowledged, in the final count).
A system whose representation has no point lookup (a variant whose paths are columns) has
no markers: its freshness comes from the visible count alone (``ingest.freshness_ms``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypedDict

import orjson

from docbench.contracts.analytics import AnalyticsAdapter
from docbench.contracts.common import NotSupported
from docbench.core.jsontypes import JsonObject
from docbench.queries.shapes import point_lookup
from docbench.systems import adapter_class

MARKER_EVERY_S = 1.0
# Marker ids: this base plus the table's count when the level starts plus the marker's
# number, so no two markers of one table share an id (each level starts from a count that
# includes the markers before it).
MARKER_ID_BASE = 10_000_000_000
# The generator's file for the markers' bodies (before the stream's, after any dataset's).
MARKER_FILE = 899_999
POLL_S = 0.05


class MarkersFreshness(TypedDict):
    """The markers' freshness, as a level's ``freshness_ms`` keeps it (method "markers")."""

    method: str
    p50: float | None
    p99: float | None
    max: float | None
    markers: int
    seen: int
    unseen_markers: int
    lost_markers: int
    every_s: float
    poll_ms_p50: float | None
    error: str | None
    points: list[list[float]]  # [second of its acknowledgement, freshness ms] per seen marker


def percentile(values: list[float], share: float) -> float | None:
    """The value below which ``share`` of ``values`` lie (nearest rank), to 0.1; None if none."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 1)


def marker_lookup(system: AnalyticsAdapter, marker_id: int) -> str | None:
    """The system's query for the marker ``marker_id`` (its point lookup: the portable
    query of `did` where `id` is the marker's, compiled), or None when it has none."""
    compiler = adapter_class(system.name, "portable")
    if compiler is None:
        return None
    try:
        return str(compiler(system.engine, system.variant).compile(point_lookup(("did",), marker_id)).text)
    except NotSupported:
        return None


@dataclass
class Marker:
    id: int
    lookup: str
    acknowledged: float | None = None
    seen: float | None = None  # the start of the poll that first saw it
    lost: bool = False  # refused, or its batch failed: no poll looks for it


@dataclass
class Markers:
    """The markers of one level: made by the stream, acknowledged with their batch, polled."""

    system: AnalyticsAdapter
    bodies: Iterator[bytes]
    first_id: int
    items: list[Marker] = field(default_factory=list)
    last: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    poll_seconds: list[float] = field(default_factory=list)
    error: str | None = None

    @property
    def enabled(self) -> bool:
        return marker_lookup(self.system, self.first_id) is not None

    def due(self, now: float) -> bool:
        """A marker a second, and only when the one before it has been seen (or lost): the
        poller looks for one marker at a time, so a lookup slower than a second (a scan of a
        growing table) would queue markers and measure the queue instead of the engine."""
        return (self.last is None or now - self.last >= MARKER_EVERY_S) and self.outstanding() == 0

    def make(self, now: float) -> tuple[bytes, Marker]:
        """The next marker's line (to lead a batch), and the marker."""
        marker_id = self.first_id + len(self.items)
        document = orjson.loads(next(self.bodies))
        document["id"] = marker_id
        lookup = marker_lookup(self.system, marker_id)
        assert lookup is not None
        marker = Marker(marker_id, lookup)
        with self.lock:
            self.items.append(marker)
        self.last = now
        return orjson.dumps(document), marker

    def pending(self) -> Marker | None:
        with self.lock:
            return next(
                (m for m in self.items if m.seen is None and not m.lost and m.acknowledged is not None), None
            )

    def outstanding(self) -> int:
        """Markers not yet seen that a poll may still see (or whose batch is in flight)."""
        with self.lock:
            return sum(1 for m in self.items if m.seen is None and not m.lost)

    def summary(self, start: float | None = None) -> MarkersFreshness:
        """The markers' freshness; with ``start`` (the stream's), each seen marker as
        [second of its acknowledgement, freshness ms] (the dashboard's curve)."""
        seen = [m for m in self.items if m.seen is not None and m.acknowledged is not None]
        fresh = [(m.seen - m.acknowledged) * 1000 for m in seen]  # type: ignore[operator]
        points = (
            [[round(m.acknowledged - start, 3), round(ms, 1)] for m, ms in zip(seen, fresh, strict=True)]  # type: ignore[operator]
            if start is not None
            else []
        )
        return {
            "method": "markers",
            "p50": percentile(fresh, 0.5),
            "p99": percentile(fresh, 0.99),
            "max": round(max(fresh), 1) if fresh else None,
            "markers": len(self.items),
            "seen": len(fresh),
            "unseen_markers": sum(1 for m in self.items if m.seen is None and not m.lost),
            "lost_markers": sum(1 for m in self.items if m.lost),
            "every_s": MARKER_EVERY_S,
            # The resolution: a poll every POLL_S, each taking this long (median).
            "poll_ms_p50": percentile([s * 1000 for s in self.poll_seconds], 0.5),
            "error": self.error,
            "points": points,
        }


def poll_markers(markers: Markers, spec: JsonObject, finished: threading.Event) -> None:
    """Look for the oldest acknowledged marker not yet seen, every POLL_S (at once after one
    is seen: the next may be visible too), until ``finished``. The session is opened in this
    thread (SQLite's connections belong to their thread)."""
    session = None
    try:
        session = type(markers.system).open_session(spec)
        while not finished.is_set():
            marker = markers.pending()
            if marker is None:
                finished.wait(POLL_S)
                continue
            started = time.perf_counter()
            if seen_by(session, marker):
                marker.seen = started
            else:
                finished.wait(max(0.0, POLL_S - (time.perf_counter() - started)))
            markers.poll_seconds.append(time.perf_counter() - started)
    except Exception as error:  # noqa: BLE001 - recorded; the level goes on without markers
        markers.error = f"{type(error).__name__}: {error}"[:300]
    finally:
        if session is not None:
            with contextlib.suppress(Exception):
                session.close()


def seen_by(session: Any, marker: Marker) -> bool:
    """Whether the point lookup finds the marker (a failed poll is a poll that did not)."""
    try:
        rows = session.execute(0, marker.lookup).rows  # a compiled text: query number 0
    except Exception:  # noqa: BLE001 - the server may be restarting: polled again
        return False
    return bool(rows) and rows[0][0] is not None


def stop_polling(
    markers: Markers, finished: threading.Event, poller: threading.Thread, give_up: Callable[[], bool]
) -> None:
    """Let the poller see the markers still outstanding until ``give_up()``, then stop it."""
    while markers.outstanding() and not give_up() and poller.is_alive():
        time.sleep(POLL_S)
    with markers.lock:
        for marker in markers.items:
            if marker.seen is None and marker.acknowledged is None:
                marker.lost = True  # its batch never returned
    finished.set()  # markers still unseen now stay unseen
    poller.join(timeout=10)
