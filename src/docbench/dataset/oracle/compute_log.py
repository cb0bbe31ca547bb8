"""What a computation of the answers did, file by file (for the CLI's summary and tests)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ComputeLog:
    scanned: list[str] = field(default_factory=list)  # files whose lines were read
    reused: list[str] = field(default_factory=list)  # files whose cached partial was used
    hashed: list[str] = field(default_factory=list)  # files hashed apart from a scan
    scanned_documents: int = 0
    worker_peaks: list[int] = field(default_factory=list)  # peak RSS of each worker (bytes)
    worker_cpu: list[float] = field(default_factory=list)  # CPU seconds of each worker
    helpers: str = "worker"  # what the workers are, for the summary
