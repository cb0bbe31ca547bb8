-- The five queries on the variant "columns" (ddl-columns.sql): queries.sql with each path read
-- from its typed column instead of the JSON type's typed path (the same values: a missing
-- string path is '', a missing time_us 0).

-- Q1: events per collection.
SELECT collection AS event, count() AS count
FROM docbench.bluesky
GROUP BY event
ORDER BY count DESC;

-- Q2: creates per collection, with the exact number of distinct users.
SELECT collection AS event, count() AS count, uniqExact(did) AS users
FROM docbench.bluesky
WHERE kind = 'commit' AND operation = 'create'
GROUP BY event
ORDER BY count DESC;

-- Q3: creates of posts, reposts and likes per hour of day (UTC).
SELECT collection AS event,
       toHour(fromUnixTimestamp64Micro(time_us, 'UTC')) AS hour_of_day,
       count() AS count
FROM docbench.bluesky
WHERE kind = 'commit' AND operation = 'create'
  AND collection IN ['app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like']
GROUP BY event, hour_of_day
ORDER BY hour_of_day, event;

-- Q4: the 3 users who posted first (time_us, microseconds since the epoch).
SELECT did AS user_id, min(time_us) AS first_post_us
FROM docbench.bluesky
WHERE kind = 'commit' AND operation = 'create'
  AND collection = 'app.bsky.feed.post'
GROUP BY user_id
ORDER BY first_post_us ASC
LIMIT 3;

-- Q5: the 3 users with the longest posting activity span, in milliseconds.
SELECT did AS user_id, (max(time_us) - min(time_us)) / 1000 AS activity_span_ms
FROM docbench.bluesky
WHERE kind = 'commit' AND operation = 'create'
  AND collection = 'app.bsky.feed.post'
GROUP BY user_id
ORDER BY activity_span_ms DESC
LIMIT 3;
