"""The driver's ceiling: a target whose operations do nothing.

Measuring it with the same clients, processes and mix tells how many operations per second
the driver itself can issue; a database result within 2x of it says more about the driver
than about the database. It is never reported as a system.
"""

from __future__ import annotations

from typing import Any

from docbench.contracts.updates import KeyValueSession

DOCUMENT = {"ycsb_key": "user00000000000000000000", "field1": "x" * 160}


class NoOpSession(KeyValueSession):
    def read(self, key: str) -> dict[str, Any] | None:
        return DOCUMENT

    def update_field(self, key: str, field: str, value: str) -> int:
        return 1

    def insert(self, doc: dict[str, Any]) -> None:
        return None

    def close(self) -> None:
        return None


class NoOpTarget:
    @classmethod
    def open_session(cls, spec: dict[str, Any]) -> NoOpSession:
        return NoOpSession()


ADAPTER = NoOpTarget
