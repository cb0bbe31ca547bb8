-- The five queries on the variant "json" (ddl-json.sql): queries.sql on a derived table that
-- reads each path with JSON_VALUE from the document's text at query time (no generated
-- column, no index); time_us as ddl.sql's virtual column computes it (a BIGINT when an
-- integer of at most 18 characters, else NULL) but without its truncation of long strings.

-- Q1: documents per collection (no collection: NULL, its own group).
SELECT commit_collection AS collection, COUNT(*) AS count
FROM (
    SELECT JSON_VALUE(doc, '$.kind') AS kind,
           JSON_VALUE(doc, '$.commit.operation') AS commit_operation,
           JSON_VALUE(doc, '$.commit.collection') AS commit_collection,
           JSON_VALUE(doc, '$.did') AS did,
           CASE WHEN JSON_TYPE(JSON_EXTRACT(doc, '$.time_us')) = 'INTEGER'
                 AND LENGTH(JSON_VALUE(doc, '$.time_us')) <= 18
                THEN CAST(JSON_VALUE(doc, '$.time_us') AS SIGNED) END AS time_us
    FROM {table}
) AS paths
GROUP BY commit_collection
ORDER BY count DESC, collection;

-- Q2: creates per collection, with the exact number of distinct users.
SELECT commit_collection AS collection, COUNT(*) AS count, COUNT(DISTINCT did) AS users
FROM (
    SELECT JSON_VALUE(doc, '$.kind') AS kind,
           JSON_VALUE(doc, '$.commit.operation') AS commit_operation,
           JSON_VALUE(doc, '$.commit.collection') AS commit_collection,
           JSON_VALUE(doc, '$.did') AS did,
           CASE WHEN JSON_TYPE(JSON_EXTRACT(doc, '$.time_us')) = 'INTEGER'
                 AND LENGTH(JSON_VALUE(doc, '$.time_us')) <= 18
                THEN CAST(JSON_VALUE(doc, '$.time_us') AS SIGNED) END AS time_us
    FROM {table}
) AS paths
WHERE kind = 'commit' AND commit_operation = 'create'
GROUP BY commit_collection
ORDER BY count DESC, collection;

-- Q3: creates of posts, reposts and likes per collection and hour of day (UTC): integer
-- arithmetic on the microseconds (floor modulo, right for negative times too).
SELECT commit_collection AS collection,
       MOD(MOD(time_us, 86400000000) + 86400000000, 86400000000) DIV 3600000000 AS hour_of_day,
       COUNT(*) AS count
FROM (
    SELECT JSON_VALUE(doc, '$.kind') AS kind,
           JSON_VALUE(doc, '$.commit.operation') AS commit_operation,
           JSON_VALUE(doc, '$.commit.collection') AS commit_collection,
           JSON_VALUE(doc, '$.did') AS did,
           CASE WHEN JSON_TYPE(JSON_EXTRACT(doc, '$.time_us')) = 'INTEGER'
                 AND LENGTH(JSON_VALUE(doc, '$.time_us')) <= 18
                THEN CAST(JSON_VALUE(doc, '$.time_us') AS SIGNED) END AS time_us
    FROM {table}
) AS paths
WHERE kind = 'commit' AND commit_operation = 'create'
  AND commit_collection IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like')
GROUP BY collection, hour_of_day
ORDER BY hour_of_day, collection;

-- Q4: the 3 users who posted first (time_us of their first post, microseconds).
SELECT did, MIN(time_us) AS first_time_us
FROM (
    SELECT JSON_VALUE(doc, '$.kind') AS kind,
           JSON_VALUE(doc, '$.commit.operation') AS commit_operation,
           JSON_VALUE(doc, '$.commit.collection') AS commit_collection,
           JSON_VALUE(doc, '$.did') AS did,
           CASE WHEN JSON_TYPE(JSON_EXTRACT(doc, '$.time_us')) = 'INTEGER'
                 AND LENGTH(JSON_VALUE(doc, '$.time_us')) <= 18
                THEN CAST(JSON_VALUE(doc, '$.time_us') AS SIGNED) END AS time_us
    FROM {table}
) AS paths
WHERE kind = 'commit' AND commit_operation = 'create' AND commit_collection = 'app.bsky.feed.post'
GROUP BY did
HAVING MIN(time_us) IS NOT NULL
ORDER BY first_time_us, did
LIMIT 3;

-- Q5: the 3 users with the longest span between their first and last post (milliseconds,
-- exact decimal).
SELECT did, (MAX(time_us) - MIN(time_us)) / 1000 AS span_ms
FROM (
    SELECT JSON_VALUE(doc, '$.kind') AS kind,
           JSON_VALUE(doc, '$.commit.operation') AS commit_operation,
           JSON_VALUE(doc, '$.commit.collection') AS commit_collection,
           JSON_VALUE(doc, '$.did') AS did,
           CASE WHEN JSON_TYPE(JSON_EXTRACT(doc, '$.time_us')) = 'INTEGER'
                 AND LENGTH(JSON_VALUE(doc, '$.time_us')) <= 18
                THEN CAST(JSON_VALUE(doc, '$.time_us') AS SIGNED) END AS time_us
    FROM {table}
) AS paths
WHERE kind = 'commit' AND commit_operation = 'create' AND commit_collection = 'app.bsky.feed.post'
GROUP BY did
HAVING MIN(time_us) IS NOT NULL
ORDER BY span_ms DESC, did
LIMIT 3;
