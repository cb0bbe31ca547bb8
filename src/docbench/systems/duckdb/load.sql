-- Bulk load of newline-delimited JSON ($path: one file or a list of files).
-- read_ndjson_objects returns each line's text unchanged (outer whitespace trimmed) and
-- refuses invalid JSON and invalid UTF-8 (ignore_errors = false). It also accepts lines that
-- are JSON but not objects (arrays, strings, numbers, null): those are not documents, so
-- error() refuses them (a line of valid JSON that starts with '{' is an object).
INSERT INTO documents
SELECT CASE WHEN starts_with(json, '{') THEN json
            ELSE error('not a JSON object: ' || left(json, 100)) END
FROM read_ndjson_objects($path, ignore_errors = false, maximum_object_size = 1073741824);
