"""The storage workload: a TOAST-style matrix of setting x field size x entropy."""

from docbench.workloads import Workload

WORKLOAD = Workload(
    name="storage",
    summary="TOAST-style matrix: storage setting x field size x data entropy",
    adapter_module="storage",
    cli="docbench.workloads.storage.cli",
    report="docbench.workloads.storage.report",
)
