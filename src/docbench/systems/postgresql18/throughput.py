"""PostgreSQL 18 in the throughput workload: pgbench (the host's, a newer server is fine for
it) as the native reference, as for PostgreSQL 15."""

from __future__ import annotations

from docbench.systems.postgresql.throughput import PgbenchReference
from docbench.systems.postgresql18.engine import PostgreSQL18Engine


class Pgbench18Reference(PgbenchReference):
    engine: PostgreSQL18Engine


ADAPTER = Pgbench18Reference

__all__ = ["ADAPTER", "Pgbench18Reference"]
