-- The five queries on the variant "variant" (the documents as DuckDB VARIANT values): the same
-- answers as queries.sql, each path read with DuckDB's dot notation on the VARIANT (no JSON
-- parsing at query time: the VARIANT is stored already decomposed) and cast to text.
--
-- time_us counts only when it is a 64-bit integer, as in the answer oracle: the VARIANT keeps
-- a JSON integer as INT64 or UINT64 (one beyond 64 bits becomes a DOUBLE), and TRY_CAST gives
-- NULL beyond the signed 64-bit range.

-- Q1: events per collection (no collection = NULL, its own group).
SELECT {column}.commit.collection::VARCHAR AS collection, count(*) AS count
FROM {table}
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q2: creates per collection, with the exact number of distinct users.
SELECT {column}.commit.collection::VARCHAR AS collection, count(*) AS count,
       count(DISTINCT {column}.did::VARCHAR) AS users
FROM {table}
WHERE {column}.kind::VARCHAR = 'commit' AND {column}.commit.operation::VARCHAR = 'create'
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q3: creates of posts, reposts and likes per collection and hour of day (UTC).
WITH creates AS (
    SELECT {column}.commit.collection::VARCHAR AS collection,
           CASE WHEN variant_typeof({column}.time_us) IN ('INT64', 'UINT64')
                THEN TRY_CAST({column}.time_us AS BIGINT) END AS time_us
    FROM {table}
    WHERE {column}.kind::VARCHAR = 'commit' AND {column}.commit.operation::VARCHAR = 'create'
)
SELECT collection,
       CAST((time_us % 86400000000 + 86400000000) % 86400000000 // 3600000000 AS INTEGER) AS hour_of_day,
       count(*) AS count
FROM creates
WHERE collection IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like')
GROUP BY collection, hour_of_day
ORDER BY hour_of_day NULLS LAST, collection;

-- Q4: the 3 users who posted first (time_us of their first post, microseconds).
WITH posts AS (
    SELECT {column}.did::VARCHAR AS did,
           CASE WHEN variant_typeof({column}.time_us) IN ('INT64', 'UINT64')
                THEN TRY_CAST({column}.time_us AS BIGINT) END AS time_us
    FROM {table}
    WHERE {column}.kind::VARCHAR = 'commit' AND {column}.commit.operation::VARCHAR = 'create'
      AND {column}.commit.collection::VARCHAR = 'app.bsky.feed.post'
)
SELECT did, min(time_us) AS first_time_us
FROM posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY first_time_us, did NULLS FIRST
LIMIT 3;

-- Q5: the 3 users with the longest span between their first and last post (milliseconds).
WITH posts AS (
    SELECT {column}.did::VARCHAR AS did,
           CASE WHEN variant_typeof({column}.time_us) IN ('INT64', 'UINT64')
                THEN TRY_CAST({column}.time_us AS BIGINT) END AS time_us
    FROM {table}
    WHERE {column}.kind::VARCHAR = 'commit' AND {column}.commit.operation::VARCHAR = 'create'
      AND {column}.commit.collection::VARCHAR = 'app.bsky.feed.post'
)
SELECT did, (max(time_us)::HUGEINT - min(time_us)) / 1000 AS span_ms
FROM posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY span_ms DESC, did NULLS FIRST
LIMIT 3;
