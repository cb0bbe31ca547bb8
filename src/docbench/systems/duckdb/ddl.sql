-- docbench's DuckDB table: one JSON column, no index (as JSONBench). DuckDB picks the
-- compression of each column segment itself (dictionary / FSST for JSON text).
-- {doc_type}: the column's type, JSON (text) or a representation variant's (VARIANT: each
-- document decomposed into typed values at insert).
DROP TABLE IF EXISTS documents;
CREATE TABLE documents (doc {doc_type});
