-- docbench's five analytical queries for Spark's VARIANT column, rows in docbench's canonical
-- column order.
--
-- try_variant_get(doc, '$.a.b', 'string') is a JSON string's text, any other value's JSON
-- text, and NULL for JSON null, a missing path or a path through a non-object: the oracle's
-- grouping. kind and operation compare with those exact strings (no other JSON value's text
-- equals them). time_us counts only when Spark holds it as an integer: schema_of_variant is
-- one of the integer types, or a decimal of scale 0 (parse_json keeps an integer beyond
-- 64 bits as a decimal, and the shredded column of a Spark 4.1 file gives its integers as
-- DECIMAL(p,0)), and it fits in a BIGINT (try_variant_get is NULL beyond): {time_us}, one
-- expression for the three queries (analytics.TIME_US). Hours use integer arithmetic on
-- microseconds (UTC).

-- Q1: events per collection (no collection = NULL, its own group).
SELECT try_variant_get(doc, '$.commit.collection', 'string') AS collection, count(*) AS count
FROM {table}
GROUP BY 1
ORDER BY count DESC, collection NULLS FIRST;

-- Q2: creates per collection, with the exact number of distinct users.
SELECT try_variant_get(doc, '$.commit.collection', 'string') AS collection,
       count(*) AS count,
       count(DISTINCT try_variant_get(doc, '$.did', 'string')) AS users
FROM {table}
WHERE try_variant_get(doc, '$.kind', 'string') = 'commit'
  AND try_variant_get(doc, '$.commit.operation', 'string') = 'create'
GROUP BY 1
ORDER BY count DESC, collection NULLS FIRST;

-- Q3: creates of posts, reposts and likes per collection and hour of day (UTC).
SELECT collection, CAST(pmod(time_us, 86400000000) DIV 3600000000 AS INT) AS hour_of_day, count(*) AS count
FROM (
    SELECT try_variant_get(doc, '$.commit.collection', 'string') AS collection,
           {time_us} AS time_us
    FROM {table}
    WHERE try_variant_get(doc, '$.kind', 'string') = 'commit'
      AND try_variant_get(doc, '$.commit.operation', 'string') = 'create'
      AND try_variant_get(doc, '$.commit.collection', 'string') IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like')
) AS creates
GROUP BY collection, hour_of_day
ORDER BY hour_of_day NULLS LAST, collection;

-- Q4: the 3 users who posted first (time_us of their first post, microseconds).
SELECT did, min(time_us) AS first_time_us
FROM (
    SELECT try_variant_get(doc, '$.did', 'string') AS did,
           {time_us} AS time_us
    FROM {table}
    WHERE try_variant_get(doc, '$.kind', 'string') = 'commit'
      AND try_variant_get(doc, '$.commit.operation', 'string') = 'create'
      AND try_variant_get(doc, '$.commit.collection', 'string') = 'app.bsky.feed.post'
) AS posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY first_time_us, did NULLS FIRST
LIMIT 3;

-- Q5: the 3 users with the longest span between their first and last post (milliseconds).
SELECT did, (max(time_us) - min(time_us)) DIV 1000 AS span_ms
FROM (
    SELECT try_variant_get(doc, '$.did', 'string') AS did,
           {time_us} AS time_us
    FROM {table}
    WHERE try_variant_get(doc, '$.kind', 'string') = 'commit'
      AND try_variant_get(doc, '$.commit.operation', 'string') = 'create'
      AND try_variant_get(doc, '$.commit.collection', 'string') = 'app.bsky.feed.post'
) AS posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY span_ms DESC, did NULLS FIRST
LIMIT 3;
