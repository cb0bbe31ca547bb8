"""The compiled client loop: a worker's clients driven by ``docbench-client`` (Rust, built by
``make`` from ``native/docbench-gen``: the library's ``src/client/``, ``src/bin/docbench-client.rs``).

Where a system describes its point operations to the compiled client
(``UpdatesTarget.compiled_client(spec)``: today PostgreSQL through libpq, the same library
calls pgbench makes, and the no-op target of the ceiling), the worker process starts one
``docbench-client`` for its clients instead of driving Python sessions. It runs the loop of
multiplexed.py (each client its own connection and one operation in flight, one thread on
epoll, a client's next operation sent from its answer's handler, Poisson intended starts under
``--rate``) at a fraction of the CPU per operation, so on a small machine the driver takes
about as much of it as pgbench does. Per progress interval it hands over the five integers per
operation the Python loop keeps, and this worker records them with the same code
(recorder.py): histograms, progress, counts and failures mean the same whichever loop ran.

The configuration (the conninfo, with its password, among it) goes to the program on its
standard input, never on its command line; the program dies with the worker (PDEATHSIG).
"""

from __future__ import annotations

import contextlib
import json
import struct
import subprocess
from pathlib import Path
from typing import IO, Any

from docbench.core.jsontypes import (
    JsonMapping,
    JsonObject,
    JsonValue,
    as_int,
    as_object,
    object_or_empty,
    optional_str,
)
from docbench.dataset.native_scan import find_native
from docbench.workloads.throughput.clients import FinalMessage, WorkerConfig, cpu_ns
from docbench.workloads.throughput.recorder import IntervalRecorder, operation_weights

BINARY = "docbench-client"


class CompiledClientError(RuntimeError):
    pass


def find_client() -> Path | None:
    """The built ``docbench-client`` (None when the native build has not run)."""
    return find_native(BINARY)


def client_configuration(config: WorkerConfig, compiled: JsonMapping) -> JsonObject:
    """What docbench-client reads on its first line: the system's part (protocol, library,
    conninfo, statements) and the run's."""
    return {
        **compiled,
        "client_ids": list(config.client_ids),
        "total_clients": config.total_clients,
        "docs": config.docs,
        "seed": config.seed,
        "operations": [[name, weight] for name, weight in operation_weights(config)],
        "distribution": config.distribution,
        "warmup_ns": int(config.warmup_s * 1e9),
        "duration_ns": int(config.duration_s * 1e9),
        "interval_ns": int(config.interval_s * 1e9),
        "intervals": config.intervals,
        "rate_per_client": config.rate_per_client,
    }


class CompiledWorker:
    """One docbench-client for the worker's clients: :meth:`connect`, then :meth:`run`."""

    def __init__(self, config: WorkerConfig, compiled: JsonMapping, events: Any, binary: Path) -> None:
        self.config = config
        self.compiled = compiled
        self.binary = binary
        self.recorder = IntervalRecorder(config, events)
        self.process: subprocess.Popen[bytes] | None = None
        # The program's closing block (its counts, its CPU time): a JSON object.
        self.final: JsonObject = {}
        self.cpu_ns = 0

    def connect(self) -> list[int]:
        """Start the program and wait until every client has connected; the connect times (ns)."""
        self.process = subprocess.Popen(
            [str(self.binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        line = json.dumps(client_configuration(self.config, self.compiled)) + "\n"
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line.encode())
        self.process.stdin.flush()
        answer = self.process.stdout.readline().decode(errors="replace").strip()
        if not answer.startswith("ready"):
            self.close()
            raise CompiledClientError(
                answer.removeprefix("failed ").strip() or f"{BINARY} exited ({self._stderr()})"
            )
        return [int(n) for n in answer.split(" ", 1)[1].split(",") if n] if " " in answer else []

    def run(self, start_ns: int) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.recorder.start(start_ns)
        cpu_before = cpu_ns()
        self.process.stdin.write(f"go {start_ns}\n".encode())
        self.process.stdin.flush()
        self._read_blocks(self.process.stdout)
        self.process.wait(timeout=60)
        # The driver's CPU: the program's own (its loop) and this worker's (the histograms).
        self.cpu_ns = _integer(self.final.get("cpu_ns", 0), "cpu_ns") + cpu_ns() - cpu_before
        if self.process.returncode:
            raise CompiledClientError(f"{BINARY} exited with {self.process.returncode}: {self._stderr()}")

    def _read_blocks(self, stream: IO[bytes] | None) -> None:
        import numpy as np

        assert stream is not None
        scheduled = bool(self.config.rate_per_client)
        while True:
            kind = stream.read(1)
            if kind == b"F":
                (length,) = struct.unpack("<I", _exactly(stream, 4))
                self.final = as_object(json.loads(_exactly(stream, length)), f"{BINARY}'s final block")
                return
            if kind != b"I":
                raise CompiledClientError(f"{BINARY} stopped before its end ({self._stderr()})")
            slot, failed, taken = struct.unpack("<IQQ", _exactly(stream, 20))
            columns = 3 if scheduled else 2
            numbers = np.frombuffer(_exactly(stream, 8 * taken * columns), dtype="<i8")
            ends, begins = numbers[:taken], numbers[taken : 2 * taken]
            intendeds = numbers[2 * taken :] if scheduled else begins
            codes = np.frombuffer(_exactly(stream, taken), dtype=np.int8)
            counts = np.frombuffer(_exactly(stream, 8 * taken), dtype="<i8")
            self.recorder.record(slot, ends, begins, intendeds, codes, counts, failed)

    def _stderr(self) -> str:
        if self.process is None or self.process.stderr is None:
            return ""
        with contextlib.suppress(Exception):
            if self.process.poll() is None:
                return "running"
            return (
                self.process.stderr.read().decode(errors="replace").strip()[-500:]
                or f"exit status {self.process.returncode}"
            )
        return ""

    def final_message(self, connect_ns: list[int]) -> FinalMessage:
        for name, failed in object_or_empty(self.final.get("failed") or None).items():
            stats = self.recorder.stats[name]
            stats.failed += _integer(failed, f"failed[{name}]")
            stats.first_error = stats.first_error or optional_str(
                object_or_empty(self.final.get("first_error") or None).get(name), f"first_error[{name}]"
            )
        return self.recorder.final_message(
            connect_ns,
            inserted=_integer(self.final.get("inserted", 0), "inserted"),
            cpu_ns=self.cpu_ns,
            operations_done=_integer(self.final.get("operations_done", 0), "operations_done"),
            loop="compiled",
            aborted=_integer(self.final.get("aborted", 0), "aborted"),
        )

    def close(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(Exception):
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.close()


def _integer(value: JsonValue, what: str) -> int:
    """A count of docbench-client's closing block (a whole number; a float is truncated)."""
    return int(value) if isinstance(value, float) else as_int(value, what)


def _exactly(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size) if size else b""
    if len(data) != size:
        raise CompiledClientError(f"{BINARY}'s output ended early ({len(data)} of {size} bytes)")
    return data
