"""docbench's DuckDB worker: one database file, statements over JSON lines (the duckdb113 system).

Run by the Python of the venv that holds DuckDB 1.1.3 (``$DOCBENCH_OPT/duckdb-1.1.3``), never
imported by docbench: two versions of the ``duckdb`` module cannot live in one process. It
needs the standard library and ``duckdb`` only.

    python -I worker.py DATABASE [--read-only]

Requests, one JSON object per line on stdin; one answer per request on stdout, in order:

    {"op": "execute", "sql": TEXT, "params": [...] | {...} | null, "own_connection": false}
        -> {"ok": true, "columns": [...], "rows": [[...], ...], "seconds": S}
        -> {"ok": false, "type": "InvalidInputException", "message": "..."}
    {"op": "close"}       close the connection (DuckDB checkpoints the file when its last
                          connection closes) -> {"ok": true}
    {"op": "interrupt"}   interrupt the running statement; no answer of its own (the
                          statement's answer is its error)
    {"op": "exit"}        close and exit; end of input does the same

The first line written is ``{"ok": true, "ready": true, "duckdb": VERSION, "pid": PID}``.

``own_connection``: the statement runs in a connection of its own, opened for it and closed
after it (the worker's connection is closed first), as a ``duckdb DATABASE -c SQL`` command
does: JSONBench loads each 100k-line chunk that way, and the checkpoint at the close is part
of how the file is laid out. ``seconds``: the statement and its fetch, timed here.
Values that are not JSON (decimals, dates) are sent as their text.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import queue
import sys
import threading
import time
from typing import Any, BinaryIO, Required, TypedDict

import duckdb

# Nothing may try the network: with autoinstall/autoload off a statement that would need an
# extension fails instead of downloading it (json is built into the wheel).
CONFIG = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


class Answer(TypedDict, total=False):
    """An answer line: the first (``ready``), a statement's rows, or a failure."""

    ok: Required[bool]
    ready: bool
    duckdb: str
    pid: int
    columns: list[str]
    rows: list[tuple[object, ...]]
    seconds: float
    type: str
    message: str


def plain(value: object) -> str:
    """A value json cannot write, as text."""
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "surrogateescape")
    return str(value)


class Worker:
    def __init__(self, database: str, read_only: bool, answers: BinaryIO) -> None:
        self.database = database
        self.read_only = read_only
        self.answers = answers
        self.con: Any = None
        # The connection running a statement now (for "interrupt", from the reader thread).
        self.running: Any = None
        self.lock = threading.Lock()

    def connect(self) -> Any:
        return duckdb.connect(self.database, read_only=self.read_only, config=dict(CONFIG))

    def answer(self, message: Answer) -> None:
        self.answers.write(json.dumps(message, default=plain).encode() + b"\n")
        self.answers.flush()

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None

    def interrupt(self) -> None:
        with self.lock:
            if self.running is not None:
                self.running.interrupt()

    def execute(self, request: dict[str, object]) -> Answer:
        """A request line as read: a JSON object (client.py's ``Request``) whose values go to
        DuckDB as they are; a malformed one fails, and the failure is the answer."""
        own = bool(request.get("own_connection"))
        if own:
            self.close()
            con = self.connect()
        else:
            if self.con is None:
                self.con = self.connect()
            con = self.con
        params = request.get("params")
        with self.lock:
            self.running = con
        try:
            started = time.perf_counter()
            sql = request["sql"]
            cursor = con.execute(sql) if params is None else con.execute(sql, params)
            columns = [d[0] for d in cursor.description] if cursor.description else []
            rows = cursor.fetchall() if cursor.description else []
            seconds = time.perf_counter() - started
        finally:
            with self.lock:
                self.running = None
            if own:
                con.close()
        return {"ok": True, "columns": columns, "rows": rows, "seconds": seconds}

    def serve(self, requests: queue.Queue[dict[str, object] | None]) -> None:
        while True:
            request = requests.get()
            if request is None or request.get("op") == "exit":
                self.close()
                return
            try:
                if request.get("op") == "close":
                    self.close()
                    self.answer({"ok": True})
                elif request.get("op") == "execute":
                    self.answer(self.execute(request))
                else:
                    self.answer({"ok": False, "type": "ValueError", "message": f"unknown op {request!r}"})
            except Exception as error:  # noqa: BLE001 - every failure is the answer
                self.answer({"ok": False, "type": type(error).__name__, "message": str(error)})


def read_requests(source: BinaryIO, worker: Worker, requests: queue.Queue[dict[str, object] | None]) -> None:
    """Each line of stdin: "interrupt" at once, the rest in order to the main thread."""
    for line in source:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            request = {"op": f"(not a JSON object: {line[:80]!r})"}
        if request.get("op") == "interrupt":
            worker.interrupt()
        else:
            requests.put(request)
    requests.put(None)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--read-only"):
        print("usage: worker.py DATABASE [--read-only]", file=sys.stderr)
        return 2
    # The answers get their own descriptor; whatever else writes to stdout goes to stderr (the
    # log), so that nothing but answers ever reaches docbench on that pipe.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    worker = Worker(argv[1], len(argv) == 3, answers)
    requests: queue.Queue[dict[str, object] | None] = queue.Queue()
    threading.Thread(target=read_requests, args=(sys.stdin.buffer, worker, requests), daemon=True).start()
    worker.answer({"ok": True, "ready": True, "duckdb": duckdb.__version__, "pid": os.getpid()})
    worker.serve(requests)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
