-- The five queries on the variant "struct" (the columns read_ndjson inferred): each path is a
-- column or a STRUCT field ("commit" is quoted: a keyword). time_us counts only when it is an
-- integer: its column is an integer type for Bluesky events, and a fraction in a DOUBLE
-- column (had the first file one) is not one (TRY_CAST rounds, so the value must equal it).

-- Q1: events per collection (no collection = NULL, its own group).
SELECT "commit".collection AS collection, count(*) AS count
FROM {table}
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q2: creates per collection, with the exact number of distinct users.
SELECT "commit".collection AS collection, count(*) AS count, count(DISTINCT did) AS users
FROM {table}
WHERE kind = 'commit' AND "commit".operation = 'create'
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q3: creates of posts, reposts and likes per collection and hour of day (UTC).
WITH creates AS (
    SELECT "commit".collection AS collection,
           CASE WHEN TRY_CAST(time_us AS BIGINT) = time_us THEN TRY_CAST(time_us AS BIGINT) END AS time_us
    FROM {table}
    WHERE kind = 'commit' AND "commit".operation = 'create'
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
    SELECT did, CASE WHEN TRY_CAST(time_us AS BIGINT) = time_us THEN TRY_CAST(time_us AS BIGINT) END AS time_us
    FROM {table}
    WHERE kind = 'commit' AND "commit".operation = 'create' AND "commit".collection = 'app.bsky.feed.post'
)
SELECT did, min(time_us) AS first_time_us
FROM posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY first_time_us, did NULLS FIRST
LIMIT 3;

-- Q5: the 3 users with the longest span between their first and last post (milliseconds).
WITH posts AS (
    SELECT did, CASE WHEN TRY_CAST(time_us AS BIGINT) = time_us THEN TRY_CAST(time_us AS BIGINT) END AS time_us
    FROM {table}
    WHERE kind = 'commit' AND "commit".operation = 'create' AND "commit".collection = 'app.bsky.feed.post'
)
SELECT did, (max(time_us)::HUGEINT - min(time_us)) / 1000 AS span_ms
FROM posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY span_ms DESC, did NULLS FIRST
LIMIT 3;
