-- Connection settings of the loading connection (docbench's parent process).
-- WAL + synchronous=NORMAL: a crash can lose the last committed batches but never corrupts
-- the database (SQLite's documented guarantee for WAL mode).
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
-- 256 MiB page cache (negative = KiB) for the inserts and the index build.
PRAGMA cache_size = -262144;
