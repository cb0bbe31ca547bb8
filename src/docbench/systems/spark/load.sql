-- A batch of lines (the temporary view docbench_batch: i, the line's index in the batch, and
-- line, its text) into the table. parse_json keeps the first JSON value of a text and drops
-- whatever follows it ('{"a":1} x' is taken as {"a":1}), so each line is parsed inside an
-- array with a sentinel after it: '[' || line || ',"<sentinel>"]' (a string random per run).
-- The line is one JSON object iff that array parses, holds exactly two values, the second
-- is the sentinel and the first an object. The array adds a level of nesting: a line at
-- Spark's depth limit (1000) fails inside it and parses alone; the loader asks parse_json
-- for such a line alone (and orjson whether anything follows its value) and names it in
-- {rescued}. {document}: what is stored (the parsed value for VARIANT: variant_get(a, '$[0]'),
-- parse_json(line) for a rescued line; the line for the JSON text).

-- the lines that are not one JSON object: their index and why (invalid, several, not_object)
SELECT i,
       CASE WHEN a IS NULL THEN 'invalid'
            WHEN try_variant_get(a, '$[1]', 'string') IS DISTINCT FROM '{sentinel}'
                 OR try_variant_get(a, '$[2]') IS NOT NULL THEN 'several'
            ELSE 'not_object' END AS why
FROM (SELECT i, try_parse_json('[' || line || ',"{sentinel}"]') AS a FROM docbench_batch)
WHERE a IS NULL
   OR try_variant_get(a, '$[1]', 'string') IS DISTINCT FROM '{sentinel}'
   OR try_variant_get(a, '$[2]') IS NOT NULL
   OR NOT startswith(schema_of_variant(variant_get(a, '$[0]')), 'OBJECT');

-- the others into the table
INSERT INTO docbench.documents
SELECT {document}
FROM (SELECT i, line, try_parse_json('[' || line || ',"{sentinel}"]') AS a FROM docbench_batch)
WHERE i NOT IN ({refused}) AND (a IS NOT NULL OR i IN ({rescued}));
