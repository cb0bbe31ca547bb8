-- The shape queries (`docbench run shapes`) for MariaDB's JSON column ({documents}.doc).
-- Paths are JSON paths ({q_jsonpath}: $.o3.p17). Rows in the canonical order of
-- contracts/analytics.py.

-- point: the most common path's value in one document, as JSON text.
SELECT JSON_EXTRACT(doc, '{point_jsonpath}') AS value
FROM {documents}
WHERE JSON_VALUE(doc, '$.id') = '{point_id}';

-- rare_aggregate: documents having a rare integer path, and the sum of its values.
SELECT COUNT(*) AS documents, COALESCE(SUM(CAST(JSON_VALUE(doc, '{rare_aggregate_jsonpath}') AS SIGNED)), 0) AS total
FROM {documents}
WHERE JSON_CONTAINS_PATH(doc, 'one', '{rare_aggregate_jsonpath}');

-- varying_filter: documents where a path of varying type holds a number above the threshold.
SELECT COUNT(*) AS documents
FROM {documents}
WHERE CASE WHEN JSON_TYPE(JSON_EXTRACT(doc, '{varying_filter_jsonpath}')) IN ('INTEGER', 'DOUBLE')
           THEN CAST(JSON_VALUE(doc, '{varying_filter_jsonpath}') AS DOUBLE) > {threshold} END;

-- presence: documents having a path.
SELECT COUNT(*) AS documents
FROM {documents}
WHERE JSON_CONTAINS_PATH(doc, 'one', '{presence_jsonpath}');
