-- docbench's DuckDB table: one JSON column, no index (as JSONBench). DuckDB picks the
-- compression of each column segment itself (dictionary / FSST for JSON text).
DROP TABLE IF EXISTS documents;
CREATE TABLE documents (doc JSON);
