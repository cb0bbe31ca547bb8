-- docbench's five analytical queries for MariaDB ({table} = the variant's table).
-- Rows come back in docbench's canonical column order. The columns kind, commit_operation,
-- commit_collection, did and time_us are the VIRTUAL generated columns of ddl.sql, i.e.
-- JSON_VALUE(doc, '$.kind'), JSON_VALUE(doc, '$.commit.operation'), ... read from the JSON
-- document: naming them is how MariaDB (10.11) uses the index on them -- it does not match
-- a JSON_VALUE(...) expression in a query to an indexed virtual column by itself.

-- Q1: documents per collection (no collection: NULL, its own group).
SELECT commit_collection AS collection, COUNT(*) AS count
FROM {table}
GROUP BY commit_collection
ORDER BY count DESC, collection;

-- Q2: creates per collection, with the exact number of distinct users.
SELECT commit_collection AS collection, COUNT(*) AS count, COUNT(DISTINCT did) AS users
FROM {table}
WHERE kind = 'commit' AND commit_operation = 'create'
GROUP BY commit_collection
ORDER BY count DESC, collection;

-- Q3: creates of posts, reposts and likes per collection and hour of day (UTC): integer
-- arithmetic on the microseconds (floor modulo, right for negative times too).
SELECT commit_collection AS collection,
       MOD(MOD(time_us, 86400000000) + 86400000000, 86400000000) DIV 3600000000 AS hour_of_day,
       COUNT(*) AS count
FROM {table}
WHERE kind = 'commit' AND commit_operation = 'create'
  AND commit_collection IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like')
GROUP BY collection, hour_of_day
ORDER BY hour_of_day, collection;

-- Q4: the 3 users who posted first (time_us of their first post, microseconds).
SELECT did, MIN(time_us) AS first_time_us
FROM {table}
WHERE kind = 'commit' AND commit_operation = 'create' AND commit_collection = 'app.bsky.feed.post'
GROUP BY did
HAVING MIN(time_us) IS NOT NULL
ORDER BY first_time_us, did
LIMIT 3;

-- Q5: the 3 users with the longest span between their first and last post (milliseconds,
-- exact decimal).
SELECT did, (MAX(time_us) - MIN(time_us)) / 1000 AS span_ms
FROM {table}
WHERE kind = 'commit' AND commit_operation = 'create' AND commit_collection = 'app.bsky.feed.post'
GROUP BY did
HAVING MIN(time_us) IS NOT NULL
ORDER BY span_ms DESC, did
LIMIT 3;
