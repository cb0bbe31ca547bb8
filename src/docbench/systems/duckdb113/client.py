"""docbench's side of the DuckDB 1.1.3 worker (``worker.py``, run by the venv's Python).

:class:`DuckDBWorker` starts the worker as a child that docbench stops by PID: a
:class:`~docbench.servers.managed.ManagedProcess` with pipes (its pid file in the work
directory, the death signal, stopped at exit, on Ctrl-C, SIGHUP and SIGTERM; its stderr in
``duckdb-worker.log``), then speaks its JSON lines: :meth:`DuckDBWorker.execute` returns a
:class:`Result` (``fetchone``/``fetchall``, as a DuckDB cursor) or raises :class:`WorkerError`
with DuckDB's exception class and message.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Required, TypedDict

from docbench.core.jsontypes import JsonObject, as_array, as_str, optional_float, optional_str
from docbench.servers.managed import ManagedProcess

WORKER_SCRIPT = Path(__file__).with_name("worker.py")
LOG_NAME = "duckdb-worker.log"
# How long a worker gets to close its database (DuckDB checkpoints it) before it is signalled.
EXIT_GRACE_SECONDS = 60.0
# DuckDB's exceptions for content it refuses (the documents themselves), not for a failure of
# its own (I/O, out of memory, internal errors).
CONTENT_ERRORS = frozenset({"InvalidInputException", "ConversionException"})


def sql_string(text: str) -> str:
    """``text`` as an SQL string literal (a path in a statement, as JSONBench's scripts write it)."""
    return "'" + text.replace("'", "''") + "'"


class Request(TypedDict, total=False):
    """A request line to the worker (``worker.py``'s module docstring has the protocol)."""

    op: Required[str]
    sql: str
    params: Any  # a list for ``?``/``$1``, a dict for ``$name``: handed to DuckDB as given
    own_connection: bool


class WorkerError(Exception):
    """DuckDB refused a statement in the worker: ``kind`` is its exception class's name, the
    message DuckDB's."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind

    @property
    def content_error(self) -> bool:
        return self.kind in CONTENT_ERRORS


class WorkerGone(RuntimeError):
    """The worker is not running (it exited, or was never started): the log's tail says why."""


@dataclass
class Result:
    """A statement's answer, read like a DuckDB cursor."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    seconds: float | None = None  # the statement and its fetch, timed in the worker

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


class DuckDBWorker:
    """One worker process on one database file, read-write or read-only."""

    def __init__(self, python: Path, database: Path, *, read_only: bool) -> None:
        mode = ["--read-only"] if read_only else []
        # -I: the worker sees none of docbench's PYTHON* variables (PYTHONPATH) or user site.
        argv = [str(python), "-I", str(WORKER_SCRIPT), str(database), *mode]
        self.process = ManagedProcess(argv, database.parent / LOG_NAME, cwd=database.parent, pipes=True)
        self.read_only = read_only
        self.version: str | None = None
        self._write_lock = threading.Lock()

    def start(self) -> DuckDBWorker:
        """Start the worker and wait for its first line (its DuckDB version)."""
        self.process.start()
        try:
            hello = self._receive()
        except BaseException:
            self.process.stop()
            raise
        self.version = optional_str(hello.get("duckdb"), "duckdb")
        return self

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.alive()

    # ----- statements ---------------------------------------------------------------------
    def execute(self, sql: str, params: Any = None, *, own_connection: bool = False) -> Result:
        """Run one statement (``params``: a list for ``?``/``$1``, a dict for ``$name``). With
        ``own_connection`` it runs in a connection opened for it and closed after it, as a
        ``duckdb FILE -c SQL`` command (the close checkpoints the file)."""
        answer = self._request(
            {"op": "execute", "sql": sql, "params": params, "own_connection": own_connection}
        )
        return Result(
            [as_str(column, "column") for column in as_array(answer["columns"], "columns")],
            [tuple(as_array(row, "row")) for row in as_array(answer["rows"], "rows")],
            optional_float(answer.get("seconds"), "seconds"),
        )

    def close_connection(self) -> None:
        """Close the worker's connection (the next statement opens another)."""
        self._request({"op": "close"})

    def interrupt(self) -> None:
        """Interrupt the running statement (from another thread; nothing when none runs)."""
        with contextlib.suppress(OSError, WorkerGone):
            self._send({"op": "interrupt"})

    def stop(self) -> None:
        """Let the worker close its database and exit, then stop it by PID (signal, SIGKILL)
        if it has not. Safe to call twice."""
        proc = self.process.proc
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(OSError, WorkerGone):
                self._send({"op": "exit"})
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(EXIT_GRACE_SECONDS)
        self.process.stop()

    # ----- the protocol -------------------------------------------------------------------
    def _request(self, message: Request) -> JsonObject:
        self._send(message)
        answer = self._receive()
        if not answer.get("ok"):
            raise WorkerError(str(answer.get("type", "Error")), str(answer.get("message", "")))
        return answer

    def _send(self, message: Request) -> None:
        proc = self.process.proc
        if proc is None or proc.stdin is None or proc.poll() is not None:
            raise self._gone()
        line = json.dumps(message).encode() + b"\n"
        with self._write_lock:
            try:
                proc.stdin.write(line)
                proc.stdin.flush()
            except (BrokenPipeError, ValueError) as error:  # ValueError: the pipe was closed
                raise self._gone() from error

    def _receive(self) -> JsonObject:
        proc = self.process.proc
        line = proc.stdout.readline() if proc is not None and proc.stdout is not None else b""
        if not line:
            raise self._gone()
        answer = json.loads(line)
        if not isinstance(answer, dict):
            raise WorkerGone(f"the DuckDB worker answered {line[:200]!r}, not a JSON object")
        return answer

    def _gone(self) -> WorkerGone:
        proc = self.process.proc
        if proc is None:
            return WorkerGone("the DuckDB worker was not started")
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        return WorkerGone(
            f"the DuckDB worker (PID {proc.pid}) exited with status {proc.returncode}; "
            f"{self.process.log_path}:\n{self.process.log_tail()}"
        )
