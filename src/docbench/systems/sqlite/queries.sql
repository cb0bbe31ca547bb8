-- The paths are read with exactly the expressions of the index documents_paths (index.sql).
-- SQLite only substitutes an indexed expression with the index's copy when the rows come
-- straight from the index: where a GROUP BY needs a sorter, a MATERIALIZED CTE first reads
-- the values from the index, otherwise SQLite would parse every document again.

-- Q1: events per collection (no collection = NULL, its own group). The index holds every
-- row, so scanning it (INDEXED BY) reads the collection without parsing the documents;
-- SQLite's planner does not see an index on expressions as covering for a full scan.
WITH events AS MATERIALIZED (
    SELECT doc ->> '$.commit.collection' AS collection
    FROM documents INDEXED BY documents_paths
)
SELECT collection, count(*) AS count
FROM events
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q2: creates per collection, with the exact number of distinct users.
SELECT doc ->> '$.commit.collection' AS collection, count(*) AS count,
       count(DISTINCT doc ->> '$.did') AS users
FROM documents
WHERE doc ->> '$.kind' = 'commit' AND doc ->> '$.commit.operation' = 'create'
GROUP BY collection
ORDER BY count DESC, collection NULLS FIRST;

-- Q3: creates of posts, reposts and likes per hour of day (UTC). time_us counts only when it
-- is a 64-bit JSON integer (typeof 'integer'; larger integers come back as 'real').
WITH events AS MATERIALIZED (
    SELECT doc ->> '$.commit.collection' AS collection, doc ->> '$.time_us' AS time_us
    FROM documents
    WHERE doc ->> '$.kind' = 'commit' AND doc ->> '$.commit.operation' = 'create'
      AND doc ->> '$.commit.collection' IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like')
)
SELECT collection,
       CASE WHEN typeof(time_us) = 'integer'
            THEN (time_us % 86400000000 + 86400000000) % 86400000000 / 3600000000 END AS hour_of_day,
       count(*) AS count
FROM events
GROUP BY collection, hour_of_day
ORDER BY hour_of_day NULLS LAST, collection;

-- Q4: the 3 users who posted first (time_us of their first post, microseconds). The rows come
-- from the index in (did, time_us) order, so no sorter is needed and nothing is parsed.
SELECT doc ->> '$.did' AS did,
       min(CASE WHEN typeof(doc ->> '$.time_us') = 'integer' THEN doc ->> '$.time_us' END) AS first_time_us
FROM documents
WHERE doc ->> '$.kind' = 'commit' AND doc ->> '$.commit.operation' = 'create'
  AND doc ->> '$.commit.collection' = 'app.bsky.feed.post'
GROUP BY did
HAVING first_time_us IS NOT NULL
ORDER BY first_time_us, did NULLS FIRST
LIMIT 3;

-- Q5: the 3 users with the longest span between their first and last post (milliseconds;
-- SQLite turns an overflowing integer subtraction into a real).
SELECT doc ->> '$.did' AS did,
       (max(CASE WHEN typeof(doc ->> '$.time_us') = 'integer' THEN doc ->> '$.time_us' END)
        - min(CASE WHEN typeof(doc ->> '$.time_us') = 'integer' THEN doc ->> '$.time_us' END)) / 1000.0 AS span_ms
FROM documents
WHERE doc ->> '$.kind' = 'commit' AND doc ->> '$.commit.operation' = 'create'
  AND doc ->> '$.commit.collection' = 'app.bsky.feed.post'
GROUP BY did
HAVING span_ms IS NOT NULL
ORDER BY span_ms DESC, did NULLS FIRST
LIMIT 3;
