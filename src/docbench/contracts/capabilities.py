"""Capabilities a document store may have beside loading and querying, each a small mixin a
system's adapter lists when it has it (``class XAnalytics(AnalyticsAdapter, LiveIngest, ...)``).

A workload that needs one asks ``isinstance(adapter, Capability)`` (or :func:`missing`) and
reports a system without it as "not supported here", with the reason; nothing else in the
workload knows which systems have which. The portable path queries are their own contract
(:mod:`docbench.contracts.portable`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from docbench.contracts.analytics import Loader
from docbench.contracts.common import NotSupported, Variant
from docbench.contracts.engine import Engine, system_file
from docbench.core.jsontypes import JsonObject
from docbench.core.sqlfiles import render, split_sql


class BlueskyQueries:
    """JSONBench's five queries over Bluesky events, written by hand in the system's folder."""

    # the adapter's (a capability is mixed into an AnalyticsAdapter)
    engine: Engine
    variant: Variant

    def queries(self) -> list[str]:
        """The five query texts, read from this system's folder: by default the statements
        of its ``queries.sql`` (or of the file the variant's ``queries`` setting names, for a
        representation whose paths are columns), with the placeholders of :meth:`sql_names`
        filled in (systems whose queries are not SQL override this)."""
        name = str(self.variant.settings.get("queries", "queries.sql"))
        return split_sql(render(system_file(self.engine, name).read_text(), **self.sql_names()))

    def sql_names(self) -> dict[str, str]:
        """Placeholders of the system's SQL files (e.g. ``{table}``) and their values."""
        return {}

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """Return a warning when the plan does not use the index as intended, else None."""
        return None


class LiveIngest:
    """Documents arriving while query clients run (`docbench run --ingest-rates`). The loader,
    the probe and the query clients are threads of the run's process, each with a connection
    of its own: to a server, to SQLite in WAL mode, or to the one instance of an embedded
    engine (chDB, DuckDB) that the process holds open."""

    # the adapter's (a capability is mixed into an AnalyticsAdapter)
    session_spec: Callable[[], JsonObject]
    loader: Callable[[], Loader]
    count: Callable[[], int]

    def live_session_spec(self) -> JsonObject:
        """The session spec of query clients that run, as threads of this process, beside
        live ingest's loader: by default the adapter's ``session_spec`` with a connection per
        session (``own_connection``); an embedded engine adds what it needs to share the
        loader's instance."""
        return {**self.session_spec(), "own_connection": True}

    def begin_live_ingest(self) -> JsonObject:
        """Make arriving documents visible as the engine does in live use (e.g. a search
        index's refresh interval, off for the bulk load); returns the settings it set."""
        return {}

    def live_loader(self) -> Loader:
        """The loader documents arrive through in live ingest: by default the adapter's
        ``loader``; a system whose loader forces visibility to verify each file (a flush)
        gives one that does not."""
        return self.loader()

    def visible_count(self) -> int:
        """The documents a query sees now, without forcing anything (no refresh, no flush):
        the freshness probe of live ingest. By default the adapter's ``count``, for the
        systems whose count forces nothing; the caller may call it from another thread than
        the loader's."""
        return self.count()


class ReadBack:
    """The stored documents given back (the fidelity workload compares them with what was
    sent)."""

    def read_back(self) -> list[str]:
        """Every stored document as the engine gives it back through its own API, as JSON
        text. NotSupported, with the reason, when the variant's representation cannot give
        the documents back."""
        raise NotImplementedError  # a system that lists the capability implements it


class NativeLoad:
    """The system's own bulk tool, the yardstick of docbench's load overhead (`docbench bench
    load`)."""

    def native_load(self, files: list[Path]) -> None:
        """Load these files the way a person would by hand with the system's own bulk tool
        (psql \\copy, INSERT ... FROM INFILE, read_ndjson_objects), into the table that the
        adapter's ``create`` made."""
        raise NotImplementedError  # a system that lists the capability implements it


C = TypeVar("C")


def capability(adapter: object, kind: type[C], why: str = "") -> C:
    """The adapter as one of its capabilities; NotSupported, naming the system and what it
    lacks (and ``why`` it matters), when it does not have it."""
    if not isinstance(adapter, kind):
        name = getattr(adapter, "name", type(adapter).__name__)
        raise NotSupported(f"{name} does not support {kind.__name__}" + (f": {why}" if why else ""))
    return adapter


__all__ = ["BlueskyQueries", "LiveIngest", "NativeLoad", "ReadBack", "capability"]
