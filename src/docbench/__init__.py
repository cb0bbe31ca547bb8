"""docbench: a reproducible benchmark for JSON document stores."""

__version__ = "0.1.0"
