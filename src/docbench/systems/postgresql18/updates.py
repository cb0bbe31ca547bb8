"""PostgreSQL 18 in the updates workload (jsonb || and jsonb_set, json text,
btree and GIN): the postgresql system's adapter on the chroot's server."""

from __future__ import annotations

from docbench.systems.postgresql.updates import VARIANTS, PostgreSQLUpdates
from docbench.systems.postgresql18.engine import PostgreSQL18Engine


class PostgreSQL18Updates(PostgreSQLUpdates):
    engine: PostgreSQL18Engine


ADAPTER = PostgreSQL18Updates

__all__ = ["ADAPTER", "VARIANTS", "PostgreSQL18Updates"]
