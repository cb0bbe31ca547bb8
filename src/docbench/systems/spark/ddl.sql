-- docbench's Spark table: one column holding the whole document, in Parquet files (Spark's
-- default format, snappy), no index. {column_type}: VARIANT (Spark's binary JSON) or STRING
-- (the JSON text); {location}: LOCATION '<dir>' on docbench's own server (its catalog is in
-- memory: every session declares the table over the same files), nothing by URL (the
-- cluster's warehouse). Both statements are run by every session, hence IF NOT EXISTS.
CREATE DATABASE IF NOT EXISTS docbench;
CREATE TABLE IF NOT EXISTS docbench.documents (doc {column_type}) USING parquet {location};
