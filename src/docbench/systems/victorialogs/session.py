"""VictoriaLogs' query session: LogsQL over HTTP (``/select/logsql/query``), rows turned into
the canonical rows of :mod:`docbench.core.answers`.

engine_seconds = the server's own ``Vl-Request-Duration-Seconds`` answer header.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.core.jsontypes import JsonMapping, JsonObject, as_array, as_float, as_int, as_object, as_str
from docbench.systems.victorialogs.engine import VLClient
from docbench.systems.victorialogs.portable import HEADER as PORTABLE_HEADER


def timestamp_ns(text: str) -> int:
    """Nanoseconds since the epoch of VictoriaLogs' RFC 3339 UTC timestamp (``...Z``)."""
    from datetime import UTC, datetime

    body = text.rstrip("Z")
    whole, _, fraction = body.partition(".")
    seconds = datetime.fromisoformat(whole).replace(tzinfo=UTC).timestamp()
    return int(seconds) * 1_000_000_000 + int((fraction or "0").ljust(9, "0")[:9])


def _integer(text: str | None) -> int:
    """A sum as VictoriaLogs writes it (a float's text; NaN over no value) as an integer."""
    value = float(text) if text not in (None, "") else 0.0
    return 0 if value != value else int(value)


def _portable_value(text: str | None, kind: str) -> str | int | float | None:
    """A value of the server's text as its column's kind reads it (keys stay text: that is
    what VictoriaLogs keeps)."""
    if text in (None, ""):
        return 0 if kind in ("count", "count_distinct") else None
    if kind == "key":
        return text
    number = float(text)
    if number != number:  # NaN: an aggregate over no number
        return None
    return int(number) if kind in ("count", "count_distinct", "bucket") or number.is_integer() else number


def _portable_rows(header: JsonObject, answer: list[dict[str, str]]) -> list[tuple[Any, ...]]:
    from docbench.queries.semantics import sort_by_columns

    names = [as_str(name, "columns") for name in as_array(header["columns"], "columns")]
    kinds = [as_str(kind, "kinds") for kind in as_array(header["kinds"], "kinds")]
    rows = [
        [_portable_value(r.get(name), kind) for name, kind in zip(names, kinds, strict=True)] for r in answer
    ]
    order = [as_array(column, "order") for column in as_array(header["order"], "order")]
    rows = sort_by_columns(rows, [(as_int(i, "order"), bool(desc)) for i, desc in order])
    return [tuple(row) for row in (rows[: as_int(header["limit"], "limit")] if header.get("limit") else rows)]


class VictoriaLogsSession(QuerySession):
    def __init__(self, spec: JsonMapping) -> None:
        self.spec = spec
        timeout = spec.get("timeout")
        self.timeout = as_float(timeout, "timeout") if timeout else None
        self.client = VLClient(
            as_str(spec["url"], "url"), timeout=self.timeout + 30 if self.timeout else None
        )

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        if text.startswith(PORTABLE_HEADER):  # a portable query (victorialogs/portable.py)
            header, _, text = text.partition("\n")
            answer = self.client.query(text, timeout=self.timeout)
            rows = _portable_rows(as_object(json.loads(header[len(PORTABLE_HEADER) :]), "header"), answer)
        else:
            answer = self.client.query(text, timeout=self.timeout)
            rows = self._rows(query_number, answer)
        outcome = QueryOutcome(rows=rows)
        with contextlib.suppress(KeyError, ValueError):
            outcome.engine_seconds = float(self.client.last_headers["vl-request-duration-seconds"])
        return outcome

    @staticmethod
    def _rows(number: int, answer: list[dict[str, str]]) -> list[tuple[Any, ...]]:
        collection = "commit.collection"
        if number == 1:
            return [(r.get(collection), int(r["count"])) for r in answer]
        if number == 2:
            return [(r.get(collection), int(r["count"]), int(r["users"])) for r in answer]
        if number == 3:
            return [(r.get(collection), int(float(r["hour_of_day"])), int(r["count"])) for r in answer]
        if number == 4:
            return [(r.get("did"), r["first_post_ts"]) for r in answer]
        if number == 5:
            # The span from the two timestamps, in integers: exact (ns -> ms).
            return [
                (r.get("did"), (timestamp_ns(r["tmax"]) - timestamp_ns(r["tmin"])) / 1_000_000)
                for r in answer
            ]
        # any other query (a test's): the rows as the server gave them
        return [tuple(r.values()) for r in answer]

    def engine_pids(self) -> list[int]:
        pid = self.spec.get("server_pid")
        return [as_int(pid, "server_pid")] if pid and Path(f"/proc/{pid}").exists() else []

    def cancel(self) -> None:
        # VictoriaLogs stops a query whose client went away.
        conn = self.client.conn
        if conn is not None and conn.sock is not None:
            with contextlib.suppress(OSError):
                import socket

                conn.sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.client.close()
