"""The multiplexed client loop: one thread of a worker process drives all its clients.

For sessions that implement :class:`~docbench.contracts.updates.NonBlockingSession`
(PostgreSQL's libpq, ...). Each client keeps its own connection and runs one operation at a
time, as a pgbench client does; the worker waits on all their sockets with one ``epoll``
(each pgbench ``-j`` thread does the same with ``select``/``poll``), so there are no thread
switches and no interpreter lock to hand over between operations.

What an operation costs the driver is kept small on purpose, because on a small machine every
microsecond of it is taken from the server being measured: per operation the loop appends
five integers (end, begin, intended start, operation, count) to arrays; the HdrHistograms are
filled in bulk from those arrays when a progress interval ends (recorder.py). The recorded
values are the thread path's (clients.py): service time from the actual start, response time
from the intended start (``--rate``: a Poisson schedule per client, so a stall shows in the
response times), schedule lag, per progress interval the response times of the operations
that ended in it; operations that started during the warm-up are not counted.

compiled.py runs the same loop in Rust (docbench-client) where the system offers it.
"""

from __future__ import annotations

import contextlib
import heapq
import random
import select
import time
from array import array
from bisect import bisect_left
from collections import deque
from typing import Any

from docbench.contracts import ycsb
from docbench.contracts.mixes import INSERT, READ, READ_MODIFY_WRITE, UPDATE, mix_named
from docbench.contracts.updates import NonBlockingSession
from docbench.workloads.throughput.clients import FinalMessage, WorkerConfig, cpu_ns
from docbench.workloads.throughput.recorder import IntervalRecorder

key_of = ycsb.key_of
monotonic_ns = time.monotonic_ns
KEY_CACHE_DOCS = 1 << 20
VALUE_POOL = 4096


class LoopClient:
    """One client: its session, its random streams (as the thread path's Client) and the
    operation it has in flight."""

    __slots__ = (
        "id",
        "index",
        "session",
        "rng",
        "operations",
        "keys",
        "inserted",
        "inserted_ok",
        "operation",
        "key",
        "second_step",
        "begin",
        "intended",
        "waiting",
        "fd",
    )

    def __init__(self, index: int, client_id: int, config: WorkerConfig, session: NonBlockingSession) -> None:
        self.index = index
        self.id = client_id
        self.session = session
        seed = config.seed * 7919 + client_id
        self.rng = random.Random(seed)
        self.operations = mix_named(config.mix).chooser(random.Random(seed + 1))
        self.keys = ycsb.chooser(config.distribution, config.docs, seed=seed + 2)
        self.inserted = 0
        self.inserted_ok = 0
        self.operation = ""
        self.key = ""
        self.second_step = False
        self.begin = 0
        self.intended = 0
        self.waiting = False  # an operation in flight
        self.fd = -1


