-- Bulk load of newline-delimited JSON ($path: one file or a list of files).
-- read_ndjson_objects returns each line's text unchanged (outer whitespace trimmed) and
-- refuses invalid JSON and invalid UTF-8 (ignore_errors = false). It also accepts lines that
-- are JSON but not objects (arrays, strings, numbers, null): those are not documents, so
-- error() refuses them (a line of valid JSON that starts with '{' is an object).
INSERT INTO documents
SELECT CASE WHEN starts_with(json, '{') THEN json
            ELSE error('not a JSON object: ' || left(json, 100)) END
FROM read_ndjson_objects($path, ignore_errors = false, maximum_object_size = 1073741824);

-- docbench's whole-file load ($path: a list of files, loaded in one statement: DuckDB's reader
-- runs its threads across files): the files' lines through DuckDB's CSV reader
-- as one JSON column (no delimiter, quote or escape a JSON line could hold), so that the
-- VARCHAR -> JSON cast (the same JSON parser as read_ndjson_objects) judges each line, and a
-- line it refuses is skipped and recorded with its file and line number in the rejects tables (the
-- text is kept as it is, like read_ndjson_objects). Every line starts with '{' (the driver
-- checked), so a line the cast accepts is an object. {doc_value}: the value inserted, json
-- itself, or for a VARIANT column json::VARCHAR::JSON (DuckDB 2.0.1 stores the reader's JSON
-- column in a VARIANT as one string; a JSON value cast from text becomes the object).
INSERT INTO documents
SELECT {doc_value}
FROM read_csv($path, columns = {'json': 'JSON'}, header = false, auto_detect = false,
              delim = chr(1), quote = '', escape = '', new_line = '\n',
              max_line_size = 1073741824, store_rejects = true,
              rejects_table = 'docbench_rejects', rejects_scan = 'docbench_reject_scans');
