-- docbench's Databend table: one VARIANT column (Databend's binary JSON, JSONB), no index
-- beyond the bloom and min/max indexes Databend keeps for every block by itself.
-- {table_options}: the variant's table options (storage format; empty: Databend's defaults).
DROP TABLE IF EXISTS documents;
CREATE TABLE documents (doc VARIANT NOT NULL) {table_options};
