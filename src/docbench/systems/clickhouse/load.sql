-- docbench's loads go to a staging table ({table}) with the main table's structure; each
-- file's parts are moved into the main table at once when the file is done (commit_file), so
-- that a load killed mid-file leaves nothing of that file behind and --resume loads it again.
-- {format}: JSONAsObject (a JSON column), or JSONAsString for a representation that keeps
-- each document as its text.

-- 1) A batch (the fallback path): one temporary ndjson file per batch, read by chDB itself.
--    Squashing is set so the whole batch becomes ONE insert block (one part): a document the
--    parser refuses fails the statement before anything is written, so a batch is all or
--    nothing. No deduplication applies (non-replicated MergeTree), so a retried batch is
--    inserted again in full.
INSERT INTO {table} FROM INFILE '{path}'
SETTINGS max_insert_block_size = 1000000000, min_insert_block_size_rows = 1000000000,
         min_insert_block_size_bytes = 0
FORMAT {format};

-- 2) The load by hand (native_load), exactly as JSONBench's load_data.sh: one INSERT per file.
INSERT INTO {table} FROM INFILE '{path}'
SETTINGS min_insert_block_size_rows = 1000000, min_insert_block_size_bytes = 0
FORMAT {format};

-- 3) JSONBench's second attempt for a file whose first INSERT failed: skip the bad rows.
INSERT INTO {table} FROM INFILE '{path}'
SETTINGS min_insert_block_size_rows = 1000000, min_insert_block_size_bytes = 0,
         input_format_allow_errors_num = 1000000000, input_format_allow_errors_ratio = 1
FORMAT {format};

-- 4) docbench's whole-file load: the native insert of 2), where the parser skips the rows
--    it refuses and writes their row numbers to {errors} (one object per line, so a row
--    number is a line number). The driver checks that count + skipped = lines.
INSERT INTO {table} FROM INFILE '{path}'
SETTINGS min_insert_block_size_rows = 1000000, min_insert_block_size_bytes = 0,
         input_format_allow_errors_num = 1000000000, input_format_allow_errors_ratio = 1,
         input_format_record_errors_file_path = '{errors}'
FORMAT {format};
