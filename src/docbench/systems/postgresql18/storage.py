"""PostgreSQL 18 in the storage matrix (column type x storage strategy x
compression): the postgresql system's adapter on the chroot's server."""

from __future__ import annotations

from docbench.systems.postgresql.storage import VARIANTS, PostgreSQLStorage
from docbench.systems.postgresql18.engine import PostgreSQL18Engine


class PostgreSQL18Storage(PostgreSQLStorage):
    engine: PostgreSQL18Engine


ADAPTER = PostgreSQL18Storage

__all__ = ["ADAPTER", "VARIANTS", "PostgreSQL18Storage"]
