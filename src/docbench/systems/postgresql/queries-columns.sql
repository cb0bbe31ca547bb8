-- The five queries on the variant jsonb_columns (ddl-columns.sql): the same as queries.sql, with
-- each path read from its generated column (kind, operation, collection, did, and time_us as
-- docbench_time_us computed it at insert) instead of from the document.

-- Q1: documents per collection (no collection: NULL, its own group).
SELECT collection, count(*) AS count
FROM {table}
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q2: creates per collection, with the exact number of distinct users. Written as two
-- aggregation levels (per collection and user, then per collection) rather than
-- count(DISTINCT ...), which PostgreSQL evaluates by sorting whole rows: same answer (a
-- missing did is not counted as a user), about twice as fast.
SELECT collection, sum(n)::bigint AS count, count(did) AS users
FROM (
    SELECT collection, did, count(*) AS n
    FROM {table}
    WHERE kind = 'commit' AND operation = 'create'
    GROUP BY collection, did
) AS per_user
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q3: creates of posts, reposts and likes per collection and hour of day (UTC).
SELECT collection,
       ((time_us % 86400000000 + 86400000000) % 86400000000 / 3600000000)::int
           AS hour_of_day, count(*) AS count
FROM {table}
WHERE kind = 'commit' AND operation = 'create'
  AND collection IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like')
GROUP BY collection, hour_of_day
ORDER BY hour_of_day, collection;

-- Q4: the 3 users who posted first (time_us of their first post, microseconds).
SELECT did, min(time_us) AS first_time_us
FROM {table}
WHERE kind = 'commit' AND operation = 'create'
  AND collection = 'app.bsky.feed.post'
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY first_time_us, did NULLS FIRST
LIMIT 3;

-- Q5: the 3 users with the longest span between their first and last post (milliseconds).
SELECT did,
       (max(time_us) - min(time_us)) / 1000.0 AS span_ms
FROM {table}
WHERE kind = 'commit' AND operation = 'create'
  AND collection = 'app.bsky.feed.post'
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY span_ms DESC, did NULLS FIRST
LIMIT 3;
