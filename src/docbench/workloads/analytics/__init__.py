"""The analytics workload: JSONBench's load + Q1-Q5, cold and hot, answers checked."""

from docbench.workloads import Workload

WORKLOAD = Workload(
    name="analytics",
    summary="JSONBench: load, storage, Q1-Q5 cold/hot, answers checked against the oracle",
    adapter_module="analytics",
    cli="docbench.workloads.analytics.cli",
    report="docbench.workloads.analytics.report",
    bench_commands=True,
    top_commands=True,
    plots="docbench.workloads.analytics.plots",
    dashboard="docbench.workloads.analytics.dashboard",
    compare="docbench.workloads.analytics.measures",
    reads_models=True,
)
