-- The five queries on the variant "string" (ddl-string.sql): queries.sql with each path
-- extracted from the document's text at query time (JSONExtractString / JSONExtractUInt: a
-- missing string path is '', a missing time_us 0, as the JSON type's typed paths give).

-- Q1: events per collection.
SELECT JSONExtractString(data, 'commit', 'collection') AS event, count() AS count
FROM docbench.bluesky
GROUP BY event
ORDER BY count DESC;

-- Q2: creates per collection, with the exact number of distinct users.
SELECT JSONExtractString(data, 'commit', 'collection') AS event, count() AS count, uniqExact(JSONExtractString(data, 'did')) AS users
FROM docbench.bluesky
WHERE JSONExtractString(data, 'kind') = 'commit' AND JSONExtractString(data, 'commit', 'operation') = 'create'
GROUP BY event
ORDER BY count DESC;

-- Q3: creates of posts, reposts and likes per hour of day (UTC).
SELECT JSONExtractString(data, 'commit', 'collection') AS event,
       toHour(fromUnixTimestamp64Micro(JSONExtractUInt(data, 'time_us'), 'UTC')) AS hour_of_day,
       count() AS count
FROM docbench.bluesky
WHERE JSONExtractString(data, 'kind') = 'commit' AND JSONExtractString(data, 'commit', 'operation') = 'create'
  AND JSONExtractString(data, 'commit', 'collection') IN ['app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like']
GROUP BY event, hour_of_day
ORDER BY hour_of_day, event;

-- Q4: the 3 users who posted first (time_us, microseconds since the epoch).
SELECT JSONExtractString(data, 'did') AS user_id, min(JSONExtractUInt(data, 'time_us')) AS first_post_us
FROM docbench.bluesky
WHERE JSONExtractString(data, 'kind') = 'commit' AND JSONExtractString(data, 'commit', 'operation') = 'create'
  AND JSONExtractString(data, 'commit', 'collection') = 'app.bsky.feed.post'
GROUP BY user_id
ORDER BY first_post_us ASC
LIMIT 3;

-- Q5: the 3 users with the longest posting activity span, in milliseconds.
SELECT JSONExtractString(data, 'did') AS user_id, (max(JSONExtractUInt(data, 'time_us')) - min(JSONExtractUInt(data, 'time_us'))) / 1000 AS activity_span_ms
FROM docbench.bluesky
WHERE JSONExtractString(data, 'kind') = 'commit' AND JSONExtractString(data, 'commit', 'operation') = 'create'
  AND JSONExtractString(data, 'commit', 'collection') = 'app.bsky.feed.post'
GROUP BY user_id
ORDER BY activity_span_ms DESC
LIMIT 3;
