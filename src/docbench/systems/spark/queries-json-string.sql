-- docbench's five analytical queries for the JSON text in a STRING column (get_json_object,
-- which parses the text of each row for each path it reads), rows in docbench's canonical
-- column order.
--
-- get_json_object(doc, '$.a.b') is a JSON string's text, any other value's JSON text, and
-- NULL for JSON null or a missing path: the oracle's grouping. It gives the number 5 and the
-- string "5" alike, so time_us is read with from_json as a BIGINT: NULL for a string, a
-- fraction or an integer beyond 64 bits, as the oracle has it. Hours use integer arithmetic
-- on microseconds (UTC).

-- Q1: events per collection (no collection = NULL, its own group).
SELECT get_json_object(doc, '$.commit.collection') AS collection, count(*) AS count
FROM {table}
GROUP BY 1
ORDER BY count DESC, collection NULLS FIRST;

-- Q2: creates per collection, with the exact number of distinct users.
SELECT get_json_object(doc, '$.commit.collection') AS collection,
       count(*) AS count,
       count(DISTINCT get_json_object(doc, '$.did')) AS users
FROM {table}
WHERE get_json_object(doc, '$.kind') = 'commit' AND get_json_object(doc, '$.commit.operation') = 'create'
GROUP BY 1
ORDER BY count DESC, collection NULLS FIRST;

-- Q3: creates of posts, reposts and likes per collection and hour of day (UTC).
SELECT collection, CAST(pmod(time_us, 86400000000) DIV 3600000000 AS INT) AS hour_of_day, count(*) AS count
FROM (
    SELECT get_json_object(doc, '$.commit.collection') AS collection,
           from_json(doc, 'time_us BIGINT').time_us AS time_us
    FROM {table}
    WHERE get_json_object(doc, '$.kind') = 'commit' AND get_json_object(doc, '$.commit.operation') = 'create'
      AND get_json_object(doc, '$.commit.collection') IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like')
) AS creates
GROUP BY collection, hour_of_day
ORDER BY hour_of_day NULLS LAST, collection;

-- Q4: the 3 users who posted first (time_us of their first post, microseconds).
SELECT did, min(time_us) AS first_time_us
FROM (
    SELECT get_json_object(doc, '$.did') AS did, from_json(doc, 'time_us BIGINT').time_us AS time_us
    FROM {table}
    WHERE get_json_object(doc, '$.kind') = 'commit' AND get_json_object(doc, '$.commit.operation') = 'create'
      AND get_json_object(doc, '$.commit.collection') = 'app.bsky.feed.post'
) AS posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY first_time_us, did NULLS FIRST
LIMIT 3;

-- Q5: the 3 users with the longest span between their first and last post (milliseconds).
SELECT did, (max(time_us) - min(time_us)) DIV 1000 AS span_ms
FROM (
    SELECT get_json_object(doc, '$.did') AS did, from_json(doc, 'time_us BIGINT').time_us AS time_us
    FROM {table}
    WHERE get_json_object(doc, '$.kind') = 'commit' AND get_json_object(doc, '$.commit.operation') = 'create'
      AND get_json_object(doc, '$.commit.collection') = 'app.bsky.feed.post'
) AS posts
GROUP BY did
HAVING min(time_us) IS NOT NULL
ORDER BY span_ms DESC, did NULLS FIRST
LIMIT 3;
