"""Operations into HdrHistograms, in bulk: what both event loops (multiplexed.py in Python,
compiled.py's docbench-client in Rust) hand over per progress interval.

A loop keeps five integers per completed operation (end, begin, intended start, operation
code, count); when a progress interval ends, the operations that ended in it are recorded
here with numpy (``histograms.record_many``, bit-identical to ``record_value``) and the
interval's progress figures go to the driver. The recorded values are the thread path's
(clients.py): service time from the actual start, response time from the intended start
under ``--rate``, schedule lag; operations that started during the warm-up are not counted.
"""

from __future__ import annotations

from typing import Any

from docbench.contracts.mixes import READ, mix_named
from docbench.core import histograms
from docbench.workloads.throughput.clients import FinalMessage, OperationStats, WorkerConfig


def operation_weights(config: WorkerConfig) -> list[tuple[str, float]]:
    """The mix's operations with their weights, in code order (the code of an operation is
    its index here)."""
    return [(name, weight) for name, weight in mix_named(config.mix).weights if weight > 0]


def operation_names(config: WorkerConfig) -> list[str]:
    return [name for name, _ in operation_weights(config)]


class IntervalRecorder:
    def __init__(self, config: WorkerConfig, events: Any) -> None:
        self.config = config
        self.events = events
        self.warm_end = 0  # set by start()
        self.names = operation_names(config)
        self.scheduled = bool(config.rate_per_client)
        self.stats = {name: OperationStats(self.scheduled) for name in self.names}
        self.lag = histograms.new_histogram()

    def start(self, start_ns: int) -> None:
        """The run starts at ``start_ns``: operations that start before its warm-up's end are
        run but not counted."""
        self.warm_end = start_ns + int(self.config.warmup_s * 1e9)

    def record(
        self, slot: int, ends: Any, begins: Any, intendeds: Any, codes: Any, counts: Any, failed: int
    ) -> None:
        """Record one interval's completed operations (numpy int64 arrays; ``intendeds`` is
        ``begins`` without a rate) and send its progress figures to the driver."""
        interval = histograms.new_histogram()
        histograms.record_many(interval, ends - intendeds)
        measured = intendeds >= self.warm_end
        for code, name in enumerate(self.names):
            chosen = measured & (codes == code)
            stats = self.stats[name]
            stats.ok += int(chosen.sum())
            stats.not_found += int((counts[chosen] == 0).sum())
            if name != READ:
                stats.rows_changed += int(counts[chosen].sum())
            histograms.record_many(stats.service, (ends - begins)[chosen])
            if self.scheduled:
                histograms.record_many(stats.response, (ends - intendeds)[chosen])
        if self.scheduled:
            histograms.record_many(self.lag, (begins - intendeds)[measured])
        self.events.put(("interval", self.config.worker_id, slot, interval.encode().decode("ascii"), failed))

    def final_message(
        self,
        connect_ns: list[int],
        *,
        inserted: int,
        cpu_ns: int,
        operations_done: int,
        loop: str,
        aborted: int,
    ) -> FinalMessage:
        return {
            "operations": {name: [stats.as_message()] for name, stats in self.stats.items()},
            "lag": self.lag.encode().decode("ascii"),
            "connect_ns": connect_ns,
            "inserted": inserted,
            "cpu_ns": cpu_ns,
            "operations_done": operations_done,
            "loop": loop,
            "aborted_clients": aborted,
        }
