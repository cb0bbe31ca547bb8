"""HdrHistogram helpers shared by the throughput clients and driver (values in nanoseconds)."""

from __future__ import annotations

from typing import Any

LOWEST_NS = 1_000
HIGHEST_NS = 3_600_000_000_000
DIGITS = 3


def new_histogram():
    from hdrh.histogram import HdrHistogram

    return HdrHistogram(LOWEST_NS, HIGHEST_NS, DIGITS)


def record(histogram, value_ns: int) -> None:
    histogram.record_value(min(HIGHEST_NS, max(LOWEST_NS, value_ns)))


def decode(encoded: str):
    histogram = new_histogram()
    histogram.decode_and_add(encoded)
    return histogram


def merge(encoded: list[str]):
    total = new_histogram()
    for item in encoded:
        if item:
            total.decode_and_add(item)
    return total


def latency_summary(histogram) -> dict[str, Any]:
    """pgbench's latency figures, in milliseconds (None when nothing was recorded)."""
    if histogram.get_total_count() == 0:
        return {"count": 0, "avg_ms": None, "stddev_ms": None, "p50_ms": None, "p95_ms": None,
                "p99_ms": None, "p999_ms": None, "max_ms": None}
    ms = 1e6
    return {
        "count": histogram.get_total_count(),
        "avg_ms": histogram.get_mean_value() / ms,
        "stddev_ms": histogram.get_stddev() / ms,
        "p50_ms": histogram.get_value_at_percentile(50) / ms,
        "p95_ms": histogram.get_value_at_percentile(95) / ms,
        "p99_ms": histogram.get_value_at_percentile(99) / ms,
        "p999_ms": histogram.get_value_at_percentile(99.9) / ms,
        "max_ms": histogram.get_max_value() / ms,
    }
