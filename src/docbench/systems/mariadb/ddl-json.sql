-- The representation "json": the documents alone, as MariaDB's JSON (LONGTEXT with a CHECK
-- JSON_VALID(doc)), no generated column and no index. queries.sql runs on the view
-- {table}_paths, which reads every path with JSON_VALUE from the text at query time (the
-- same expressions as ddl.sql's virtual columns, without their truncation of long strings).
-- Placeholders: {table}, {table_options} (as ddl.sql).

DROP VIEW IF EXISTS {table}_paths;

DROP TABLE IF EXISTS {table};

CREATE TABLE {table} (
    doc JSON NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin {table_options};

CREATE VIEW {table}_paths AS
SELECT JSON_VALUE(doc, '$.kind') AS kind,
       JSON_VALUE(doc, '$.commit.operation') AS commit_operation,
       JSON_VALUE(doc, '$.commit.collection') AS commit_collection,
       JSON_VALUE(doc, '$.did') AS did,
       CASE WHEN JSON_TYPE(JSON_EXTRACT(doc, '$.time_us')) = 'INTEGER'
             AND LENGTH(JSON_VALUE(doc, '$.time_us')) <= 18
            THEN CAST(JSON_VALUE(doc, '$.time_us') AS SIGNED) END AS time_us
FROM {table};

-- @finish_load

ANALYZE TABLE {table};
