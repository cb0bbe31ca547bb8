"""VictoriaLogs' loader: ``/insert/jsonline`` of each batch, one HTTP request.

VictoriaLogs has no transaction: it stores every line it can read and skips the others, going
on with the next line, answers 200 all the same, and writes why to its log (``cannot read line
#N`` with N the line's index in the request; a line longer than ``-insert.maxLineSizeBytes``;
more fields than ``-insert.maxFieldsPerLine``; a timestamp out of the retention). So the loader
takes the driver's ``load_batch_skipping`` path: on docbench's own server it reads the log the
request wrote and names each skipped line with VictoriaLogs' own reason. After each file it
makes what was sent searchable (``/internal/force_flush``) and checks VictoriaLogs' count
against what it sent minus what was skipped: a line dropped without a word stops the load.
On a server by URL (no log to read) the count is checked after every batch; when a batch lost
lines, halves of it are sent again to a scratch tenant of docbench's to find which (without
VictoriaLogs' reason, which only its log has).
"""

from __future__ import annotations

import itertools
import re
import time

from docbench.contracts.analytics import Loader
from docbench.contracts.common import BatchRejected
from docbench.systems.victorialogs.engine import (
    NDJSON,
    TENANT,
    VictoriaLogsEngine,
    VictoriaLogsError,
    VLClient,
)

# Where a batch is sent again, on a server by URL, to find the lines VictoriaLogs skipped.
SCRATCH_PROJECTS = itertools.count(2)


def scratch_tenant() -> dict[str, str]:
    """A tenant of docbench's account no probe of this process has used (ProjectID 2, 3...)."""
    return {**TENANT, "ProjectID": str(next(SCRATCH_PROJECTS))}


def _not_utf8(lines: list[bytes]) -> dict[int, str]:
    """Lines that are not UTF-8, so not JSON: VictoriaLogs would store their bytes as they are
    (its parser does not check the encoding), so docbench refuses them itself, saying so."""
    try:
        b"\n".join(lines).decode("utf-8")
        return {}
    except UnicodeDecodeError:
        pass
    found = {}
    for index, line in enumerate(lines):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            found[index] = (
                f"not UTF-8 ({error.reason} at byte {error.start}): refused by docbench, "
                "VictoriaLogs would store the bytes (it does not check the encoding)"
            )
    return found


def _count(client: VLClient) -> int:
    rows = client.query("* | count() rows")
    return int(rows[0]["rows"]) if rows else 0


#: How often and how long _settled_count reads the count again.
SETTLE_PAUSE = 0.05
SETTLE_READS = 40


def _settled_count(client: VLClient, expected: int | None = None) -> int:
    """The tenant's count once everything sent is searchable: flushed, and read again until
    two readings agree unless the first is the ``expected`` one. On a loaded machine the rows of
    a request that ended in a 400 can still be on their way into the storage at the first
    reading after the flush."""
    client.force_flush()
    count = _count(client)
    if count == expected:
        return count
    for _ in range(SETTLE_READS):
        time.sleep(SETTLE_PAUSE)
        client.force_flush()
        again = _count(client)
        if again == count:
            return count
        count = again
    return count


# kind, commit.collection, commit.operation: the stream fields, JSONBench's parameters as its
# victorialogs/load_data.sh spells them (the order changes nothing: VictoriaLogs sorts a stream's
# tags by name before it identifies the stream, lib/logstorage/stream_tags.go).
# The documents' field VictoriaLogs takes as each line's _time (its time index, nanoseconds):
# it is no field of the stored line after that.
TIME_FIELD = "time_us"
INSERT_PATH = (
    f"/insert/jsonline?_time_field={TIME_FIELD}&_stream_fields=kind,commit.collection,commit.operation"
)
_CANNOT_READ = re.compile(r"cannot read line #(\d+) in /jsonline request: (.*?)(?:; line contents: .*)?$")
_TOO_LONG = re.compile(r"the line length exceeds -insert\.maxLineSizeBytes=(\d+); skipping it")
_DROPPED = re.compile(
    r"(dropping log line with \d+ fields; it exceeds -insert\.maxFieldsPerLine=\d+"
    r"|skipping log entry with too (?:big|small) timestamp=[^;]*; [^;]*)"
)


