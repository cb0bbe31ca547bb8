"""The registry of systems. Adding a system = adding its folder and its name here.

A system's folder holds ``engine.py`` (``ENGINE``: its :class:`~docbench.contracts.engine.Engine`)
and one module per workload it takes part in, each defining ``ADAPTER`` (and ``VARIANTS`` where
the workload has variants): ``analytics.py``, ``updates.py``, ``storage.py``, ``throughput.py``.
Workloads find those modules here, by the name their contract gives; nothing else in docbench
names a system. Where they apply, the same names hold the same parts in every folder:
``loader.py`` (the analytics :class:`~docbench.contracts.analytics.Loader`), ``session.py``
(the query worker's :class:`~docbench.contracts.analytics.QuerySession`), ``server.py`` (a
managed server, a :class:`~docbench.servers.managed.ManagedServer`), ``setup.sh`` (``docbench
setup NAME``; ``apt.sh`` here is what those that install Debian packages share).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

from docbench.contracts.common import Variant, variant_named
from docbench.contracts.engine import Engine

# Order is the order of tables and reports.
REGISTERED: list[str] = [
    "clickhouse",
    "duckdb",
    "duckdb113",
    "sqlite",
    "databend",
    "spark",
    "postgresql",
    "postgresql18",
    "mariadb",
    "mongodb",
    "ferretdb",
    "elasticsearch",
    "elasticsearch9",
    "opensearch",
    "opensearch2",
    "victorialogs",
]


class UnknownSystem(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def check_names(names: list[str]) -> None:
    """Raise UnknownSystem naming every unknown system and the known ones."""
    unknown = [name for name in names if name not in REGISTERED]
    if unknown:
        raise UnknownSystem(
            f"unknown system{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
            f"(known: {', '.join(REGISTERED)})"
        )


def engine_class(name: str) -> type[Engine]:
    check_names([name])
    return importlib.import_module(f"docbench.systems.{name}.engine").ENGINE


def all_engines() -> list[type[Engine]]:
    return [engine_class(name) for name in REGISTERED]


def adapter_module(name: str, workload_module: str) -> ModuleType | None:
    """``docbench.systems.<name>.<workload_module>``, or None when the system has none (it
    does not take part in that workload yet)."""
    check_names([name])
    module_name = f"docbench.systems.{name}.{workload_module}"
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name == module_name:
            return None
        raise


def adapter_class(name: str, workload_module: str) -> Any | None:
    module = adapter_module(name, workload_module)
    return module.ADAPTER if module is not None else None


def required_adapter_class(name: str, workload_module: str) -> Any:
    """:func:`adapter_class` for a system that takes part in the workload: LookupError when it
    does not."""
    cls = adapter_class(name, workload_module)
    if cls is None:
        raise LookupError(f"{name} does not take part in the {workload_module} workload")
    return cls


def adapter_variants(name: str, workload_module: str) -> list[Variant]:
    module = adapter_module(name, workload_module)
    return list(getattr(module, "VARIANTS", [])) if module is not None else []


def open_engine(name: str, workdir: Path, url: str | None = None) -> Engine:
    return engine_class(name)(workdir, url)


def open_adapter(
    name: str,
    workload_module: str,
    workdir: Path,
    variant: Variant | str | None = None,
    url: str | None = None,
) -> Any:
    """The system's adapter for a workload, on a new engine handle (the first variant unless
    one is named)."""
    cls = required_adapter_class(name, workload_module)
    variants = adapter_variants(name, workload_module)
    if variant is None:
        variant = variants[0]
    elif isinstance(variant, str):
        variant = variant_named(variants, variant, name)
    return cls(open_engine(name, workdir, url), variant)
