"""opensearch2 runs the portable queries in the query DSL its family shares."""

from docbench.systems.searchengine.portable import ADAPTER

__all__ = ["ADAPTER"]
