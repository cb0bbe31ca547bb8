-- The shape queries (`docbench run shapes`) for PostgreSQL's document column ({table}.data;
-- data::jsonb: a no-op on jsonb, a parse on the json representation). Paths
-- are jsonb path arrays ({q_keys}: o3,p17); the generator never writes a JSON null, so a
-- path that is not NULL is a path the document has. Rows in the canonical order of
-- contracts/analytics.py (QuerySession.execute_shape).

-- point: the most common path's value in one document, as JSON text.
SELECT (data::jsonb #> '{{point_keys}}')::text AS value
FROM {table}
WHERE data::jsonb -> 'id' = '{point_id}'::jsonb;

-- rare_aggregate: documents having a rare integer path, and the sum of its values.
SELECT count(*) AS documents, coalesce(sum((data::jsonb #>> '{{rare_aggregate_keys}}')::bigint), 0)::bigint AS total
FROM {table}
WHERE data::jsonb #> '{{rare_aggregate_keys}}' IS NOT NULL;

-- varying_filter: documents where a path of varying type holds a number above the threshold
-- (CASE: the cast must never see a string).
SELECT count(*) AS documents
FROM {table}
WHERE CASE WHEN jsonb_typeof(data::jsonb #> '{{varying_filter_keys}}') = 'number'
           THEN (data::jsonb #>> '{{varying_filter_keys}}')::numeric > {threshold} END;

-- presence: documents having a path.
SELECT count(*) AS documents
FROM {table}
WHERE data::jsonb #> '{{presence_keys}}' IS NOT NULL;
