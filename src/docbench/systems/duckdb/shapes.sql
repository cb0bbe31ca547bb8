-- The shape queries (`docbench run shapes`) for DuckDB's JSON column ({table}.{column}).
-- Paths are JSON paths ({q_jsonpath}: $.o3.p17); json_extract() is NULL where the document
-- lacks the path. Rows in the canonical order of contracts/analytics.py.

-- point: the most common path's value in one document, as JSON text.
SELECT json_extract({column}, '{point_jsonpath}')::VARCHAR AS value
FROM {table}
WHERE json_extract_string({column}, '$.id') = '{point_id}';

-- rare_aggregate: documents having a rare integer path, and the sum of its values.
SELECT count(*) AS documents,
       coalesce(sum(json_extract({column}, '{rare_aggregate_jsonpath}')::BIGINT), 0)::BIGINT AS total
FROM {table}
WHERE json_extract({column}, '{rare_aggregate_jsonpath}') IS NOT NULL;

-- varying_filter: documents where a path of varying type holds a number above the threshold
-- (TRY_CAST: a string is never a number, whatever the order the filters run in).
SELECT count(*) AS documents
FROM {table}
WHERE json_type({column}, '{varying_filter_jsonpath}') IN ('UBIGINT', 'BIGINT', 'DOUBLE')
  AND TRY_CAST(json_extract_string({column}, '{varying_filter_jsonpath}') AS DOUBLE) > {threshold};

-- presence: documents having a path.
SELECT count(*) AS documents
FROM {table}
WHERE json_extract({column}, '{presence_jsonpath}') IS NOT NULL;
