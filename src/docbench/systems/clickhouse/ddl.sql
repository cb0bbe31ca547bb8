-- docbench's ClickHouse table (JSONBench's DDL): ONE JSON column; the five JSONBench paths are
-- typed paths (stored as their own typed subcolumns, so they can be in the sort key), every
-- other path is stored by the JSON type itself (dynamic paths / shared data). The table is
-- sorted by (kind, commit.operation, commit.collection, did, time_us as a timestamp); the
-- sparse primary index on that key is the only index.
-- Placeholders (from the variant's settings):
--   {json_parameters}  JSON type parameters before the typed paths, e.g. "max_dynamic_paths = 0,"
--   {codec}            column codec, e.g. "CODEC(ZSTD(3))"; empty = ClickHouse's size-aware default
--                      (LZ4 for parts under 100 MB, ZSTD(3) above)
--   {max_parts_to_merge_at_once}  the most parts one merge reads (below)
--   {table_settings}   more table settings, e.g. JSONBench's serialization versions (", name = 'v3'")
-- Table settings: housekeeping only. A merge reads at most 20 parts at once (5 for the
-- jsonbench variant; default 100): every part of a JSON column is hundreds of files (~1,500
-- with the default dynamic paths), and this machine's 20,000 open files per
-- process (a hard limit docbench cannot raise without CAP_SYS_RESOURCE) must hold a merge
-- while the next file is inserted. The thread that deletes the parts a merge replaced runs
-- every second (default: every 30 s, backing off to 300 s when idle), so that right after
-- OPTIMIZE FINAL the directory holds only the table's one part.
CREATE DATABASE IF NOT EXISTS docbench;
CREATE TABLE docbench.bluesky
(
    `data` JSON(
        {json_parameters}
        kind LowCardinality(String),
        commit.operation LowCardinality(String),
        commit.collection LowCardinality(String),
        did String,
        time_us UInt64) {codec}
)
ENGINE = MergeTree
ORDER BY (
    data.kind,
    data.commit.operation,
    data.commit.collection,
    data.did,
    fromUnixTimestamp64Micro(data.time_us))
SETTINGS cleanup_delay_period = 1, max_cleanup_delay_period = 1, cleanup_delay_period_random_add = 0,
         max_parts_to_merge_at_once = {max_parts_to_merge_at_once}{table_settings};
