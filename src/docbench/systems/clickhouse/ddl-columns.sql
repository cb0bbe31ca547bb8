-- The representation "columns": each document as its text (String, as ddl-string.sql) and the
-- five JSONBench paths as ordinary typed columns beside it, MATERIALIZED from the text at
-- insert; the sort key and the queries (queries-columns.sql) use the columns. A schema by
-- hand for five paths: beyond JSONBench's rules, and the variant says so.
-- Placeholders: {codec}, {max_parts_to_merge_at_once}, {table_settings} (as ddl.sql).
CREATE DATABASE IF NOT EXISTS docbench;
CREATE TABLE docbench.bluesky
(
    `data` String {codec},
    `kind` LowCardinality(String) MATERIALIZED JSONExtractString(data, 'kind') {codec},
    `operation` LowCardinality(String) MATERIALIZED JSONExtractString(data, 'commit', 'operation') {codec},
    `collection` LowCardinality(String) MATERIALIZED JSONExtractString(data, 'commit', 'collection') {codec},
    `did` String MATERIALIZED JSONExtractString(data, 'did') {codec},
    `time_us` UInt64 MATERIALIZED JSONExtractUInt(data, 'time_us') {codec},
    CONSTRAINT is_json CHECK isValidJSON(data)
)
ENGINE = MergeTree
ORDER BY (kind, operation, collection, did, fromUnixTimestamp64Micro(time_us))
SETTINGS cleanup_delay_period = 1, max_cleanup_delay_period = 1, cleanup_delay_period_random_add = 0,
         max_parts_to_merge_at_once = {max_parts_to_merge_at_once}{table_settings};
