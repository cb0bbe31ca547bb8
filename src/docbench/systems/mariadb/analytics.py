"""MariaDB in the analytics workload: one JSON (LONGTEXT + JSON_VALID) column, the five
JSONBench paths as VIRTUAL generated columns, one composite index on them.

The server (managed or the user's, by URL) is the engine's (``engine.py``); this adapter
creates its table in docbench's own database there, loads it with the ``LOAD DATA LOCAL
INFILE`` batch loader (``loader.py``) and queries it (``session.py``: the query worker's
session). The DDL (``ddl.sql``) and the queries (``queries.sql``) are plain SQL files next to
this module.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QuerySession
from docbench.contracts.capabilities import BlueskyQueries, LiveIngest, NativeLoad, ReadBack
from docbench.contracts.common import StorageSize, Variant
from docbench.contracts.engine import main_pid, system_folder
from docbench.core.jsontypes import JsonMapping, JsonObject, JsonValue, json_record
from docbench.core.sqlfiles import read_ddl, step_name
from docbench.systems.mariadb.engine import DATABASE, MariaDBEngine
from docbench.systems.mariadb.loader import LOAD_OPTIONS, MariaDBLoader
from docbench.systems.mariadb.session import MariaDBSession

# ----- the adapter ------------------------------------------------------------------------

VARIANTS: list[Variant] = [
    Variant(
        "default",
        "JSON (LONGTEXT) column, InnoDB ROW_FORMAT=DYNAMIC, uncompressed",
        role="default",
        settings={"table_options": "ROW_FORMAT=DYNAMIC"},
    ),
    Variant(
        "compressed",
        "JSON (LONGTEXT) column, InnoDB page compression (zlib)",
        role="best",
        settings={"table_options": "ROW_FORMAT=DYNAMIC PAGE_COMPRESSED=1"},
    ),
    Variant(
        "json",
        "JSON (LONGTEXT) column alone, InnoDB ROW_FORMAT=DYNAMIC: no generated column and no "
        "index, every path read with JSON_VALUE at query time (ddl-json.sql: queries.sql on its view)",
        role="representation",
        settings={
            "table_options": "ROW_FORMAT=DYNAMIC",
            "ddl": "ddl-json.sql",
            "queried_view": True,
            "indexed": False,
            "representation": "JSON (LONGTEXT checked by JSON_VALID), paths read at query time",
        },
    ),
]


class MariaDBAnalytics(AnalyticsAdapter, BlueskyQueries, LiveIngest, ReadBack, NativeLoad):
    variants: ClassVar[list[Variant]] = VARIANTS
    # Live ingest: the loader's batches, each committed; a commit is visible at once.
    retains_structure = True
    # The five paths are indexed VIRTUAL columns (computed when read, stored only in the
    # index): MariaDB's way to index JSON, within JSONBench's rules.
    representation = "JSON (LONGTEXT checked by JSON_VALID), the five paths as indexed VIRTUAL columns"
    engine_defaults: ClassVar[JsonObject] = {"table_options": "ROW_FORMAT=DYNAMIC"}
    load_batch_size = 20_000
    refused_hard_kinds = frozenset({"lone_surrogate", "deep_nesting"})
    time_precision_us = 1
    engine: MariaDBEngine

    def __init__(self, engine: MariaDBEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.table = f"bluesky_{variant.name}"
        self.index = f"{self.table}_paths"
        self.table_options = str(variant.settings.get("table_options", ""))

    # ----- loading -----------------------------------------------------------------------
    def _ddl(self) -> tuple[list[str], list[str]]:
        ddl = system_folder(self.engine) / str(self.variant.settings.get("ddl", "ddl.sql"))
        return read_ddl(ddl, table=self.table, table_options=self.table_options)

    def create(self) -> None:
        self.engine.ensure_database()
        for statement in self._ddl()[0]:
            self.engine.execute(statement)

    def loader(self) -> Loader:
        return MariaDBLoader(self.engine.params(), self.table)

    def finish_load(self) -> None:
        for statement in self._ddl()[1]:
            self.finish_step(step_name(statement), functools.partial(self.engine.execute, statement))

    def _client_argv(self, defaults_file: Path) -> list[str]:
        params = self.engine.params()
        return [
            self.engine.client_binary(),
            f"--defaults-file={defaults_file}",
            "--local-infile=1",
            "--batch",
            "-h",
            str(params["host"]),
            "-P",
            str(params["port"]),
            "-u",
            str(params["user"]),
            DATABASE,
        ]

    def native_load(self, files: list[Path]) -> None:
        """What a person types: ``mariadb --local-infile=1 -e "LOAD DATA LOCAL INFILE 'file'
        INTO TABLE t FIELDS TERMINATED BY 0x01 ESCAPED BY '' ... (doc)"`` per file (a
        compressed file is piped in through ``/dev/stdin``). As by hand, MariaDB skips a row
        it refuses with a warning and keeps the rest of the file."""
        from docbench.dataset.reader import compression_of

        decompress = {"gzip": ["gzip", "-dc"], "zstd": ["zstd", "-dc"], "lz4": ["lz4", "-dc"]}
        with tempfile.TemporaryDirectory(prefix="docbench-mariadb-") as tmp:
            defaults = Path(tmp) / "client.cnf"
            defaults.write_text(f"[client]\npassword={option_value(self.engine.params()['password'])}\n")
            os.chmod(defaults, 0o600)
            argv = self._client_argv(defaults)
            for path in files:
                kind = compression_of(path)
                source = str(path.resolve()) if kind == "none" else "/dev/stdin"
                sql = f"LOAD DATA LOCAL INFILE '{source}' INTO TABLE {self.table} {LOAD_OPTIONS}"
                if kind == "none":
                    out = subprocess.run([*argv, "-e", sql], capture_output=True, text=True, check=False)
                else:
                    feeder = subprocess.Popen([*decompress[kind], str(path)], stdout=subprocess.PIPE)
                    out = subprocess.run(
                        [*argv, "-e", sql], stdin=feeder.stdout, capture_output=True, text=True, check=False
                    )
                    if feeder.stdout is not None:  # (always: stdout=PIPE)
                        feeder.stdout.close()
                    feeder.wait()
                if out.returncode != 0:
                    message = " ".join(out.stderr.split())[:500]
                    raise RuntimeError(f"mariadb LOAD DATA of {path.name} failed: {message}")

    def count(self) -> int:
        return int(self.engine.execute(f"SELECT COUNT(*) FROM {self.table}")[0][0])

    def read_back(self) -> list[str]:
        return [str(row[0]) for row in self.engine.execute(f"SELECT doc FROM {self.table}")]

    def storage(self) -> StorageSize:
        """The engine's table sizes (information_schema + the .ibd's allocated size)."""
        return self.engine.table_storage(self.table, self.table_options)

    # ----- queries -----------------------------------------------------------------------
    def sql_names(self) -> dict[str, str]:
        """queries.sql's table: the variant's, or the view over it that reads the paths from
        the documents (the representation json); {documents}: the table itself."""
        if self.variant.settings.get("queried_view"):
            return {"table": f"{self.table}_paths", "documents": self.table}
        return {"table": self.table, "documents": self.table}

    def session_spec(self) -> JsonObject:
        params = json_record(self.engine.params(), "params")
        spec: JsonObject = {"table": self.table, "index": self.index, "local": self.engine.is_local()}
        password_file = self.engine.password_file
        if password_file is not None:
            params.pop("password", None)
            spec["password_file"] = str(password_file)
            spec["server_pid"] = main_pid(self.engine)
        spec["params"] = params
        return spec

    @classmethod
    def open_session(cls, spec: JsonMapping) -> QuerySession:
        return MariaDBSession(spec)

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """Q2-Q5 filter on the indexed paths: warn unless our table is read through our index.
        Q1 reads every document (a full index scan is fine, a table scan too)."""
        if query_number == 1 or not self.variant.settings.get("indexed", True):
            return None  # Q1 reads everything; an unindexed representation scans by design
        if not plan:
            return f"Q{query_number}: no plan to check"
        try:
            tables = [t for t in _plan_tables(json.loads(plan)) if t.get("table_name") == self.table]
        except (ValueError, TypeError):
            return f"Q{query_number}: the plan is not EXPLAIN FORMAT=JSON"
        if any(t.get("key") == self.index for t in tables):
            return None
        scans = sorted(
            {f"{t.get('access_type')}" + (f" on {t['key']}" if t.get("key") else "") for t in tables}
        )
        return (
            f"Q{query_number}: the optimizer does not use the index {self.index} "
            f"(access: {', '.join(scans) or 'none'})"
        )


def _plan_tables(node: JsonValue) -> Iterator[JsonObject]:
    """Every "table" object of an EXPLAIN FORMAT=JSON plan."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "table" and isinstance(value, dict):
                yield value
            yield from _plan_tables(value)
    elif isinstance(node, list):
        for item in node:
            yield from _plan_tables(item)


ADAPTER = MariaDBAnalytics

__all__ = ["ADAPTER", "VARIANTS", "MariaDBAnalytics", "MariaDBSession"]


def option_value(text: str) -> str:
    """A value for a MySQL option file: quoted, with backslashes and quotes escaped, so a
    password holding '#', quotes or spaces reaches the client whole."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
