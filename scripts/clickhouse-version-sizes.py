"""Bytes of JSONBench's ClickHouse table for one file, under the chDB this Python has.

    python scripts/clickhouse-version-sizes.py WORKDIR FILE [TABLE_SETTINGS] [INSERT_SETTINGS]

Loads FILE (ndjson, or .zst) with one INSERT, as JSONBench's load does, into the table of the
jsonbench variant (the system's own ddl.sql: JSONBench's published DDL, CODEC(ZSTD(1)), the
default dynamic paths; TABLE_SETTINGS replace the variant's) and prints the version, the part
count and total bytes, and the biggest data files. WORKDIR is removed first. Only chdb is
needed besides this checkout's src/ (no docbench install). CONNECTION (environment) is
appended to chDB's connection string, e.g. "?compatibility=25.11". To compare ClickHouse
versions, run it from virtualenvs with other chdb releases (chdb 4.0.2 is ClickHouse 25.8;
4.2.1 and 4.4.0 are 26.9). The table in the ClickHouse README ("The ClickHouse version's
defaults") came from it.
"""

import os
import shutil
import sys
import time
from pathlib import Path

from chdb import session

SOURCE = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(SOURCE))
from docbench.core.sqlfiles import read_sql_statements, render  # noqa: E402

DDL = SOURCE / "docbench" / "systems" / "clickhouse" / "ddl.sql"
TABLE = "docbench.bluesky"


def create_table(db: session.Session, table_settings: str) -> None:
    """The jsonbench variant's statements (analytics.py), with these table settings."""
    names = {
        "json_parameters": "",
        "codec": "CODEC(ZSTD(1))",
        "max_parts_to_merge_at_once": "5",
        "table_settings": f", {table_settings}" if table_settings else "",
    }
    for statement in read_sql_statements(DDL):
        db.query(render(statement, **names))


def main() -> None:
    workdir, data = sys.argv[1], sys.argv[2]
    table_settings = sys.argv[3] if len(sys.argv) > 3 else ""
    insert_settings = sys.argv[4] if len(sys.argv) > 4 else ""
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    db = session.Session(workdir + os.environ.get("CONNECTION", ""))
    print("version", str(db.query("SELECT version()", "TSV")).strip())
    create_table(db, table_settings)
    compression = " COMPRESSION 'zstd'" if data.endswith(".zst") else ""
    extra = f", {insert_settings}" if insert_settings else ""
    started = time.monotonic()
    db.query(
        f"INSERT INTO {TABLE} FROM INFILE '{data}'{compression} SETTINGS "
        "min_insert_block_size_rows = 1000000, min_insert_block_size_bytes = 0, "
        f"input_format_allow_errors_num = 1000000000, input_format_allow_errors_ratio = 1{extra} "
        "FORMAT JSONAsObject"
    )
    print("load_s", round(time.monotonic() - started, 1))
    print(
        "parts rows bytes_on_disk",
        str(
            db.query(
                "SELECT count(), sum(rows), sum(bytes_on_disk) FROM system.parts "
                "WHERE active AND database = 'docbench' AND table = 'bluesky'",
                "TSV",
            )
        ).strip(),
    )
    files = [
        (os.path.getsize(os.path.join(root, name)), name)
        for root, _, names in os.walk(workdir)
        for name in names
        if name.endswith(".bin")
    ]
    print("data files", len(files), "bytes", sum(size for size, _ in files))
    for size, name in sorted(files, reverse=True)[:25]:
        print(size, name)


if __name__ == "__main__":
    main()
