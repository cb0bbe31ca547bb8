"""Running the oracle's tasks on ``jobs`` processes, handing each result over as it comes.

Without the native scanner: this process and ``jobs - 1`` worker processes (fresh
interpreters, never forks) take the tasks; this process merges the results between its own
tasks. With it: ``jobs`` scanner processes, each started and awaited by a thread here.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from docbench.core.procstats import peak_rss
from docbench.dataset import native_scan
from docbench.dataset.oracle.compute_log import ComputeLog
from docbench.dataset.oracle.tasks import Result, Task, run_native_task, run_task

# (subprocess, multiprocessing and concurrent.futures are imported where they are used:
# every worker and every docbench command imports this package, most never run tasks)
if TYPE_CHECKING:
    import subprocess
    from concurrent.futures import Future
    from multiprocessing.connection import Connection

OnResult = Callable[[Result], None]
Progress = Callable[[int], None]
WORKER_EXIT_SECONDS = 5  # a worker's last message and its exit, awaited this long


def execute(
    tasks: list[Task], jobs: int, on_result: OnResult, progress: Progress | None, log: ComputeLog
) -> None:
    """Run the tasks in this process and in ``jobs - 1`` worker processes; ``on_result``
    gets each task's result (in this process, in completion order). This process takes
    tasks too (no worker to wait for at the start; the workers take over as they come up).
    With the native scanner, its processes do the scanning instead (:func:`execute_native`)."""
    binary = native_scan.find_scanner()
    if binary is not None:
        execute_native(binary, tasks, jobs, on_result, progress, log)
        return
    n_workers = min(jobs, len(tasks)) - 1
    if n_workers <= 0:
        for task in tasks:
            on_result(run_task(task, progress))
        return
    _Workers(deque(tasks), on_result, progress, log).run(n_workers)


def execute_native(
    binary: Path,
    tasks: list[Task],
    jobs: int,
    on_result: OnResult,
    progress: Progress | None,
    log: ComputeLog,
) -> None:
    """:func:`execute` with native scanners: ``jobs`` of them at once, each started and
    awaited by a thread of this process (the waits release the GIL); results are merged
    here as they come. At most ``jobs`` tasks are in flight, so that no more than that
    many unmerged partials are ever held."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    cpu0 = native_scan.children_cpu()
    queue = deque(tasks)
    peaks: list[int] = []
    width = max(1, jobs)
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="oracle-scan") as pool:
        running: set[Future[tuple[Result, int | None]]] = set()
        try:
            while queue or running:
                while queue and len(running) < width:
                    running.add(pool.submit(run_native_task, binary, queue.popleft()))
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    result, peak = future.result()
                    if peak:
                        peaks.append(peak)
                    if progress is not None and result[0] == "part":
                        progress(result[2].lines)
                    on_result(result)
        finally:
            queue.clear()
    log.helpers = "native scanners (largest; CPU of all)"
    log.worker_peaks.append(max(peaks, default=0))
    log.worker_cpu.append(native_scan.children_cpu() - cpu0)


# -- worker processes -------------------------------------------------------------------------


def _worker(conn: Connection) -> None:
    """A worker process: runs the tasks it is sent until it is sent None, then sends its
    peak RSS and CPU time. An error is sent to be raised again in the parent."""
    try:
        while True:
            msg = conn.recv()
            if msg is None:
                break
            try:
                result = run_task(msg)
            except BaseException as error:  # raised again in the parent
                try:
                    conn.send(("error", error))
                except Exception:  # (an error that does not pickle: its text)
                    conn.send(("error", RuntimeError(repr(error))))
                return
            conn.send(("done", result))
        conn.send(("peak", (peak_rss(os.getpid()) or 0, time.process_time())))
    except (EOFError, OSError, KeyboardInterrupt):
        pass
    finally:
        conn.close()


def worker_main() -> None:
    """Entry point of a worker process: ``python -c ... FD`` (see :func:`_start_worker`)."""
    from multiprocessing.connection import Connection

    _worker(Connection(int(sys.argv[1])))


def _start_worker() -> tuple[subprocess.Popen[bytes], Connection]:
    """A fresh interpreter that imports only this package (not the caller's ``__main__``,
    as multiprocessing's spawn would: the CLI's imports), on one end of a socket pair. Fork
    is never used: the caller may have threads (database engines, progress bars), and a
    forked child can inherit a lock one of them holds and hang forever."""
    import subprocess
    from multiprocessing import Pipe

    mine, theirs = Pipe()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    code = "from docbench.dataset.oracle import worker_main; worker_main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(theirs.fileno())],
        pass_fds=(theirs.fileno(),),
        env=env,
        stdin=subprocess.DEVNULL,
    )
    theirs.close()
    return proc, mine


@dataclass
class _Worker:
    proc: subprocess.Popen[bytes]
    conn: Connection
    busy: bool = False  # a task was sent and its result not received yet


class _Workers:
    """The worker processes of one :func:`execute`, fed from a shared queue."""

    def __init__(
        self, queue: deque[Task], on_result: OnResult, progress: Progress | None, log: ComputeLog
    ) -> None:
        self.queue = queue
        self.on_result = on_result
        self.progress = progress
        self.log = log
        self.workers: list[_Worker] = []

    def run(self, n_workers: int) -> None:
        try:
            for _ in range(n_workers):
                proc, conn = _start_worker()
                worker = _Worker(proc, conn)
                self.workers.append(worker)
                self.feed(worker)
            while self.queue:  # this process takes tasks too, serving the workers between
                self.on_result(run_task(self.queue.popleft(), self.service))
                self.service()
            self.wait_busy()
            for worker in self.workers:  # each sends its peak memory before it exits
                with contextlib.suppress(EOFError, OSError):
                    if worker.conn.poll(WORKER_EXIT_SECONDS):
                        self.receive(worker)
        finally:
            self.close()

    def feed(self, worker: _Worker) -> None:
        """The next task to a worker, or None (exit) when there is none."""
        if self.queue:
            worker.conn.send(self.queue.popleft())
            worker.busy = True
        else:
            worker.conn.send(None)
            worker.busy = False

    def receive(self, worker: _Worker) -> None:
        try:
            kind, payload = worker.conn.recv()
        except (EOFError, OSError):
            raise RuntimeError("an oracle worker process died") from None
        if kind == "error":
            raise payload
        if kind == "peak":
            self.log.worker_peaks.append(payload[0])
            self.log.worker_cpu.append(payload[1])
            return
        result: Result = payload
        if self.progress is not None:
            self.progress(result[2].lines if result[0] == "part" else 0)
        self.on_result(result)
        self.feed(worker)

    def service(self, lines: int = 0) -> None:
        """Between blocks of this process's own task: progress, and the workers' results."""
        if self.progress is not None and lines:
            self.progress(lines)
        for worker in self.workers:
            while worker.busy and worker.conn.poll():
                self.receive(worker)

    def wait_busy(self) -> None:
        """Until every worker has sent its last result."""
        from multiprocessing.connection import wait as wait_connections

        while any(w.busy for w in self.workers):
            busy = [w for w in self.workers if w.busy]
            ready = wait_connections([w.conn for w in busy])  # (a dead worker's end: EOF)
            for worker in busy:
                if worker.conn in ready:
                    self.receive(worker)

    def close(self) -> None:
        for worker in self.workers:
            with contextlib.suppress(OSError):
                worker.conn.close()
            try:
                worker.proc.wait(timeout=WORKER_EXIT_SECONDS)
            except Exception:
                worker.proc.kill()
                worker.proc.wait()
