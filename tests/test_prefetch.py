"""Read-ahead in a thread (the load driver's reader): order, errors, early stop."""

from __future__ import annotations

import threading
import time

import pytest

from docbench.core.prefetch import prefetched


def test_items_come_in_order_and_all_of_them() -> None:
    assert list(prefetched(iter(range(1000)), depth=3)) == list(range(1000))


def test_a_producer_error_is_raised_where_it_happened() -> None:
    def items():
        yield 1
        yield 2
        raise ValueError("bad block")

    seen = []
    with pytest.raises(ValueError, match="bad block"):
        for item in prefetched(items()):
            seen.append(item)
    assert seen == [1, 2]


def test_closing_early_stops_the_producer() -> None:
    produced = []

    def items():
        for i in range(10_000):
            produced.append(i)
            yield i

    before = set(threading.enumerate())
    reader = prefetched(items(), depth=2)
    assert next(reader) == 0
    (producer,) = [t for t in threading.enumerate() if t.name == "docbench-prefetch" and t not in before]
    reader.close()
    assert not producer.is_alive()
    assert len(produced) <= 5  # at most depth ahead, plus the items in hand


def test_a_producer_at_its_end_leaves_when_the_consumer_closes() -> None:
    """The end marker waits for a slot like any item: a producer that had read everything
    and found the queue full must not stay blocked once the consumer has gone."""
    before = set(threading.enumerate())
    reader = prefetched(iter([0, 1]), depth=1)
    assert next(reader) == 0
    (producer,) = [t for t in threading.enumerate() if t.name == "docbench-prefetch" and t not in before]
    time.sleep(0.3)  # the producer has put 1 and waits to put the end marker
    reader.close()
    assert not producer.is_alive()