def _shortened(reason: str) -> str:
    """The JSON parser's error once per level kind: a 1000-level nesting says "cannot parse
    array: cannot parse array value: " a thousand times before the cause."""
    parts: list[str] = []
    for part in reason.split(": "):
        if part not in parts:
            parts.append(part)
    return ": ".join(parts)


class VictoriaLogsLoader(Loader):
    atomic_batches = False  # it keeps the good lines of a batch it partly refuses

    def __init__(self, engine: VictoriaLogsEngine, live: bool = False) -> None:
        self.engine = engine
        self.client = engine.connect()
        self.server = engine.server
        self.sent = 0  # documents VictoriaLogs kept since the last count
        self.counted = 0
        self.log_offset = 0  # where its log stood when the file began
        # Live ingest: no flush and no count around a batch (they would make it visible at
        # once, and the freshness measured would be docbench's); the refusals come from the
        # server's log as in a load, and the end's exact count checks that nothing was
        # dropped. On a server by URL (no log) only a refusal it answers 400 to is seen.
        self.live = live
        if live:  # counted once: a batch answered 400 is then checked against it
            self.counted = engine.count()

    def begin_file(self, name: str) -> None:
        if self.live:
            return
        self.client.force_flush()
        self.counted = self.engine.count()
        self.sent = 0
        self.log_offset = self.server.log_size() if self.server is not None else 0

    def commit_file(self) -> None:
        if not self.live:
            self._check_count()

    def _check_count(self) -> None:
        now = _settled_count(self.client, self.counted + self.sent)
        if now != self.counted + self.sent:
            raise RuntimeError(
                f"VictoriaLogs holds {now - self.counted} of the {self.sent} documents "
                "docbench sent and it did not refuse: some were dropped without a "
                f"word to the client ({self._dropping_warning() or 'see its log'})"
            )
        self.counted, self.sent = now, 0

    def _dropping_warning(self) -> str | None:
        """Its log's own word for rows it dropped after acknowledging them (e.g. "ignoring
        3972 rows in the block, because they contain more than 2000 unique field names"),
        without the list of field names."""
        if self.server is None:
            return None
        for line in self.server.log_since(self.log_offset).splitlines():
            found = re.search(r"\bwarn\b.*?\t(ignoring [^:\[]*)", line)
            if found:
                return "its log: " + found.group(1).strip().rstrip(":")
        return None

    def load_batch_skipping(self, lines: list[bytes]) -> dict[int, str] | None:
        if not lines:
            return {}
        invalid = _not_utf8(lines)
        if invalid:
            readable = [line for index, line in enumerate(lines) if index not in invalid]
            positions = [index for index in range(len(lines)) if index not in invalid]
            named = self.load_batch_skipping(readable) if readable else {}
            return {**invalid, **{positions[i]: reason for i, reason in (named or {}).items()}}
        offset = self.server.log_size() if self.server is not None else 0
        rejected = None
        try:
            self.client.request("POST", INSERT_PATH, b"\n".join(lines) + b"\n", NDJSON)
        except VictoriaLogsError as error:  # 400: it could not read the request's last line(s)
            if error.status != 400:
                raise
            rejected = str(error)
        if self.live and self.server is None and rejected is None:
            self.sent += len(lines)
            return {}
        if self.server is None or rejected is not None:
            everything = self.counted + self.sent + len(lines)
            kept = _settled_count(self.client, everything) - self.counted - self.sent
            self.sent += kept
            if kept == len(lines):
                return {}
            return self._probe(lines, len(lines) - kept)
        refused = self._refusals(self.server.log_since(offset), lines)
        self.sent += len(lines) - len(refused)
        return refused

    def _probe(self, lines: list[bytes], missing: int) -> dict[int, str]:
        """On a server by URL (no log to read): which lines VictoriaLogs skipped, found by
        sending halves of the batch again to a scratch tenant of docbench's (never to its own,
        where the other lines are already stored once) and counting what each half kept there.
        A probe that does not find the ``missing`` lines is made once more reading settled
        counts (slower: a line VictoriaLogs kept may not be counted at once on a loaded
        machine)."""
        refused = self._bisect(lines, settle=False)
        if len(refused) != missing:
            refused = self._bisect(lines, settle=True)
        if len(refused) != missing:
            raise RuntimeError(
                f"VictoriaLogs kept {len(lines) - missing} of {len(lines)} lines "
                f"of a batch, but sent again it refused {len(refused)}"
            )
        return refused

    def _bisect(self, lines: list[bytes], settle: bool) -> dict[int, str]:
        """The lines a scratch tenant does not keep, by halves. Each bisection has a tenant of
        its own, so that no count includes an earlier bisection's lines."""
        scratch = VLClient(self.engine.base_url())
        scratch.headers.update(scratch_tenant())

        def count(expected: int) -> int:
            if settle:
                return _settled_count(scratch, expected)
            scratch.force_flush()
            return _count(scratch)

        try:
            refused: dict[int, str] = {}
            pending = [(0, len(lines))]
            before = count(0)
            while pending:
                start, end = pending.pop()
                reason = "VictoriaLogs skipped the line (its reason is in the server's log)"
                try:
                    scratch.request("POST", INSERT_PATH, b"\n".join(lines[start:end]) + b"\n", NDJSON)
                except VictoriaLogsError as error:
                    if error.status != 400:
                        raise
                    reason = str(error)
                now = count(before + end - start)
                kept, before = now - before, now
                if kept == end - start:
                    continue
                if end - start == 1:
                    refused[start] = reason
                    continue
                middle = (start + end) // 2
                pending += [(middle, end), (start, middle)]
            # The scratch tenant is not deleted: a delete task runs in the background while the
            # next lines arrive and parts merge, and VictoriaLogs' delete can exit FATAL during
            # a merge (VictoriaLogs #825); twice a shared test server died in a bisection.
            # Its lines stay in docbench's own account (a tenant no document count reads).
            return refused
        finally:
            scratch.close()

    @staticmethod
    def _refusals(log: str, lines: list[bytes]) -> dict[int, str]:
        refused: dict[int, str] = {}
        unnamed: list[str] = []
        for entry in log.splitlines():
            if "\twarn\t" not in entry and "\terror\t" not in entry:
                continue
            if (match := _CANNOT_READ.search(entry)) is not None:
                reason = re.split(r"; (?:unparsed tail|line contents): ", match.group(2))[0]
                refused[int(match.group(1))] = f"VictoriaLogs: {_shortened(reason)}"
            elif (match := _TOO_LONG.search(entry)) is not None:
                limit = int(match.group(1))
                for index, line in enumerate(lines):
                    if len(line) > limit and index not in refused:
                        refused[index] = (
                            f"VictoriaLogs: the line length {len(line)} exceeds "
                            f"-insert.maxLineSizeBytes={limit}"
                        )
                        break
            elif (match := _DROPPED.search(entry)) is not None:
                unnamed.append(match.group(1))
        if unnamed and len(lines) == 1 and not refused:
            # a lone line dropped: it is that line, whatever the log does not say
            return {0: f"VictoriaLogs: {_shortened(unnamed[0])}"}
        if unnamed:
            raise RuntimeError(
                f"VictoriaLogs dropped {len(unnamed)} line(s) of a batch without saying which: {unnamed[0]}"
            )
        return refused

    def load_batch(self, lines: list[bytes]) -> None:
        """All or nothing is what VictoriaLogs cannot do: a lone refused line is refused (and
        nothing was kept); a refusal among other lines leaves those stored, so the load stops."""
        refused = self.load_batch_skipping(lines) or {}
        if refused and len(lines) == 1:
            raise BatchRejected(refused[0], refused)
        if refused:
            raise RuntimeError(
                f"VictoriaLogs refused {len(refused)} of {len(lines)} lines and kept "
                "the others (it has no transactions): load through "
                "load_batch_skipping"
            )

    def close(self) -> None:
        self.client.close()
