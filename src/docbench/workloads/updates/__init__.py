"""The updates workload (issue #5): YCSB-shaped documents, one bulk partial update, point
reads and point updates by key, sizes before/after/maintained, correctness by reading back.

It never names a system: each registered system may provide
``docbench.systems.<name>.updates`` with ``UPDATE_VARIANTS`` and ``UpdatesTarget`` (see
:mod:`docbench.workloads.updates.target`).
"""
