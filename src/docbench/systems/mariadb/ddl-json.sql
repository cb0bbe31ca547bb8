-- The representation "json": the documents alone, as MariaDB's JSON (LONGTEXT with a CHECK
-- JSON_VALID(doc)), no generated column and no index: the queries (queries-json.sql) read
-- every path with JSON_VALUE from the text at query time. Placeholders: {table},
-- {table_options} (as ddl.sql).

DROP TABLE IF EXISTS {table};

CREATE TABLE {table} (
    doc JSON NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin {table_options};

-- @finish_load

ANALYZE TABLE {table};
