"""The shapes workload (issue #33): documents of other shapes than Bluesky events -- distinct
paths, paths per document, depth, arrays, types per path, popularity -- swept one knob at a
time through every system's analytics representation: load, storage, four shape queries cold
and hot with checked answers, refusals, and where each engine breaks."""

from docbench.workloads import Workload

WORKLOAD = Workload(
    name="shapes",
    summary="a knob of the document shape swept (paths, depth...): load, bytes, shape queries, break points",
    adapter_module="analytics",
    cli="docbench.workloads.shapes.cli",
    report="docbench.workloads.shapes.report",
    plots="docbench.workloads.shapes.plots",
)
