-- JSONBench's DuckDB table (duckdb/ddl.sql of https://github.com/ClickHouse/JSONBench at
-- d77d5de), as its create_and_load.sh runs it: `duckdb FILE < ddl.sql` on a new database file
-- (docbench's create() deletes the file first, so no DROP is needed).
create table bluesky (j JSON);
