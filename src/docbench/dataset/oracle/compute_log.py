"""What a computation of the answers did, file by file (for the CLI's summary and tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# Per-file lines said for one reason before the rest are counted in one line.
NAMED_PARTIALS = 3


@dataclass
class ComputeLog:
    scanned: list[str] = field(default_factory=list)  # files whose lines were read
    reused: list[str] = field(default_factory=list)  # files whose cached partial was used
    hashed: list[str] = field(default_factory=list)  # files hashed apart from a scan
    scanned_documents: int = 0
    worker_peaks: list[int] = field(default_factory=list)  # peak RSS of each worker (bytes)
    worker_cpu: list[float] = field(default_factory=list)  # CPU seconds of each worker
    helpers: str = "worker"  # what the workers are, for the summary
    notes: list[str] = field(default_factory=list)  # a cache not used, and why (one line each)
    # partials not used: reason -> [(partial's path, data file's name)]
    partials_not_used: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def note(self, line: str) -> None:
        if line not in self.notes:
            self.notes.append(line)

    def partial_not_used(self, path: str, name: str, reason: str) -> None:
        entries = self.partials_not_used.setdefault(reason, [])
        if (path, name) not in entries:
            entries.append((path, name))

    def messages(self) -> list[str]:
        """The notes, then one line per partial not used (past NAMED_PARTIALS for one
        reason, one line for the rest: a dataset of 1000 files gets no 1000 lines)."""
        lines = list(self.notes)
        for reason, entries in self.partials_not_used.items():
            lines.extend(
                f"{path}: {reason}; scanning {name} again" for path, name in entries[:NAMED_PARTIALS]
            )
            rest = entries[NAMED_PARTIALS:]
            if rest:
                where = Path(rest[0][0]).parent
                lines.append(f"{where}: {len(rest)} more partials: {reason}; scanning their files again")
        return lines
