-- The representation "jsonb_columns": the whole document as jsonb (as ddl.sql) plus the five
-- JSONBench paths as STORED generated columns, computed by PostgreSQL from the document at
-- insert (the loader still sends only the document). The index and the queries
-- (queries-columns.sql) use the columns: this goes beyond JSONBench's rules (a schema given by
-- hand for the five paths), and the variant says so. Placeholders: {table}, {compression}.

DROP TABLE IF EXISTS {table};

-- The same function as ddl.sql's (a generated column must be IMMUTABLE and must never fail).
CREATE OR REPLACE FUNCTION docbench_time_us(doc jsonb) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(doc -> 'time_us') = 'number'
                     AND octet_length(doc ->> 'time_us') <= 18
                     AND strpos(doc ->> 'time_us', '.') = 0
                THEN (doc ->> 'time_us')::bigint END
$$;

CREATE TABLE {table} (
    data jsonb COMPRESSION {compression} NOT NULL,
    kind text GENERATED ALWAYS AS (data ->> 'kind') STORED,
    operation text GENERATED ALWAYS AS (data -> 'commit' ->> 'operation') STORED,
    collection text GENERATED ALWAYS AS (data -> 'commit' ->> 'collection') STORED,
    did text GENERATED ALWAYS AS (data ->> 'did') STORED,
    time_us bigint GENERATED ALWAYS AS (docbench_time_us(data)) STORED
) WITH (autovacuum_enabled = false);

-- @finish_load

CREATE INDEX {table}_paths ON {table} (kind, operation, collection, did, time_us);

VACUUM (ANALYZE) {table};

ALTER TABLE {table} SET (autovacuum_enabled = true);
