-- JSONBench's load of one 100k-line chunk (duckdb/load_data.sh at d77d5de), each chunk a
-- `duckdb FILE -c "..."` of its own: {chunk} is the chunk file's path, quoted as an SQL string.
-- read_ndjson_objects keeps each line's text unchanged and refuses invalid JSON and invalid
-- UTF-8; it refuses the whole chunk then (ignore_errors=false). It takes lines that are JSON
-- but no object (arrays, strings, numbers): docbench's load driver refuses those itself
-- before any engine sees them.
insert into bluesky select * from read_ndjson_objects({chunk}, ignore_errors=false, maximum_object_size=1048576000);
