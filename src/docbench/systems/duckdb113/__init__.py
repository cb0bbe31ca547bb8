"""DuckDB 1.1.3 (JSONBench's version), run in a worker process with its own venv's Python."""
