"""DuckDB 1.1.3 in the analytics workload, configured as JSONBench's DuckDB (variant ``jsonbench``).

JSONBench's DDL (``ddl.sql``: ``bluesky (j JSON)``), its load (``load.sql`` per 100,000-line
chunk, each in a connection of its own: ``loader.py``) and its size query (``total_size.sh``:
distinct blocks of ``pragma_storage_info`` x block size); the queries are the ``duckdb`` system's
``queries.sql`` (found through the engine's base), on JSONBench's table, checked by the oracle.
Every statement runs in a DuckDB 1.1.3 worker process (``engine.py``, ``client.py``).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from docbench.contracts.analytics import AnalyticsAdapter, Loader, QuerySession
from docbench.contracts.capabilities import BlueskyQueries, NativeLoad, ReadBack
from docbench.contracts.common import StorageSize, Variant, directory_size
from docbench.contracts.engine import system_folder
from docbench.core.jsontypes import JsonObject
from docbench.core.sqlfiles import read_sql_statements, render
from docbench.dataset.reader import iter_lines
from docbench.systems.duckdb.engine import write_lines
from docbench.systems.duckdb113.client import WorkerError, sql_string
from docbench.systems.duckdb113.engine import DuckDB113Engine
from docbench.systems.duckdb113.loader import CHUNK_FILE_NAME, DuckDB113Loader
from docbench.systems.duckdb113.session import DuckDB113Session

log = logging.getLogger(__name__)

TABLE = "bluesky"  # JSONBench's table and column (ddl.sql)
COLUMN = "j"
# JSONBench's chunk: `split -l 100000` (duckdb/load_data.sh).
CHUNK_LINES = 100_000
# JSONBench's size (duckdb/total_size.sh), the statement as it runs it.
JSONBENCH_SIZE = (
    f"select '{TABLE}' as table_name, count(distinct block_id) as num_blocks, "
    "count(distinct block_id) * (select block_size from pragma_database_size()) as num_bytes "
    f"from pragma_storage_info('{TABLE}') group by all"
)
# The compression DuckDB chose for the JSON column in each row group (the reason this system
# exists: 1.1.3 stores a row group uncompressed when one of its strings is 4 KiB or longer).
ROW_GROUP_COMPRESSION = (
    f"select row_group_id, min(compression) from pragma_storage_info('{TABLE}') "
    f"where column_name = '{COLUMN}' and segment_type <> 'VALIDITY' group by all order by 1"
)

VARIANTS: list[Variant] = [
    Variant(
        "jsonbench",
        "JSONBench's DuckDB: bluesky (j JSON), read_ndjson_objects over 100k-line chunks each in a "
        "connection of its own, size = distinct blocks x block size (DuckDB 1.1.3)",
        role="default",
    ),
]


class DuckDB113Analytics(AnalyticsAdapter, BlueskyQueries, ReadBack, NativeLoad):
    engine: DuckDB113Engine
    variants = VARIANTS
    retains_structure = True
    representation = "JSON (text)"
    load_batch_size = CHUNK_LINES
    refused_hard_kinds = frozenset({"lone_surrogate"})
    # No reader that skips and names refusals: a refused chunk is bisected (loader.py).
    native_refusals = None

    # ----- loading -------------------------------------------------------------------------
    def create(self) -> None:
        """A new database file and JSONBench's table, as `duckdb FILE < ddl.sql`."""
        self.engine.remove_database()
        (self.engine.workdir / CHUNK_FILE_NAME).unlink(missing_ok=True)
        worker = self.engine.connection()
        for statement in read_sql_statements(system_folder(self.engine) / "ddl.sql"):
            worker.execute(statement, own_connection=True)

    def loader(self) -> Loader:
        return DuckDB113Loader(self)

    def insert_chunk(self, path: Path) -> int:
        """One chunk file through ``load.sql`` in a connection of its own (WorkerError when
        DuckDB refuses it: nothing of it is kept). Returns the rows inserted."""
        template = read_sql_statements(system_folder(self.engine) / "load.sql")[0]
        statement = render(template, chunk=sql_string(str(path)))
        row = self.engine.connection().execute(statement, own_connection=True).fetchone()
        return int(row[0]) if row else 0

    def native_load(self, files: list[Path]) -> None:
        """JSONBench's load_data.sh by hand: each file (decompressed) split into 100,000-line
        chunks, each inserted on its own; a chunk DuckDB refuses is lost whole, with a warning,
        as the `duckdb` command reports it and the script goes on."""
        chunk = self.engine.workdir / "native-chunk.ndjson"
        try:
            for path in files:
                for number, lines in enumerate(_chunks(path, CHUNK_LINES), start=1):
                    write_lines(chunk, lines)
                    try:
                        self.insert_chunk(chunk)
                    except WorkerError as error:
                        log.warning("%s chunk %d not loaded: %s", path.name, number, error)
        finally:
            chunk.unlink(missing_ok=True)

    def count(self) -> int:
        """JSONBench's count.sh."""
        row = self.engine.connection().execute(f"select count() from {TABLE}").fetchone()
        return int(row[0]) if row else 0

    def read_back(self) -> list[str]:
        """The JSON column as DuckDB 1.1.3 gives it back (its text, as stored)."""
        rows = self.engine.connection().execute(f"select j::VARCHAR from {TABLE}").fetchall()
        return [str(row[0]) for row in rows]

    def storage(self) -> StorageSize:
        """JSONBench's total_size.sh (its num_bytes is total and data); the rest in detail."""
        worker = self.engine.connection()
        jsonbench = worker.execute(JSONBENCH_SIZE).fetchone()
        size_bytes = int(jsonbench[2]) if jsonbench else 0
        database = worker.execute("select * from pragma_database_size()")
        size = dict(zip(database.columns, database.rows[0], strict=True))
        block_size = int(size["block_size"])
        compressions = [row[1] for row in worker.execute(ROW_GROUP_COMPRESSION).rows]
        path = self.engine.path
        detail: JsonObject = {
            "jsonbench_num_blocks": int(jsonbench[1]) if jsonbench else 0,
            "block_size": block_size,
            "total_blocks": int(size["total_blocks"]),
            "used_blocks": int(size["used_blocks"]),
            "free_blocks": int(size["free_blocks"]),
            # what the duckdb system calls total: every used block, the catalog's included
            "used_bytes": int(size["used_blocks"]) * block_size,
            "database_file_bytes": path.stat().st_size if path.exists() else None,
            "wal_size": size.get("wal_size"),
            "row_groups_by_compression": dict(sorted(Counter(compressions).items())),
            "duckdb": worker.version,
        }
        return StorageSize(
            total=size_bytes,
            data=size_bytes,
            index=0,
            on_disk=directory_size(self.engine.workdir),
            detail=detail,
        )

    # ----- queries -------------------------------------------------------------------------
    def sql_names(self) -> dict[str, str]:
        """The duckdb system's queries.sql on JSONBench's table and column."""
        return {"table": TABLE, "column": COLUMN}

    def session_spec(self) -> JsonObject:
        return {"workdir": str(self.engine.workdir)}

    @classmethod
    def open_session(cls, spec: JsonObject) -> QuerySession:
        return DuckDB113Session(spec)


def _chunks(path: Path, size: int) -> Iterator[list[bytes]]:
    """The file's lines (decompressed) in lists of ``size``, as `split -l` cuts them."""
    chunk: list[bytes] = []
    for line in iter_lines(path):
        chunk.append(line)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


ADAPTER = DuckDB113Analytics
