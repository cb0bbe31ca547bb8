-- docbench's PostgreSQL schema. Placeholders filled in by adapter.py:
--   {table}        the table of this variant (bluesky_<variant>)
--   {compression}  the TOAST compression of the document column (pglz or lz4)
-- Statements end with ';' at the end of a line. The part after the "@finish_load" marker runs
-- after the load (and counts in the load time): index build, VACUUM ANALYZE.

DROP TABLE IF EXISTS {table};

-- time_us as a bigint when it is a JSON integer of at most 18 characters (from -10^17 to
-- 10^18 µs: up to the year ~33,700), else NULL. An index expression must never fail: one
-- odd document (a fraction, a string, an integer beyond 64 bits) would make CREATE INDEX fail
-- after the whole load, and the queries fail with it. jsonb prints numbers without exponent,
-- so "no '.' and at most 18 characters" means an integer that fits a bigint. The planner
-- inlines this SQL function, so the index and the queries share the exact same expression.
CREATE OR REPLACE FUNCTION docbench_time_us(doc jsonb) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(doc -> 'time_us') = 'number'
                     AND octet_length(doc ->> 'time_us') <= 18
                     AND strpos(doc ->> 'time_us', '.') = 0
                THEN (doc ->> 'time_us')::bigint END
$$;

-- One JSONB document per row, nothing extracted. Autovacuum is off during the load (the
-- load ends with an explicit VACUUM ANALYZE) and back on afterwards.
CREATE TABLE {table} (
    data jsonb COMPRESSION {compression} NOT NULL
) WITH (autovacuum_enabled = false);

-- @finish_load

-- The composite index on the five JSONBench paths, lowest cardinality first. The expressions
-- are exactly those of queries.sql, so the planner can match them.
CREATE INDEX {table}_paths ON {table} (
    (data ->> 'kind'),
    (data -> 'commit' ->> 'operation'),
    (data -> 'commit' ->> 'collection'),
    (data ->> 'did'),
    docbench_time_us(data)
);

-- Visibility map and hint bits for the whole table, statistics for the table and for the
-- index expressions (the planner's selectivity estimates of the filters come from these).
VACUUM (ANALYZE) {table};

ALTER TABLE {table} SET (autovacuum_enabled = true);
