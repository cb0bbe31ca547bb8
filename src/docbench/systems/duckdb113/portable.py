"""duckdb113 reads the portable queries as duckdb does (the same dialect)."""

from docbench.systems.duckdb.portable import ADAPTER

__all__ = ["ADAPTER"]
