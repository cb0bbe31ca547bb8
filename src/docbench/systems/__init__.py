"""The registry of systems. Adding a system = adding its folder and its name here."""

from __future__ import annotations

import importlib

from docbench.systems.base import System

# Order is the order of tables and reports.
REGISTERED: list[str] = ["clickhouse", "duckdb", "sqlite", "postgresql", "mariadb", "mongodb", "ferretdb",
                         "elasticsearch", "opensearch"]


def system_class(name: str) -> type[System]:
    if name not in REGISTERED:
        raise KeyError(f"unknown system {name!r} (known: {', '.join(REGISTERED)})")
    module = importlib.import_module(f"docbench.systems.{name}.adapter")
    return module.SYSTEM


def all_systems() -> list[type[System]]:
    return [system_class(name) for name in REGISTERED]
