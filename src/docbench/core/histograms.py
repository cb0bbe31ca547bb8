"""HdrHistogram helpers (values in nanoseconds): the throughput clients and driver and the
analytics concurrency phase record and merge latencies with them."""

from __future__ import annotations

LOWEST_NS = 1_000
HIGHEST_NS = 3_600_000_000_000
DIGITS = 3


def new_histogram():
    from hdrh.histogram import HdrHistogram

    return HdrHistogram(LOWEST_NS, HIGHEST_NS, DIGITS)


def record(histogram, value_ns: int) -> None:
    histogram.record_value(min(HIGHEST_NS, max(LOWEST_NS, value_ns)))


def record_many(histogram, values_ns) -> None:
    """Record many values at once: hdrh's ``record_value`` index arithmetic done by numpy
    over the array (bit-identical counts), so that the client loop appends a number per
    operation instead of spending microseconds in Python on each one."""
    import numpy as np

    values = np.clip(np.asarray(values_ns, dtype=np.int64), LOWEST_NS, HIGHEST_NS)
    if values.size == 0:
        return
    h = histogram
    # bit_length(v | sub_bucket_mask): frexp's exponent (exact, the values are below 2**53)
    bits = np.frexp((values | h.sub_bucket_mask).astype(np.float64))[1].astype(np.int64)
    bucket = bits - h.unit_magnitude - (h.sub_bucket_half_count_magnitude + 1)
    sub_bucket = values >> (bucket + h.unit_magnitude)
    index = ((bucket + 1) << h.sub_bucket_half_count_magnitude) + (sub_bucket - h.sub_bucket_half_count)
    counts = np.ctypeslib.as_array(h.counts)
    counts += np.bincount(index, minlength=h.counts_len).astype(counts.dtype)
    h.total_count += int(values.size)
    h.min_value = min(h.min_value, int(values.min()))
    h.max_value = max(h.max_value, int(values.max()))


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


def latency_summary(histogram) -> dict[str, float | None]:
    """pgbench's latency figures, in milliseconds (None when nothing was recorded), and the
    count of values."""
    if histogram.get_total_count() == 0:
        return {
            "count": 0,
            "avg_ms": None,
            "stddev_ms": None,
            "p50_ms": None,
            "p95_ms": None,
            "p99_ms": None,
            "p999_ms": None,
            "max_ms": None,
        }
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
