"""The process that holds Databend's embedded engine (``python -m docbench.systems.databend.host``).

The ``databend`` package starts its engine when it is imported, once per process, in the
current directory (``.databend/_meta``, ``.databend/_data``; nothing else can name them) and
holds the metadata store open until the process ends. So a database is a process: the engine
starts this program in the work directory and sends it SQL on its standard input; it answers on
its standard output. Each message is a pickle: a request ``(sql,)``, an answer ``("ok", rows,
seconds)`` or ``("error", message)``. The program's own standard output is moved to standard
error before the engine is imported, so that nothing it prints reaches the channel.
"""

from __future__ import annotations

import os
import pickle
import sys
import time
from typing import Any, BinaryIO


def error_text(error: BaseException) -> str:
    """Databend's message without the Rust backtrace it appends (its frames: ``   0: ...``)."""
    lines = []
    for line in str(error).splitlines():
        stripped = line.strip()
        if stripped[:1].isdigit() and stripped.split(":", 1)[0].isdigit():
            break
        lines.append(line)
    text = "\n".join(lines).strip()
    return text.removeprefix("DataFrame collect error: ")


def run(ctx: Any, text: str) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for batch in ctx.sql(text).to_py_arrow():
        columns = [column.to_pylist() for column in batch.columns]
        rows.extend(zip(*columns, strict=True))
    return rows


def send(channel: BinaryIO, message: tuple[Any, ...]) -> None:
    pickle.dump(message, channel, protocol=pickle.HIGHEST_PROTOCOL)
    channel.flush()


def main() -> None:
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    try:
        import databend

        ctx = databend.SessionContext(tenant="docbench")
        version = run(ctx, "SELECT version()")[0][0]
    except BaseException as error:  # noqa: BLE001 - the engine's parent is told why
        send(channel, ("error", f"Databend did not start: {error_text(error)}"))
        return
    send(channel, ("ok", [(version,)], 0.0))
    while True:
        try:
            (text,) = pickle.load(requests)
        except EOFError:
            return
        started = time.perf_counter()
        try:
            rows = run(ctx, text)
        except Exception as error:  # noqa: BLE001 - the statement's error goes back to the caller
            send(channel, ("error", error_text(error)))
            continue
        send(channel, ("ok", rows, time.perf_counter() - started))


if __name__ == "__main__":
    main()
