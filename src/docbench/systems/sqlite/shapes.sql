-- The shape queries (`docbench run shapes`) for SQLite's documents table (text or JSONB
-- column doc). Paths are JSON paths ({q_jsonpath}: $.o3.p17); json_type() is NULL where the
-- document lacks the path. Rows in the canonical order of contracts/analytics.py.

-- point: the most common path's value in one document, as JSON text.
SELECT json(doc -> '{point_jsonpath}') AS value
FROM documents
WHERE doc ->> '$.id' = {point_id};

-- rare_aggregate: documents having a rare integer path, and the sum of its values.
SELECT count(*) AS documents, coalesce(sum(doc ->> '{rare_aggregate_jsonpath}'), 0) AS total
FROM documents
WHERE json_type(doc, '{rare_aggregate_jsonpath}') IS NOT NULL;

-- varying_filter: documents where a path of varying type holds a number above the threshold.
SELECT count(*) AS documents
FROM documents
WHERE json_type(doc, '{varying_filter_jsonpath}') IN ('integer', 'real')
  AND doc ->> '{varying_filter_jsonpath}' > {threshold};

-- presence: documents having a path.
SELECT count(*) AS documents
FROM documents
WHERE json_type(doc, '{presence_jsonpath}') IS NOT NULL;
