-- docbench's five analytical queries for PostgreSQL ({table} = the variant's table).
-- Rows come back in docbench's canonical column order. The filter expressions are exactly the
-- index expressions of ddl.sql; docbench_time_us(data) is time_us as bigint (NULL when
-- time_us is not a non-negative 64-bit JSON integer), defined in ddl.sql.

-- Q1: documents per collection (no collection: NULL, its own group).
SELECT data -> 'commit' ->> 'collection' AS collection, count(*) AS count
FROM {table}
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q2: creates per collection, with the exact number of distinct users. Written as two
-- aggregation levels (per collection and user, then per collection) rather than
-- count(DISTINCT ...), which PostgreSQL evaluates by sorting whole rows: same answer (a
-- missing did is not counted as a user), about twice as fast.
SELECT collection, sum(n)::bigint AS count, count(did) AS users
FROM (
    SELECT data -> 'commit' ->> 'collection' AS collection, data ->> 'did' AS did, count(*) AS n
    FROM {table}
    WHERE data ->> 'kind' = 'commit' AND data -> 'commit' ->> 'operation' = 'create'
    GROUP BY collection, did
) AS per_user
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q3: creates of posts, reposts and likes per collection and hour of day (UTC).
SELECT data -> 'commit' ->> 'collection' AS collection,
       ((docbench_time_us(data) % 86400000000 + 86400000000) % 86400000000 / 3600000000)::int
           AS hour_of_day, count(*) AS count
FROM {table}
WHERE data ->> 'kind' = 'commit' AND data -> 'commit' ->> 'operation' = 'create'
  AND data -> 'commit' ->> 'collection' IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like')
GROUP BY collection, hour_of_day
ORDER BY hour_of_day, collection;

-- Q4: the 3 users who posted first (time_us of their first post, microseconds).
SELECT data ->> 'did' AS did, min(docbench_time_us(data)) AS first_time_us
FROM {table}
WHERE data ->> 'kind' = 'commit' AND data -> 'commit' ->> 'operation' = 'create'
  AND data -> 'commit' ->> 'collection' = 'app.bsky.feed.post'
GROUP BY did
HAVING min(docbench_time_us(data)) IS NOT NULL
ORDER BY first_time_us, did NULLS FIRST
LIMIT 3;

-- Q5: the 3 users with the longest span between their first and last post (milliseconds).
SELECT data ->> 'did' AS did,
       (max(docbench_time_us(data)) - min(docbench_time_us(data))) / 1000.0 AS span_ms
FROM {table}
WHERE data ->> 'kind' = 'commit' AND data -> 'commit' ->> 'operation' = 'create'
  AND data -> 'commit' ->> 'collection' = 'app.bsky.feed.post'
GROUP BY did
HAVING min(docbench_time_us(data)) IS NOT NULL
ORDER BY span_ms DESC, did NULLS FIRST
LIMIT 3;
