"""The checkpoint of a resumable load: which files are committed, and what the driver counted.

After each file is committed (``Loader.commit_file``: one transaction, or a staging table
attached at once), the load driver's state is written atomically to ``load-checkpoint.json``
in the variant's work directory, beside the database; every refusal also goes to
``load-refusals.tsv`` there. ``docbench run --resume`` after a kill (of docbench or of the
server) reads the checkpoint, asks the engine for its own count and continues at the first
file not committed when the two agree: the engine then holds exactly the documents of the
committed files minus the refused ones, none twice, none lost. When they disagree (a system
whose file loads are not atomic was killed mid-file, or the database is gone) the load starts
over, and says why.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from docbench.workloads.analytics.load import LoadReport

CHECKPOINT_NAME = "load-checkpoint.json"
REFUSALS_NAME = "load-refusals.tsv"
FORMAT = 1


@dataclass
class Resumed:
    """A load picked up where it stopped."""

    report: LoadReport
    committed: list[str]
    refusals: list[str]  # the refusal log's lines so far


class LoadCheckpoint:
    def __init__(self, workdir: Path, fingerprint: str, system: str, variant: str) -> None:
        self.path = workdir / CHECKPOINT_NAME
        self.refusals_path = workdir / REFUSALS_NAME
        self.identity = {"dataset_fingerprint": fingerprint, "system": system, "variant": variant}
        self.committed: list[str] = []

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)
        self.refusals_path.unlink(missing_ok=True)
        self.committed = []

    def record(self, paths: list[Path], report: LoadReport) -> None:
        """Files `paths` are committed (one unit: a file, or a group loaded in one statement):
        write the state atomically (a kill leaves the old one)."""
        self.committed.extend(path.name for path in paths)
        state = {
            "format": FORMAT,
            **self.identity,
            "committed": self.committed,
            "expected_count": report.offered - report.refused_count,
            "report": report.state(),
        }
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(partial, "wb") as handle:
            handle.write(orjson.dumps(state))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, self.path)

    def resume(self, engine_count: Callable[[], int]) -> tuple[Resumed | None, str]:
        """(the load so far, why) -- None when there is nothing to resume or it cannot be
        trusted, with the reason to print."""
        try:
            state = orjson.loads(self.path.read_bytes())
        except FileNotFoundError:
            return None, "no load checkpoint: the load starts from the first file"
        except (OSError, orjson.JSONDecodeError) as error:
            return None, f"unreadable load checkpoint ({error}): the load starts over"
        if state.get("format") != FORMAT or any(state.get(k) != v for k, v in self.identity.items()):
            return None, "the load checkpoint is for other data or another variant: the load starts over"
        try:
            count = engine_count()
        except Exception as error:  # noqa: BLE001 - e.g. the table is gone
            return None, f"the engine cannot count the documents ({error}): the load starts over"
        expected = int(state["expected_count"])
        if count != expected:
            return None, (
                f"the engine holds {count:,} documents, the checkpoint after "
                f"{len(state['committed'])} files expects {expected:,} (a file was "
                "partly committed): the load starts over"
            )
        report = LoadReport.from_state(state["report"])
        self.committed = list(state["committed"])
        return Resumed(report, self.committed, self._refusal_lines(report.refused_count)), (
            f"resuming the load after {len(self.committed)} committed files "
            f"({expected:,} documents, as the engine counts)"
        )

    def _refusal_lines(self, count: int) -> list[str]:
        """The first `count` lines of the refusal log (later ones belong to the file that was
        not committed, which is loaded again)."""
        lines: list[str] = []
        with contextlib.suppress(FileNotFoundError), open(self.refusals_path, encoding="utf-8") as log:
            for line in log:
                if len(lines) == count:
                    break
                lines.append(line)
        return lines


class TeeLog:
    """Writes to the result's refusal log and to the work directory's (for --resume)."""

    def __init__(self, *logs: Any) -> None:
        self.logs = logs

    def write(self, text: str) -> int:
        for log in self.logs:
            log.write(text)
        return len(text)

    def flush(self) -> None:
        for log in self.logs:
            log.flush()
