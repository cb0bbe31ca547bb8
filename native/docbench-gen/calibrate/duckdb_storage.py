"""Load an ndjson file into DuckDB as JSONBench's duckdb/load_data.sh does and print its size
query and the compression DuckDB chose per row group (README, "DuckDB").

JSONBench: `create table bluesky (j JSON)`, the file split into 100k-line chunks, each chunk
inserted by its own `duckdb` process with `read_ndjson_objects(chunk, ignore_errors=false,
maximum_object_size=1048576000)` (a failing chunk is reported and skipped, as the CLI does), size
= distinct blocks of `pragma_storage_info` x block size. Run it with the DuckDB to measure, e.g.
`python3 -m venv /var/tmp/duck113 && /var/tmp/duck113/bin/pip install duckdb==1.1.3`, then
`/var/tmp/duck113/bin/python duckdb_storage.py FILE DB` (DB is created anew and removed).
"""

from __future__ import annotations

import os
import sys
import tempfile

import duckdb

CHUNK_LINES = 100_000


def load(path: str, db: str) -> None:
    con = duckdb.connect(db)
    con.execute("create table bluesky (j JSON)")
    con.close()
    tmp = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(db)))
    with open(path, "rb") as f:
        n = 0
        while lines := [line for _, line in zip(range(CHUNK_LINES), f, strict=False)]:
            chunk = os.path.join(tmp, f"chunk_{n:04d}")
            with open(chunk, "wb") as out:
                out.writelines(lines)
            con = duckdb.connect(db)
            try:
                con.execute(
                    f"insert into bluesky select * from read_ndjson_objects('{chunk}', "
                    "ignore_errors=false, maximum_object_size=1048576000)"
                )
            except duckdb.Error as e:
                print(f"  chunk {n} not loaded: {str(e)[:120]}")
            con.close()
            os.remove(chunk)
            n += 1
    os.rmdir(tmp)


def report(db: str, name: str) -> None:
    con = duckdb.connect(db)
    rows = con.execute("select count(*) from bluesky").fetchall()[0][0]
    blocks, size = con.execute(
        "select count(distinct block_id), count(distinct block_id) * "
        "(select block_size from pragma_database_size()) from pragma_storage_info('bluesky')"
    ).fetchall()[0]
    print(
        f"duckdb {duckdb.__version__} {name}: rows {rows} blocks {blocks} bytes {size} "
        f"bytes/doc {size / rows:.1f}"
    )
    groups = con.execute(
        "select row_group_id, compression, count(*), sum(count) from pragma_storage_info('bluesky') "
        "where column_name = 'j' and segment_type <> 'VALIDITY' group by all order by 1, 2"
    ).fetchall()
    totals: dict[str, list[int]] = {}
    for _, compression, segments, n in groups:
        t = totals.setdefault(compression, [0, 0, 0])
        t[0], t[1], t[2] = t[0] + 1, t[1] + segments, t[2] + n
    print("  per compression [row groups, segments, rows]:", totals)
    print("  row groups in order:", " ".join(g[1] for g in groups))
    con.close()


if __name__ == "__main__":
    file, database = sys.argv[1], sys.argv[2]
    if os.path.exists(database):
        os.remove(database)
    load(file, database)
    report(database, os.path.basename(file))
    os.remove(database)
