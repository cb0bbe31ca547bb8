-- JSONBench's five queries on the typed paths. Differences from JSONBench's text, all about
-- the shape of the answer, none about the work done: Q3 takes the hour in UTC explicitly
-- (JSONBench uses the server's time zone); Q4 returns min(time_us) as an integer of
-- microseconds instead of a DateTime64 (same value); Q5 returns the exact span in
-- milliseconds ((max - min) / 1000) instead of date_diff('milliseconds', ...), which counts
-- millisecond boundaries crossed and can differ by 1 ms from the span.
-- A document without commit.collection has '' there (typed paths are not Nullable).

-- Q1: events per collection.
SELECT data.commit.collection AS event, count() AS count
FROM docbench.bluesky
GROUP BY event
ORDER BY count DESC;

-- Q2: creates per collection, with the exact number of distinct users.
SELECT data.commit.collection AS event, count() AS count, uniqExact(data.did) AS users
FROM docbench.bluesky
WHERE data.kind = 'commit' AND data.commit.operation = 'create'
GROUP BY event
ORDER BY count DESC;

-- Q3: creates of posts, reposts and likes per hour of day (UTC).
SELECT data.commit.collection AS event,
       toHour(fromUnixTimestamp64Micro(data.time_us, 'UTC')) AS hour_of_day,
       count() AS count
FROM docbench.bluesky
WHERE data.kind = 'commit' AND data.commit.operation = 'create'
  AND data.commit.collection IN ['app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like']
GROUP BY event, hour_of_day
ORDER BY hour_of_day, event;

-- Q4: the 3 users who posted first (time_us, microseconds since the epoch).
SELECT data.did AS user_id, min(data.time_us) AS first_post_us
FROM docbench.bluesky
WHERE data.kind = 'commit' AND data.commit.operation = 'create'
  AND data.commit.collection = 'app.bsky.feed.post'
GROUP BY user_id
ORDER BY first_post_us ASC
LIMIT 3;

-- Q5: the 3 users with the longest posting activity span, in milliseconds.
SELECT data.did AS user_id, (max(data.time_us) - min(data.time_us)) / 1000 AS activity_span_ms
FROM docbench.bluesky
WHERE data.kind = 'commit' AND data.commit.operation = 'create'
  AND data.commit.collection = 'app.bsky.feed.post'
GROUP BY user_id
ORDER BY activity_span_ms DESC
LIMIT 3;
