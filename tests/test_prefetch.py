"""Read-ahead in a thread (the load driver's reader): order, errors, early stop."""

from __future__ import annotations

import threading

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

    reader = prefetched(items(), depth=2)
    assert next(reader) == 0
    reader.close()
    assert not any(t.name == "docbench-prefetch" and t.is_alive() for t in threading.enumerate())
    assert len(produced) <= 5  # at most depth ahead, plus the items in hand
