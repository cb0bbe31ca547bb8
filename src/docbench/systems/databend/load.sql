-- A whole ndjson file (or docbench's batch file) into the table: NDJSON's $1 is the whole
-- line as a VARIANT. ON_ERROR = ABORT: one refused line and nothing of the file is kept (the
-- driver then isolates it in batches). FORCE: load the file even if a COPY loaded a file of
-- that name before (Databend skips files it has copied, by name, otherwise; docbench's batch
-- file has one name). {path}: the file's absolute path.
COPY INTO documents FROM (SELECT $1 FROM 'fs://{path}')
FILE_FORMAT = (TYPE = NDJSON COMPRESSION = AUTO) ON_ERROR = ABORT FORCE = TRUE;
