-- The representation "string": each document as its text in a String column (JSONAsString
-- keeps the line as it arrived), read with JSONExtract* at query time. The sort key is the
-- five JSONBench paths as expressions on the text (JSONBench's rules: only these five in the
-- sort key); isValidJSON refuses a line that is not JSON, as the JSON type's parser does.
-- Placeholders: {codec}, {max_parts_to_merge_at_once}, {table_settings} (as ddl.sql).
CREATE DATABASE IF NOT EXISTS docbench;
CREATE TABLE docbench.bluesky
(
    `data` String {codec},
    CONSTRAINT is_json CHECK isValidJSON(data)
)
ENGINE = MergeTree
ORDER BY (
    JSONExtractString(data, 'kind'),
    JSONExtractString(data, 'commit', 'operation'),
    JSONExtractString(data, 'commit', 'collection'),
    JSONExtractString(data, 'did'),
    fromUnixTimestamp64Micro(JSONExtractUInt(data, 'time_us')))
SETTINGS cleanup_delay_period = 1, max_cleanup_delay_period = 1, cleanup_delay_period_random_add = 0,
         max_parts_to_merge_at_once = {max_parts_to_merge_at_once}{table_settings};