class MultiplexedWorker:
    def __init__(
        self, config: WorkerConfig, sessions: list[tuple[int, NonBlockingSession]], events: Any
    ) -> None:
        self.config = config
        self.seed = config.seed
        # Keys made once per worker (a key costs ~1 µs to format; up to 1M of them are kept).
        self.keys: list[str | None] | None = [None] * config.docs if config.docs <= KEY_CACHE_DOCS else None
        self.events = events
        values = random.Random(config.seed * 104_729 + config.worker_id)
        self.values = [ycsb.random_text(values, ycsb.FIELD_LENGTH) for _ in range(VALUE_POOL)]
        self.clients = [
            LoopClient(index, client_id, config, session)
            for index, (client_id, session) in enumerate(sessions)
        ]
        self.recorder = IntervalRecorder(config, events)
        self.code = {name: number for number, name in enumerate(self.recorder.names)}
        self.scheduled = bool(config.rate_per_client)
        self.interval_failed = [0] * config.intervals
        # Completed operations, in completion order (one thread: the ends never decrease).
        self.ends, self.begins, self.intendeds = array("q"), array("q"), array("q")
        self.codes, self.counts = array("b"), array("q")
        self.in_flight = 0
        self.ready: deque[LoopClient] = deque()
        self.timers: list[tuple[int, int]] = []
        self.cpu_ns = 0
        self.operations_done = 0
        self.aborted = 0

    # ----- the loop ------------------------------------------------------------------------
    def run(self, start_ns: int) -> None:
        config = self.config
        interval_ns = int(config.interval_s * 1e9)
        self.start_ns = start_ns
        self.interval_ns = interval_ns
        self.recorder.start(start_ns)
        self.warm_end = self.recorder.warm_end
        self.end = self.warm_end + int(config.duration_s * 1e9)
        last_slot = config.intervals - 1
        poller = self.poller = select.epoll()
        by_fd: dict[int, LoopClient] = {}
        for client in self.clients:
            client.fd = client.session.fileno()
            by_fd[client.fd] = client
            poller.register(client.fd, select.EPOLLIN)
        wait_until_ns(start_ns)
        cpu_before = cpu_ns()
        try:
            if self.scheduled:
                slot = self._scheduled_loop(poller.poll, by_fd, last_slot)
            else:
                slot = self._closed_loop(poller.poll, by_fd, last_slot)
        finally:
            poller.close()
        self.cpu_ns = cpu_ns() - cpu_before
        for remaining in range(slot, last_slot + 1):
            self._flush(
                remaining, None if remaining == last_slot else start_ns + (remaining + 1) * interval_ns
            )

    def _closed_loop(self, poll, by_fd: dict[int, LoopClient], last_slot: int) -> int:
        """Without --rate: a client's next operation is sent as soon as its answer is read
        (in _receive), so an iteration is one epoll_wait and the answers it reports. The
        progress interval that ended is filled after the wait that saw its end (the slot of
        an operation is that of its end time, whenever it is filled in)."""
        ready, clock, receive = self.ready, time.monotonic_ns, self._receive
        slot, slot_end = 0, self.start_ns + self.interval_ns
        for client in self.clients:
            ready.append(client)
        while True:
            for _ in range(len(ready)):  # the first operations, and clients whose send failed
                self._start(ready.popleft(), 0)
            if not self.in_flight and not ready:
                return slot
            for fd, _ in poll(0.0 if ready else 0.1):
                receive(by_fd[fd])
            while slot < last_slot and clock() >= slot_end:
                self._flush(slot, slot_end)
                slot, slot_end = slot + 1, slot_end + self.interval_ns

    def _scheduled_loop(self, poll, by_fd: dict[int, LoopClient], last_slot: int) -> int:
        """Under --rate: operations start at their intended times (a heap of timers), or late
        when their client is still busy; the wait ends at the next timer or interval end."""
        ready, timers, clock = self.ready, self.timers, time.monotonic_ns
        slot, slot_end = 0, self.start_ns + self.interval_ns
        for client in self.clients:
            self._next_of(client, first=True)
        while True:
            now = clock()
            while slot < last_slot and now >= slot_end:
                self._flush(slot, slot_end)
                slot, slot_end = slot + 1, slot_end + self.interval_ns
            for _ in range(len(ready)):
                client = ready.popleft()
                self._start(client, client.intended)
            while timers and timers[0][0] <= now:
                intended, index = heapq.heappop(timers)
                self._start(self.clients[index], intended)
            if not self.in_flight and not timers and not ready:
                return slot
            if ready:
                wait_s = 0.0
            elif slot < last_slot or timers:
                due = min(slot_end, timers[0][0]) if timers else slot_end
                wait_s = max(0.0, (due - clock()) / 1e9)
            else:
                wait_s = 1.0
            for fd, _ in poll(wait_s):
                self._receive(by_fd[fd])

    def _next_of(self, client: LoopClient, first: bool = False) -> None:
        """Schedule the client's next operation at its next intended start (a Poisson
        schedule under --rate); nothing once the run's end has come."""
        rate = self.config.rate_per_client
        assert rate, "only a scheduled run (--rate) plans its starts"
        previous = self.start_ns if first else client.intended
        intended = previous + int(client.rng.expovariate(rate) * 1e9)
        if intended < self.end:
            heapq.heappush(self.timers, (intended, client.index))

    def _start(self, client: LoopClient, intended: int) -> None:
        """Send the client's next operation (``intended``: its scheduled start under --rate)."""
        begin = monotonic_ns()
        if self.scheduled:
            client.intended = intended
        elif begin >= self.end:
            return
        client.begin = begin
        client.second_step = False
        operation = client.operations.next()
        client.operation = operation
        try:
            if operation is READ:  # the common case first, without a call more
                client.session.send_read(self._key(client))
            else:
                self._send(client, operation)
        except Exception as error:  # noqa: BLE001 - a failed operation is counted, the run goes on
            self._failed(client, error)
            return
        self.in_flight += 1
        client.waiting = True

    def _key(self, client: LoopClient) -> str:
        index = client.keys.next_index()
        keys = self.keys
        if keys is None:
            return key_of(index, self.seed)
        key = keys[index]
        if key is None:
            key = keys[index] = key_of(index, self.seed)
        return key

    def _send(self, client: LoopClient, operation: str) -> None:
        session = client.session
        if operation == INSERT:
            # Keys beyond the loaded ones, unique per client: docs + n * clients + id.
            index = self.config.docs + client.inserted * self.config.total_clients + client.id
            client.inserted += 1
            session.send_insert(self._new_document(client, index))
        elif operation in (READ_MODIFY_WRITE, READ):
            client.key = self._key(client)
            session.send_read(client.key)
        elif operation == UPDATE:
            session.send_update(self._key(client), *self._new_value(client))
        else:
            raise ValueError(f"unknown operation {operation!r}")

    def _new_value(self, client: LoopClient) -> tuple[str, str]:
        """A random field and a random 160-character value, drawn from values the worker made
        before the start (making one costs ~1.5 µs; the engines see random text either way)."""
        draw = client.rng.random
        return (ycsb.FIELDS[int(draw() * ycsb.FIELD_COUNT)], self.values[int(draw() * len(self.values))])

    def _new_document(self, client: LoopClient, index: int) -> dict[str, str]:
        """A YCSB document with the key of ``index`` and ten values from the worker's pool
        (ycsb.document makes its 1,600 random characters in ~15 µs)."""
        draw, values = client.rng.random, self.values
        document = {"ycsb_key": key_of(index, self.seed)}
        for name in ycsb.FIELDS:
            document[name] = values[int(draw() * len(values))]
        return document

    def _receive(self, client: LoopClient) -> None:
        if not client.waiting:  # readable with nothing asked: the server closing it, say
            self._drain_idle(client)
            return
        operation = client.operation
        try:
            count = client.session.receive()
            if count is None:
                return
            if operation is READ_MODIFY_WRITE and count and not client.second_step:
                client.second_step = True
                client.session.send_update(client.key, *self._new_value(client))
                return
        except Exception as error:  # noqa: BLE001 - a failed operation is counted, the run goes on
            self.in_flight -= 1
            client.waiting = False
            self._failed(client, error)
            return
        done = monotonic_ns()
        self.in_flight -= 1
        client.waiting = False
        self.ends.append(done)
        self.begins.append(client.begin)
        self.codes.append(self.code[operation])
        self.counts.append(count)
        if operation is INSERT:
            client.inserted_ok += 1
        if self.scheduled:
            self.intendeds.append(client.intended)  # (else the intended start is the actual one)
            self._next_of(client)
        else:
            self._start(client, 0)

    def _failed(self, client: LoopClient, error: Exception) -> None:
        now = time.monotonic_ns()
        slot = min((now - self.start_ns) // self.interval_ns, len(self.interval_failed) - 1)
        self.interval_failed[slot] += 1
        self.operations_done += 1
        if (client.intended if self.scheduled else client.begin) >= self.warm_end:
            stats = self.recorder.stats[client.operation]
            stats.failed += 1
            stats.first_error = stats.first_error or f"{type(error).__name__}: {error}"[:500]
        if client.session.broken():
            self.aborted += 1  # its connection is gone: the client stops, as pgbench's does
            self._forget(client)
            return
        if self.scheduled:
            self._next_of(client)
        else:
            self.ready.append(client)  # started by the loop (no recursion on repeated failures)

    def _drain_idle(self, client: LoopClient) -> None:
        """Read what an idle connection got; stop watching it once it is gone (an aborted
        client's socket stays readable at its end, and epoll would report it forever)."""
        with contextlib.suppress(Exception):  # nothing was asked: there is nothing to count
            client.session.receive()
        if client.session.broken():
            self._forget(client)

    def _forget(self, client: LoopClient) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.poller.unregister(client.fd)

    # ----- histograms, in bulk ---------------------------------------------------------------
    def _flush(self, slot: int, upto_ns: int | None) -> None:
        """Record the operations that ended before ``upto_ns`` (None: all) and send the slot's
        progress figures to the driver."""
        import numpy as np

        taken = len(self.ends) if upto_ns is None else bisect_left(self.ends, upto_ns)
        ends = np.frombuffer(self.ends, dtype=np.int64, count=taken).copy()
        begins = np.frombuffer(self.begins, dtype=np.int64, count=taken).copy()
        intendeds = (
            np.frombuffer(self.intendeds, dtype=np.int64, count=taken).copy() if self.scheduled else begins
        )
        codes = np.frombuffer(self.codes, dtype=np.int8, count=taken).copy()
        counts = np.frombuffer(self.counts, dtype=np.int64, count=taken).copy()
        for column in (self.ends, self.begins, self.intendeds, self.codes, self.counts):
            del column[: taken if column is not self.intendeds or self.scheduled else 0]
        self.operations_done += taken
        self.recorder.record(slot, ends, begins, intendeds, codes, counts, self.interval_failed[slot])

    def final_message(self, connect_ns: list[int]) -> FinalMessage:
        return self.recorder.final_message(
            connect_ns,
            inserted=sum(client.inserted_ok for client in self.clients),
            cpu_ns=self.cpu_ns,
            operations_done=self.operations_done,
            loop="multiplexed",
            aborted=self.aborted,
        )


def wait_until_ns(moment_ns: int) -> None:
    delay = moment_ns - time.monotonic_ns()
    if delay > 0:
        time.sleep(delay / 1e9)
