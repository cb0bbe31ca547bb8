-- docbench's Spark table, in Parquet files (Spark's default format, snappy), no index.
-- {columns}: (doc VARIANT) (Spark's binary JSON) or (doc STRING) (the JSON text); nothing for
-- the inferred columns (struct: the loader creates the table from the schema spark.read.json
-- infers, and a session's CREATE finds that schema in the files). {location}: LOCATION '<dir>'
-- on docbench's own server (its catalog is in memory: every session declares the table over
-- the same files), nothing by URL (the cluster's warehouse). Every session runs both
-- statements, hence IF NOT EXISTS.
CREATE DATABASE IF NOT EXISTS docbench;
CREATE TABLE IF NOT EXISTS docbench.documents {columns} USING parquet {location};
