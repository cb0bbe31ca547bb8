"""MariaDB's query session: the analytics workload's query worker runs the queries through it."""

from __future__ import annotations

import contextlib
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from docbench.contracts.analytics import QueryOutcome, QuerySession
from docbench.core.jsontypes import JsonMapping, as_float, as_int, as_str, object_or_empty
from docbench.systems.mariadb.engine import ConnectParams, connect, json_params


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


class MariaDBSession(QuerySession):
    """A PyMySQL connection in the query worker.

    engine_seconds = the statement's duration from MariaDB's session profiling
    (``SET profiling = 1``; ``SHOW PROFILES``): cheap, no performance_schema needed.
    """

    def __init__(self, spec: JsonMapping) -> None:
        self.spec = spec
        self.params = spec_params(spec)
        self.conn = connect(self.params)
        with self.conn.cursor() as cur:
            timeout = spec.get("timeout")
            if timeout:
                cur.execute(f"SET SESSION max_statement_time = {as_float(timeout, 'timeout'):.3f}")
            for name, value in object_or_empty(spec.get("session_settings")).items():
                if not re.fullmatch(r"[a-z_]+", name):
                    raise ValueError(f"bad session setting name {name!r}")
                cur.execute(f"SET SESSION {name} = %s", (value,))
            try:
                cur.execute("SET SESSION profiling = 1, profiling_history_size = 10")
                self.profiling = True
            except Exception:  # noqa: BLE001 - a server built without profiling
                self.profiling = False
        self.thread_id = self.conn.thread_id()

    def execute(self, query_number: int, text: str) -> QueryOutcome:
        with self.conn.cursor() as cur:
            cur.execute(text)
            rows = cur.fetchall()
            outcome = QueryOutcome(rows=[tuple(_plain(v) for v in row) for row in rows])
            if self.profiling:
                with contextlib.suppress(Exception):
                    cur.execute("SHOW PROFILES")
                    profiles = cur.fetchall()
                    if profiles:
                        outcome.engine_seconds = float(profiles[-1][1])
        return outcome

    def explain(self, query_number: int, text: str) -> str | None:
        with self.conn.cursor() as cur:
            cur.execute(f"EXPLAIN FORMAT=JSON {text}")
            plan = cur.fetchone()[0]
        return plan if isinstance(plan, str) else plan.decode()

    def engine_pids(self) -> list[int]:
        pid = self.spec.get("server_pid")
        if pid and Path(f"/proc/{pid}").exists():
            return [as_int(pid, "server_pid")]
        return []

    def cancel(self) -> None:
        with contextlib.suppress(Exception):
            other = connect(self.params, database=None)
            try:
                with other.cursor() as cur:
                    cur.execute(f"KILL QUERY {int(self.thread_id)}")
            finally:
                other.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


def spec_params(spec: JsonMapping) -> ConnectParams:
    """The connection parameters of a session spec, with the password read from its file."""
    password = None
    if spec.get("password_file"):
        password = Path(as_str(spec["password_file"], "password_file")).read_text().strip()
    return json_params(spec["params"], password)
