-- The representation "json": each document as the text it arrived as (PostgreSQL's json type:
-- checked to be JSON, stored as written, whitespace, key order and duplicate keys kept),
-- parsed again by every operator that reads it. Same index and queries as ddl.sql/queries.sql
-- (the operators and docbench_time_us exist for json as for jsonb). Placeholders: {table},
-- {compression}. Statements end with ';' at the end of a line; the part after
-- "@finish_load" runs after the load (and counts in the load time).

DROP TABLE IF EXISTS {table};

-- time_us as a bigint when it is written as a JSON integer of at most 18 characters, else
-- NULL (jsonb's function in ddl.sql says the same of jsonb's printed number). json keeps the
-- number as written, so "1e3" or "1.0" are not integers here: the regular expression, not
-- a cast that could fail inside the index expression.
CREATE OR REPLACE FUNCTION docbench_time_us(doc json) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN json_typeof(doc -> 'time_us') = 'number'
                     AND (doc ->> 'time_us') ~ '^-?[0-9]{1,17}$|^[0-9]{18}$'
                THEN (doc ->> 'time_us')::bigint END
$$;

-- Whether json's operators can read the document at all. json's input accepts \u0000, but
-- every operator on such a document fails ("unsupported Unicode escape sequence": they
-- de-escape each string of it), so one such document would fail the index build after the
-- whole load, and every query after it. The table refuses it instead, with that error.
CREATE OR REPLACE FUNCTION docbench_json_readable(doc json) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (doc -> 'kind') IS NULL OR (doc -> 'kind') IS NOT NULL
$$;

CREATE TABLE {table} (
    data json COMPRESSION {compression} NOT NULL CHECK (docbench_json_readable(data))
) WITH (autovacuum_enabled = false);

-- @finish_load

CREATE INDEX {table}_paths ON {table} (
    (data ->> 'kind'),
    (data -> 'commit' ->> 'operation'),
    (data -> 'commit' ->> 'collection'),
    (data ->> 'did'),
    docbench_time_us(data)
);

VACUUM (ANALYZE) {table};

ALTER TABLE {table} SET (autovacuum_enabled = true);
