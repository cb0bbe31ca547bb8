-- docbench's five analytical queries for Databend, rows in docbench's canonical column order.
--
-- The documents are a VARIANT column (binary JSON: a path is read without parsing text).
-- doc['commit']['collection'] is NULL when the path is missing or commit is not an object;
-- ::STRING gives a JSON string's text and any other value's compact JSON text, but 'null' for
-- JSON null, which the oracle groups with the missing ones (hence the CASE). kind and
-- operation must be those exact JSON strings: as_string() is NULL for any other type.
-- time_us counts only when it is a JSON integer within the signed 64-bit range: as_integer()
-- is NULL for anything else (fractions, strings, integers beyond Int64, numbers Databend's
-- parser keeps as doubles). Hours use integer arithmetic on microseconds (UTC).

-- Q1: events per collection (no collection = NULL, its own group).
SELECT CASE WHEN json_typeof(doc['commit']['collection']) = 'null' THEN NULL
            ELSE doc['commit']['collection']::STRING END AS collection,
       count(*) AS count
FROM {table}
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q2: creates per collection, with the exact number of distinct users.
SELECT CASE WHEN json_typeof(doc['commit']['collection']) = 'null' THEN NULL
            ELSE doc['commit']['collection']::STRING END AS collection,
       count(*) AS count,
       count(DISTINCT CASE WHEN json_typeof(doc['did']) = 'null' THEN NULL ELSE doc['did']::STRING END) AS users
FROM {table}
WHERE as_string(doc['kind']) = 'commit' AND as_string(doc['commit']['operation']) = 'create'
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q3: creates of posts, reposts and likes per collection and hour of day (UTC).
SELECT collection,
       CAST((time_us % 86400000000 + 86400000000) % 86400000000 // 3600000000 AS INT) AS hour_of_day,
       count(*) AS count
FROM (
    SELECT as_string(doc['commit']['collection']) AS collection, as_integer(doc['time_us']) AS time_us
    FROM {table}
    WHERE as_string(doc['kind']) = 'commit' AND as_string(doc['commit']['operation']) = 'create'
      AND as_string(doc['commit']['collection']) IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like')
) AS creates
GROUP BY collection, hour_of_day
ORDER BY hour_of_day NULLS LAST, collection;

-- Q4: the 3 users who posted first (time_us of their first post, microseconds).
SELECT did, min(time_us) AS first_time_us
FROM (
    SELECT CASE WHEN json_typeof(doc['did']) = 'null' THEN NULL ELSE doc['did']::STRING END AS did,
           as_integer(doc['time_us']) AS time_us
    FROM {table}
    WHERE as_string(doc['kind']) = 'commit' AND as_string(doc['commit']['operation']) = 'create'
      AND as_string(doc['commit']['collection']) = 'app.bsky.feed.post'
) AS posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY first_time_us, did NULLS FIRST
LIMIT 3;

-- Q5: the 3 users with the longest span between their first and last post (milliseconds).
SELECT did, (max(time_us) - min(time_us)) / 1000 AS span_ms
FROM (
    SELECT CASE WHEN json_typeof(doc['did']) = 'null' THEN NULL ELSE doc['did']::STRING END AS did,
           as_integer(doc['time_us']) AS time_us
    FROM {table}
    WHERE as_string(doc['kind']) = 'commit' AND as_string(doc['commit']['operation']) = 'create'
      AND as_string(doc['commit']['collection']) = 'app.bsky.feed.post'
) AS posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY span_ms DESC, did NULLS FIRST
LIMIT 3;
