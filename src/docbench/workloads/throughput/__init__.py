"""The throughput workload: pgbench-style concurrent clients over YCSB-shaped documents."""
