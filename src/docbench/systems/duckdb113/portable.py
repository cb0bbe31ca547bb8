"""duckdb113 reads the portable queries as duckdb does (the same dialect), on JSONBench's table
and column (``ddl.sql``: ``bluesky(j JSON)``)."""

from docbench.systems.duckdb.portable import DuckDBPortable
from docbench.systems.duckdb113.analytics import COLUMN, TABLE


class DuckDB113Portable(DuckDBPortable):
    def source(self) -> str:
        return TABLE

    def document(self) -> str:
        return COLUMN


ADAPTER = DuckDB113Portable

__all__ = ["ADAPTER"]
