"""PostgreSQL's query session: the analytics workload's query worker runs the queries through it."""

from __future__ import annotations

import contextlib
import json
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.core.jsontypes import JsonMapping, JsonValue, as_float, as_object, as_str, object_or_empty
from docbench.systems.postgresql.engine import psycopg_module

if TYPE_CHECKING:
    from psycopg.abc import ConnDict

# Statistics of one statement kept by pg_stat_statements (deltas are taken around a query).
_STATS_SQL = """
SELECT s.queryid, s.calls, s.total_plan_time + s.total_exec_time,
       s.shared_blks_hit, s.shared_blks_read, s.temp_blks_written,
       (SELECT a.query_id FROM pg_stat_activity a WHERE a.pid = pg_backend_pid())
FROM pg_stat_statements(false) s
WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND s.userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)
"""


def _plain(value: Any) -> Any:
    """Decimals (numeric) become int or float so rows compare and pickle plainly."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


class PostgreSQLSession(QuerySession):
    """A psycopg connection in the query worker.

    engine_seconds = planning + execution time of the query as pg_stat_statements recorded it
    (the delta of its entry around the query); None when pg_stat_statements is not available.
    """

    def __init__(self, spec: JsonMapping) -> None:
        psycopg = psycopg_module()
        self.spec = spec
        self.conn = psycopg.connect(spec_conninfo(spec), autocommit=True)
        timeout = spec.get("timeout")
        if timeout:
            self.conn.execute(f"SET statement_timeout = {max(1, int(as_float(timeout, 'timeout') * 1000))}")
        # Optional planner/session settings (e.g. {"enable_seqscan": "off"} to study plans).
        for name, value in object_or_empty(spec.get("session_settings")).items():
            self.conn.execute("SELECT set_config(%s, %s, false)", (name, str(value)))
        self.backend_pid = int(self.conn.execute("SELECT pg_backend_pid()").fetchone()[0])
        self._own_query_ids: set[int] = set()
        self.stats_available = self._probe_stats()

    # pg_stat_statements -----------------------------------------------------------------
    def _probe_stats(self) -> bool:
        try:
            self._snapshot()
            self._snapshot()  # the second one records the first: learn our own query id
            return True
        except Exception:  # noqa: BLE001 - not loaded, not installed, no permission
            return False

    def _snapshot(self) -> dict[int, tuple[float, ...]]:
        rows = self.conn.execute(_STATS_SQL).fetchall()
        stats: dict[int, tuple[float, ...]] = {}
        for queryid, calls, ms, hit, read, temp, own in rows:
            if own is not None:
                self._own_query_ids.add(int(own))
            if queryid is None:
                continue
            old = stats.get(int(queryid), (0, 0.0, 0, 0, 0))
            stats[int(queryid)] = (old[0] + calls, old[1] + ms, old[2] + hit, old[3] + read, old[4] + temp)
        return stats

    def _delta(
        self, before: dict[int, tuple[float, ...]], after: dict[int, tuple[float, ...]]
    ) -> tuple[float, ...] | None:
        best = None
        for queryid, now in after.items():
            if queryid in self._own_query_ids:
                continue
            old = before.get(queryid, (0, 0.0, 0, 0, 0))
            if now[0] - old[0] >= 1:
                delta = tuple(n - o for n, o in zip(now, old, strict=True))
                if best is None or delta[1] > best[1]:
                    best = delta
        return best

    # QuerySession -----------------------------------------------------------------------
    def execute(self, query_number: int, text: str) -> QueryOutcome:
        before = self._snapshot() if self.stats_available else None
        rows = self.conn.execute(text).fetchall()
        outcome = QueryOutcome(rows=[tuple(_plain(v) for v in row) for row in rows])
        if before is not None:
            with contextlib.suppress(Exception):
                delta = self._delta(before, self._snapshot())
                if delta is not None:
                    outcome.engine_seconds = delta[1] / 1000.0
                    outcome.extra.update(
                        {
                            "shared_blks_hit": int(delta[2]),
                            "shared_blks_read": int(delta[3]),
                            "temp_blks_written": int(delta[4]),
                        }
                    )
        return outcome

    def explain(self, query_number: int, text: str) -> str | None:
        plan = self.conn.execute(f"EXPLAIN (FORMAT JSON) {text}").fetchone()[0]
        if isinstance(plan, str):
            plan = json.loads(plan)
        return json.dumps(plan, indent=1)

    def engine_pids(self) -> list[int]:
        # The backend serving this connection. Parallel workers are separate, short-lived
        # processes started per query: their memory and reads are not included (README).
        # A backend PID of another machine means nothing here.
        if not self.spec.get("local", True):
            return []
        try:
            cmdline = Path(f"/proc/{self.backend_pid}/cmdline").read_bytes()
        except OSError:
            return []
        return [self.backend_pid] if cmdline.startswith(b"postgres") else []

    def cancel(self) -> None:
        with contextlib.suppress(Exception):
            cancel = getattr(self.conn, "cancel_safe", None) or self.conn.cancel
            cancel()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


def spec_conninfo(spec: JsonMapping) -> str:
    """The conninfo of a session spec, with the password read from its file."""
    from psycopg.conninfo import make_conninfo

    params = conn_params(spec["conninfo"])
    if spec.get("password_file"):
        params["password"] = Path(as_str(spec["password_file"], "password_file")).read_text().strip()
    return make_conninfo("", **params)


def conn_params(value: JsonValue) -> ConnDict:
    """A session spec's libpq parameters (each a string, an integer or null), as psycopg takes them."""
    params: ConnDict = {}
    for name, item in as_object(value, "conninfo").items():
        if item is not None and not isinstance(item, str | int):
            raise TypeError(f"conninfo {name}: expected a string or an integer, got {type(item).__name__}")
        params[name] = item
    return params
