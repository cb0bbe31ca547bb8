"""Bytes of JSONBench's ClickHouse table for one file, under the chDB this Python has.

    python scripts/clickhouse-version-sizes.py WORKDIR FILE [TABLE_SETTINGS] [INSERT_SETTINGS]

Loads FILE (ndjson, or .zst) with one INSERT, as JSONBench's load does, into JSONBench's
published DDL and prints the version, the part count and total bytes, and the biggest data
files. WORKDIR is removed first. CONNECTION (environment) is appended to chDB's connection
string, e.g. "?compatibility=25.11". To compare ClickHouse versions, run it from virtualenvs
with other chdb releases (chdb 4.0.2 is ClickHouse 25.8; 4.2.1 and 4.4.0 are 26.9). The
table in the ClickHouse README ("The ClickHouse version's defaults") came from it.
"""

import os
import shutil
import sys
import time

from chdb import session

DDL = """CREATE TABLE d.bluesky (data JSON(kind LowCardinality(String),
 commit.operation LowCardinality(String), commit.collection LowCardinality(String),
 did String, time_us UInt64) CODEC(ZSTD(1)))
 ENGINE = MergeTree ORDER BY (data.kind, data.commit.operation, data.commit.collection, data.did,
 fromUnixTimestamp64Micro(data.time_us))"""


def main() -> None:
    workdir, data = sys.argv[1], sys.argv[2]
    table_settings = sys.argv[3] if len(sys.argv) > 3 else ""
    insert_settings = sys.argv[4] if len(sys.argv) > 4 else ""
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    db = session.Session(workdir + os.environ.get("CONNECTION", ""))
    print("version", str(db.query("SELECT version()", "TSV")).strip())
    db.query("CREATE DATABASE d")
    db.query(DDL + (f" SETTINGS {table_settings}" if table_settings else ""))
    compression = " COMPRESSION 'zstd'" if data.endswith(".zst") else ""
    extra = f", {insert_settings}" if insert_settings else ""
    started = time.monotonic()
    db.query(
        f"INSERT INTO d.bluesky FROM INFILE '{data}'{compression} SETTINGS "
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
                "WHERE active AND database = 'd' AND table = 'bluesky'",
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
