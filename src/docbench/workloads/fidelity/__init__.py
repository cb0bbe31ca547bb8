"""The fidelity workload: a corpus of documents that stress how JSON is held, loaded into
every system and representation, read back through the engine's own API and classified."""

from docbench.workloads import Workload

WORKLOAD = Workload(
    name="fidelity",
    summary="round trip of a stress corpus: identical, same value, changed or refused, per representation",
    adapter_module="analytics",
    cli="docbench.workloads.fidelity.cli",
    report="docbench.workloads.fidelity.report",
)
