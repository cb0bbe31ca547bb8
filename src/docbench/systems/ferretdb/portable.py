"""FerretDB runs the portable queries as MongoDB does (the same pipelines)."""

from docbench.systems.mongodb.portable import ADAPTER

__all__ = ["ADAPTER"]
