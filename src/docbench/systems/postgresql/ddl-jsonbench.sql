-- JSONBench's PostgreSQL schema (postgresql/ddl.sql of https://github.com/ClickHouse/JSONBench
-- at d77d5de, PostgreSQL 16.6) for the variant `jsonbench`, statement for statement. What
-- differs from docbench's ddl.sql, and why it matters for the sizes:
--   * the index is created BEFORE the load, so COPY maintains it row by row (page splits
--     leave its pages ~70% full; docbench's index built after the load packs them to 90%):
--     at 1m JSONBench published 144,343,040 index bytes, docbench's ddl.sql makes ~105 MB;
--   * its time column is TO_TIMESTAMP((data ->> 'time_us')::BIGINT / 1000000.0), which fails
--     for a time_us that is no integer, beyond 64 bits or beyond the timestamp range: such a
--     document is refused by the insert (the refusal is logged like any other);
--   * the column is lz4-compressed (JSONBench's choice since its pglz variant was dropped);
--   * autovacuum stays on (the server's default), as on JSONBench's server.
-- Placeholders filled in by analytics.py: {table} (bluesky_jsonbench). The index is named
-- {table}_paths as docbench's (JSONBench's idx_bluesky: every docbench variant has its table
-- in one database, so names must differ; a name changes no size).

DROP TABLE IF EXISTS {table};

-- Not JSONBench's: docbench's queries.sql reads time_us through this function (the same as in
-- ddl.sql), so that this variant answers the same five queries, checked against the oracle.
-- A function stores nothing; no index of this variant uses it.
CREATE OR REPLACE FUNCTION docbench_time_us(doc jsonb) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(doc -> 'time_us') = 'number'
                     AND octet_length(doc ->> 'time_us') <= 18
                     AND strpos(doc ->> 'time_us', '.') = 0
                THEN (doc ->> 'time_us')::bigint END
$$;

CREATE TABLE {table} (
    data JSONB COMPRESSION lz4 NOT NULL
);

CREATE INDEX {table}_paths
ON {table} (
    (data ->> 'kind'),
    (data -> 'commit' ->> 'operation'),
    (data -> 'commit' ->> 'collection'),
    (data ->> 'did'),
    (TO_TIMESTAMP((data ->> 'time_us')::BIGINT / 1000000.0))
);

-- @finish_load

-- JSONBench's create_and_load.sh after its load: "VACUUM ANALYZE $TABLE_NAME".
VACUUM ANALYZE {table};
