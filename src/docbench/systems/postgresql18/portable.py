"""postgresql18 reads the portable queries as postgresql does (the same dialect)."""

from docbench.systems.postgresql.portable import ADAPTER

__all__ = ["ADAPTER"]
