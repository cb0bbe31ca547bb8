"""PostgreSQL 18 in the analytics workload (JSONB, pglz and lz4 TOAST compression,
composite expression index; JSONBench's own DDL as the variant jsonbench): the postgresql
system's adapter and variants on the chroot's server."""

from __future__ import annotations

from docbench.systems.postgresql.analytics import VARIANTS, PostgreSQLAnalytics
from docbench.systems.postgresql18.engine import PostgreSQL18Engine


class PostgreSQL18Analytics(PostgreSQLAnalytics):
    engine: PostgreSQL18Engine
    native_refusals = "skips"  # COPY ... ON_ERROR ignore names them all in one pass


ADAPTER = PostgreSQL18Analytics

__all__ = ["ADAPTER", "VARIANTS", "PostgreSQL18Analytics"]
