"""One run per work directory at a time, and a run's end on SIGHUP/SIGTERM.

Two runs sharing ``$DOCBENCH_HOME/work`` would share the engines' data directories: the second
server fails on the first one's lock files and its readiness check may reach the first run's
server. ``hold(work_dir)`` takes an exclusive ``flock`` on ``work_dir/run.lock`` for the whole
run (the kernel drops it when the process ends, however it ends: no stale lock after a
SIGKILL) and records who holds it, so that a second run stops at once and names the first.

``exit_on_signals()`` gives SIGHUP (an ssh session that drops) and SIGTERM the same end as
Ctrl-C: one line on stderr, then the run unwinds (``finally`` blocks stop engines) and exits
with status 128+signal, after ``atexit`` stopped every server still running (servers/managed.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

LOCK_NAME = "run.lock"
# EX_TEMPFAIL: the work directory is busy; try again later (or use another DOCBENCH_HOME).
BUSY_EXIT_STATUS = 75
EXIT_SIGNALS = (signal.SIGHUP, signal.SIGTERM)
_received: list[int] = []
MASK = "***"


def command_line(argv: list[str] | None = None) -> str:
    """This process's command as the user typed it (``docbench run ...``), the value of every
    ``--<system>-url`` hidden: a URL may hold a password, and the lock file is readable."""
    words = ["docbench"]
    hide_next = False
    for arg in (sys.argv if argv is None else argv)[1:]:
        name, eq, _ = arg.partition("=")
        if hide_next:
            arg = MASK
        elif name.startswith("--") and name.endswith("-url") and eq:
            arg = f"{name}={MASK}"
        hide_next = arg.startswith("--") and arg.endswith("-url")
        words.append(arg)
    return shlex.join(words)


@contextlib.contextmanager
def hold(work_dir: Path, command: str | None = None) -> Iterator[Path]:
    """Hold the work directory's run lock for the block; exit at once (status 75, naming the
    other run's PID and command) when another process holds it. Also installs the signal
    handlers, so that a signal received from here on ends the run cleanly."""
    exit_on_signals()
    path = work_dir / LOCK_NAME
    try:
        work_dir.mkdir(parents=True, exist_ok=True)
        # Not truncated before the lock is ours: the holder's record is what a second run reads.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as error:
        print(
            f"docbench: cannot take the run lock {path}: {error.strerror or error}",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(2) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(
                f"docbench: another run is using {work_dir}: {describe_holder(path)}; wait for it "
                "to end, or give this run its own DOCBENCH_HOME",
                file=sys.stderr,
                flush=True,
            )
            raise SystemExit(BUSY_EXIT_STATUS) from None
        record = {
            "pid": os.getpid(),
            "command": command or command_line(),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def holder(path: Path, wait: float = 2.0) -> dict[str, object] | None:
    """The record of the run holding the lock at ``path`` (it may be a moment from writing it)."""
    deadline = time.monotonic() + wait
    while True:
        with contextlib.suppress(OSError, ValueError):
            record = json.loads(path.read_text())
            if isinstance(record, dict):
                return record
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def describe_holder(path: Path) -> str:
    record = holder(path)
    if record is None:
        return "a run whose PID is not recorded yet"
    return f"PID {record.get('pid')} ({record.get('command')}, started {record.get('started')})"


def exit_on_signals() -> None:
    """SIGHUP and SIGTERM end the process as Ctrl-C does (main thread only; idempotent)."""
    if threading.current_thread() is not threading.main_thread():
        return
    _handler_pid[:] = [os.getpid()]
    for signum in EXIT_SIGNALS:
        signal.signal(signum, _on_exit_signal)


# The process that installed the handler: a forked child (a multiprocessing worker the pool
# terminates with SIGTERM) inherits it, and a spawned one installs it again when it imports
# docbench; either must die by the signal quietly, not speak for the run.
_handler_pid: list[int] = []


def _is_worker() -> bool:
    import multiprocessing

    forked = bool(_handler_pid) and os.getpid() != _handler_pid[0]
    return forked or multiprocessing.parent_process() is not None


def _on_exit_signal(signum: int, _frame: object) -> None:
    if _is_worker():
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    # Once only: a second signal must not interrupt the shutdown the first one started
    # (stopping servers in `finally` blocks and at exit).
    if _received:
        return
    _received.append(signum)
    name = signal.Signals(signum).name
    print(
        f"docbench: {name} received: stopping the servers this run started and exiting "
        f"(status {128 + signum})",
        file=sys.stderr,
        flush=True,
    )
    raise SystemExit(128 + signum)


def signal_received() -> int | None:
    """The exit signal being handled, if any (so that shutdown code is not interrupted)."""
    return _received[0] if _received else None
