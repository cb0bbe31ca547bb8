-- The shape queries (`docbench run shapes`) for ClickHouse's JSON column (docbench.bluesky,
-- data). Paths are sub-columns ({q_path}: data.o3.p17, Dynamic): NULL where the document
-- lacks the path. Rows in the canonical order of contracts/analytics.py.

-- point: the most common path's value in one document, as JSON text (64-bit integers
-- unquoted, as they were sent).
SELECT toJSONString(data.{point_path}) AS value
FROM docbench.bluesky
WHERE data.id::UInt64 = {point_id}
SETTINGS output_format_json_quote_64bit_integers = 0;

-- rare_aggregate: documents having a rare integer path, and the sum of its values.
SELECT count() AS documents, sum(data.{rare_aggregate_path}::Int64) AS total
FROM docbench.bluesky
WHERE data.{rare_aggregate_path} IS NOT NULL;

-- varying_filter: documents where a path of varying type holds a number above the threshold
-- (dynamicElement: NULL unless the value is that type).
SELECT count() AS documents
FROM docbench.bluesky
WHERE dynamicElement(data.{varying_filter_path}, 'Int64') > {threshold}
   OR dynamicElement(data.{varying_filter_path}, 'UInt64') > {threshold}
   OR dynamicElement(data.{varying_filter_path}, 'Float64') > {threshold};

-- presence: documents having a path.
SELECT count() AS documents
FROM docbench.bluesky
WHERE data.{presence_path} IS NOT NULL;
