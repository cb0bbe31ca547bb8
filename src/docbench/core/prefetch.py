"""Read ahead in a thread: an iterator whose items are produced while the consumer works.

The load driver reads and splits the next block of a file while the engine digests the
current batch. File reads release the GIL, and so do the engines' C calls (sqlite3_step,
libpq's network waits, HTTP sends), so on a machine with more than one core the reading
overlaps the loading instead of adding to it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

_DONE = object()


class _Failure:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def prefetched(items: Iterable[T], depth: int = 2) -> Iterator[T]:
    """The items of ``items``, produced by a daemon thread at most ``depth`` ahead. An
    exception in the producer is raised in the consumer at the point it happened; closing
    the returned generator early stops the producer at its next item."""
    slots: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def hand_over(item: object) -> bool:
        """Put ``item`` in a slot unless the consumer has gone; every put waits this way, or
        a producer whose consumer stopped early would block on a full queue for ever."""
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not hand_over(item):
                    return
            hand_over(_DONE)
        except BaseException as error:  # noqa: BLE001 - handed to the consumer
            hand_over(_Failure(error))

    producer = threading.Thread(target=produce, name="docbench-prefetch", daemon=True)
    producer.start()
    try:
        while True:
            item = slots.get()
            if item is _DONE:
                return
            if isinstance(item, _Failure):
                raise item.error
            yield item
    finally:
        stop.set()
        producer.join(timeout=5)
