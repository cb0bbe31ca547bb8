"""The driver's ceiling: a target whose operations do nothing.

Measuring it with the same clients, processes and mix tells how many operations per second
the driver itself can issue; a database result within 2x of it says more about the driver
than about the database. It is never reported as a system.

Its sessions are non-blocking, and the compiled client has one of its own, so the ceiling is
that of the loop the real sessions run in (compiled.py or multiplexed.py), system calls
included: a request writes to an eventfd, which makes it
readable at once, and the answer is read from it (``NoOpTarget.threads``: blocking sessions
for the thread path).
"""

from __future__ import annotations

import os

from docbench.contracts.updates import CompiledClient, NonBlockingSession
from docbench.core.jsontypes import JsonMapping, JsonObject

DOCUMENT: JsonObject = {"ycsb_key": "user00000000000000000000", "field1": "x" * 160}


class NoOpSession(NonBlockingSession):
    def __init__(self) -> None:
        self.fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self.answer = 0

    def read(self, key: str) -> JsonObject | None:
        return DOCUMENT

    def update_field(self, key: str, field: str, value: str) -> int:
        return 1

    def insert(self, doc: JsonMapping) -> None:
        return None

    def fileno(self) -> int:
        return self.fd

    def _request(self, answer: int) -> None:
        self.answer = answer
        os.eventfd_write(self.fd, 1)

    def send_read(self, key: str) -> None:
        self._request(1)

    def send_update(self, key: str, field: str, value: str) -> None:
        self._request(1)

    def send_insert(self, doc: JsonMapping) -> None:
        self._request(1)

    def receive(self) -> int | None:
        os.eventfd_read(self.fd)
        return self.answer

    def close(self) -> None:
        os.close(self.fd)


class NoOpTarget(CompiledClient):
    @classmethod
    def open_session(cls, spec: JsonMapping) -> NoOpSession:
        return NoOpSession()

    @classmethod
    def compiled_client(cls, spec: JsonMapping) -> JsonObject:
        """docbench-client's own no-op session (an eventfd too): the compiled loop's ceiling."""
        return {"protocol": "noop"}


ADAPTER = NoOpTarget
