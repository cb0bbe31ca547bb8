-- docbench's five analytical queries for DuckDB, rows in docbench's canonical column order.
--
-- `doc ->> path` parses the whole document for each path. Q2-Q5 need four or five paths, so
-- they read them with one json_extract(doc, [paths...]) call per document -- one parse --
-- and take each string out of its small extracted JSON value with `->> '$'` (about half the
-- CPU of one `->>` per path, measured on 1M documents).
--
-- time_us counts only when it is a 64-bit JSON integer, as in the answer oracle: json_type of
-- the extracted value is BIGINT or UBIGINT, and TRY_CAST gives NULL beyond the signed 64-bit
-- range. Hours and spans use integer arithmetic on microseconds (UTC; no time zone involved).
-- `(v[1] ->> '$') = 'commit'` is in parentheses for DuckDB 1.1.3 (the duckdb113 system), whose
-- parser groups `v[1] ->> '$' = 'commit' AND v[2] ->> '$' = 'create'` otherwise and fails.
--
-- The table and its JSON column are placeholders, filled in by analytics.py's sql_names:
-- documents and doc here; duckdb113 runs these queries on JSONBench's table, bluesky and j.

-- Q1: events per collection (no collection = NULL, its own group).
SELECT {column} ->> '$.commit.collection' AS collection, count(*) AS count
FROM {table}
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q2: creates per collection, with the exact number of distinct users.
WITH paths AS (
    SELECT json_extract({column}, ['$.kind', '$.commit.operation', '$.commit.collection', '$.did']) AS v
    FROM {table}
)
SELECT v[3] ->> '$' AS collection, count(*) AS count, count(DISTINCT v[4] ->> '$') AS users
FROM paths
WHERE (v[1] ->> '$') = 'commit' AND (v[2] ->> '$') = 'create'
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q3: creates of posts, reposts and likes per collection and hour of day (UTC).
WITH paths AS (
    SELECT json_extract({column}, ['$.kind', '$.commit.operation', '$.commit.collection', '$.time_us']) AS v
    FROM {table}
), creates AS (
    SELECT v[3] ->> '$' AS collection,
           CASE WHEN json_type(v[4]) IN ('BIGINT', 'UBIGINT') THEN TRY_CAST(v[4] AS BIGINT) END AS time_us
    FROM paths
    WHERE (v[1] ->> '$') = 'commit' AND (v[2] ->> '$') = 'create'
)
SELECT collection,
       CAST((time_us % 86400000000 + 86400000000) % 86400000000 // 3600000000 AS INTEGER) AS hour_of_day,
       count(*) AS count
FROM creates
WHERE collection IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like')
GROUP BY collection, hour_of_day
ORDER BY hour_of_day NULLS LAST, collection;

-- Q4: the 3 users who posted first (time_us of their first post, microseconds).
WITH paths AS (
    SELECT json_extract({column}, ['$.kind', '$.commit.operation', '$.commit.collection', '$.did', '$.time_us']) AS v
    FROM {table}
), posts AS (
    SELECT v[4] ->> '$' AS did,
           CASE WHEN json_type(v[5]) IN ('BIGINT', 'UBIGINT') THEN TRY_CAST(v[5] AS BIGINT) END AS time_us
    FROM paths
    WHERE (v[1] ->> '$') = 'commit' AND (v[2] ->> '$') = 'create' AND (v[3] ->> '$') = 'app.bsky.feed.post'
)
SELECT did, min(time_us) AS first_time_us
FROM posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY first_time_us, did NULLS FIRST
LIMIT 3;

-- Q5: the 3 users with the longest span between their first and last post (milliseconds).
WITH paths AS (
    SELECT json_extract({column}, ['$.kind', '$.commit.operation', '$.commit.collection', '$.did', '$.time_us']) AS v
    FROM {table}
), posts AS (
    SELECT v[4] ->> '$' AS did,
           CASE WHEN json_type(v[5]) IN ('BIGINT', 'UBIGINT') THEN TRY_CAST(v[5] AS BIGINT) END AS time_us
    FROM paths
    WHERE (v[1] ->> '$') = 'commit' AND (v[2] ->> '$') = 'create' AND (v[3] ->> '$') = 'app.bsky.feed.post'
)
SELECT did, (max(time_us)::HUGEINT - min(time_us)) / 1000 AS span_ms
FROM posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY span_ms DESC, did NULLS FIRST
LIMIT 3;
