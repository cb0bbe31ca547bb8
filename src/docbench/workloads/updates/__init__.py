"""The updates workload: YCSB documents, bulk partial updates, point reads/updates, bloat."""

from docbench.workloads import Workload

WORKLOAD = Workload(
    name="updates",
    summary="YCSB documents: bulk add-field in each system's styles, point reads/updates, bloat",
    adapter_module="updates",
    cli="docbench.workloads.updates.cli",
    report="docbench.workloads.updates.report",
)
