"""The throughput workload: pgbench-style concurrent clients over the updates targets."""

from docbench.workloads import Workload

WORKLOAD = Workload(
    name="throughput",
    summary="pgbench-style concurrent clients: TPS and latency percentiles, cpu/io scenarios",
    adapter_module="updates",
    cli="docbench.workloads.throughput.cli",
    report="docbench.workloads.throughput.report",
    bench_commands=True,
    compare="docbench.workloads.throughput.measures",
)
