-- Run by finish_load (counts in the load time): one index on the five paths JSONBench allows,
-- in its order; the queries use exactly these expressions so the planner can match them.
CREATE INDEX documents_paths ON documents (
    (doc ->> '$.kind'),
    (doc ->> '$.commit.operation'),
    (doc ->> '$.commit.collection'),
    (doc ->> '$.did'),
    (doc ->> '$.time_us')
);
ANALYZE;
