-- docbench's MariaDB schema. Placeholders filled in by adapter.py:
--   {table}          the table of this variant (bluesky_<variant>)
--   {table_options}  the variant's InnoDB storage options (ROW_FORMAT, PAGE_COMPRESSED)
-- Statements end with ';' at the end of a line. The part after the "@finish_load" marker runs
-- after the load (and counts in the load time): index build, ANALYZE TABLE.

DROP TABLE IF EXISTS {table};

-- One JSON document per row. MariaDB's JSON is LONGTEXT with a CHECK (JSON_VALID(doc)): the
-- document is stored as the text that was loaded, and invalid JSON is refused.
-- The five JSONBench paths are VIRTUAL generated columns: computed from the document when
-- read, stored nowhere but in the index (the idiomatic way to index JSON in MariaDB). String
-- paths keep at most 32/320 characters (the index key limit is 3072 bytes); binary collation,
-- so grouping and distinct counts are exact (no case or accent folding).
-- time_us is a BIGINT only when the JSON value is an integer of at most 18 characters, else
-- NULL: a virtual column of an index must never fail (a fraction, a string or an integer
-- beyond 64 bits in one document would make the index build or the insert fail).
CREATE TABLE {table} (
    doc JSON NOT NULL,
    kind VARCHAR(32) AS (LEFT(JSON_VALUE(doc, '$.kind'), 32)) VIRTUAL,
    commit_operation VARCHAR(32) AS (LEFT(JSON_VALUE(doc, '$.commit.operation'), 32)) VIRTUAL,
    commit_collection VARCHAR(320) AS (LEFT(JSON_VALUE(doc, '$.commit.collection'), 320)) VIRTUAL,
    did VARCHAR(320) AS (LEFT(JSON_VALUE(doc, '$.did'), 320)) VIRTUAL,
    time_us BIGINT AS (CASE WHEN JSON_TYPE(JSON_EXTRACT(doc, '$.time_us')) = 'INTEGER'
                             AND LENGTH(JSON_VALUE(doc, '$.time_us')) <= 18
                            THEN CAST(JSON_VALUE(doc, '$.time_us') AS SIGNED) END) VIRTUAL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin {table_options};

-- @finish_load

-- The composite index on the five JSONBench paths, lowest cardinality first. It holds the
-- virtual columns' values, so Q2-Q5 read it without touching the documents.
ALTER TABLE {table} ADD INDEX {table}_paths (kind, commit_operation, commit_collection, did, time_us);

-- InnoDB's persistent statistics (row count, index cardinalities) for the optimizer and for
-- information_schema.TABLES.
ANALYZE TABLE {table};
