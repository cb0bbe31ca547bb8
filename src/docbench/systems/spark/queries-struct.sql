-- The five queries on the variant "struct" (the columns spark.read.json inferred): each path
-- is a column or a STRUCT field (`commit` quoted: a keyword). A field whose values conflict in
-- type is a STRING of each value's JSON text, as the oracle groups them. time_us counts only
-- when it is an integer: its column is a BIGINT for Bluesky events (a DOUBLE, had the first
-- batch held a fraction, counts only its whole values). Hours use integer arithmetic on
-- microseconds (UTC).

-- Q1: events per collection (no collection = NULL, its own group).
SELECT `commit`.collection AS collection, count(*) AS count
FROM {table}
GROUP BY 1
ORDER BY count DESC, collection NULLS FIRST;

-- Q2: creates per collection, with the exact number of distinct users.
SELECT `commit`.collection AS collection, count(*) AS count, count(DISTINCT did) AS users
FROM {table}
WHERE kind = 'commit' AND `commit`.operation = 'create'
GROUP BY 1
ORDER BY count DESC, collection NULLS FIRST;

-- Q3: creates of posts, reposts and likes per collection and hour of day (UTC).
SELECT collection, CAST(pmod(time_us, 86400000000) DIV 3600000000 AS INT) AS hour_of_day, count(*) AS count
FROM (
    SELECT `commit`.collection AS collection,
           CASE WHEN try_cast(time_us AS BIGINT) = time_us THEN try_cast(time_us AS BIGINT) END AS time_us
    FROM {table}
    WHERE kind = 'commit' AND `commit`.operation = 'create'
      AND `commit`.collection IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like')
) AS creates
GROUP BY collection, hour_of_day
ORDER BY hour_of_day NULLS LAST, collection;

-- Q4: the 3 users who posted first (time_us of their first post, microseconds).
SELECT did, min(time_us) AS first_time_us
FROM (
    SELECT did, CASE WHEN try_cast(time_us AS BIGINT) = time_us THEN try_cast(time_us AS BIGINT) END AS time_us
    FROM {table}
    WHERE kind = 'commit' AND `commit`.operation = 'create' AND `commit`.collection = 'app.bsky.feed.post'
) AS posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY first_time_us, did NULLS FIRST
LIMIT 3;

-- Q5: the 3 users with the longest span between their first and last post (milliseconds).
SELECT did, (max(time_us) - min(time_us)) DIV 1000 AS span_ms
FROM (
    SELECT did, CASE WHEN try_cast(time_us AS BIGINT) = time_us THEN try_cast(time_us AS BIGINT) END AS time_us
    FROM {table}
    WHERE kind = 'commit' AND `commit`.operation = 'create' AND `commit`.collection = 'app.bsky.feed.post'
) AS posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY span_ms DESC, did NULLS FIRST
LIMIT 3;
