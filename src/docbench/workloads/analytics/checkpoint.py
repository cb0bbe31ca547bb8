"""The checkpoint of a resumable load: which files are committed, and what the driver counted.

After each file is committed (``Loader.commit_file``: one transaction, or a staging table
attached at once), the load driver's state is written atomically to ``load-checkpoint.json``
in the variant's work directory, beside the database; every refusal also goes to
``load-refusals.tsv`` there. ``docbench run --resume`` after a kill (of docbench or of the
server) reads the checkpoint as a claim, not a fact: it must have the shape written here, the
files it lists as committed must be the dataset's first files in order, and the documents of
those files -- their lines, from the generator's manifest or counted in the files, less the
refusals it records -- must be what the engine counts and what the checkpoint itself says.
Then the load continues at the first file not committed: the engine holds exactly the
documents of the committed files minus the refused ones, none twice, none lost. Anything else
(a checkpoint edited or damaged, a system whose file loads are not atomic killed mid-file, a
database that is gone) makes the load start over, with one line that says why.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import orjson

from docbench.core.jsontypes import JsonArray, JsonObject
from docbench.workloads.load import LoadReport, LoadState, RefusedState

CHECKPOINT_NAME = "load-checkpoint.json"
REFUSALS_NAME = "load-refusals.tsv"
FORMAT = 1


class CheckpointState(TypedDict):
    """A checkpoint as written, once every field is checked."""

    format: int
    dataset_fingerprint: str
    system: str
    variant: str
    committed: list[str]
    expected_count: int
    report: LoadState


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

    def resume(
        self,
        engine_count: Callable[[], int],
        files: list[Path],
        offered_in: Callable[[Path], int],
        holder: str,
    ) -> tuple[Resumed | None, str]:
        """(the load so far, why) -- None when there is nothing to resume or it cannot be
        trusted, with the reason to print.

        The checkpoint is a claim, checked before any file is skipped: its committed files
        must be the dataset's first `files` in order, and the documents they hold (their
        lines, counted in the data by `offered_in`, less the refusals it records) must be
        what the engine (`holder`) counts and what the checkpoint itself says."""
        try:
            state = _checked_state(orjson.loads(self.path.read_bytes()))
        except FileNotFoundError:
            return None, "no load checkpoint: the load starts from the first file"
        except OSError as error:
            return None, f"cannot read {self.path} ({error.strerror or error}): the load starts over"
        except orjson.JSONDecodeError as error:
            return None, f"{self.path} is not JSON ({error}): the load starts over"
        except MalformedCheckpoint as error:
            return (
                None,
                f"{self.path} is not a load checkpoint docbench wrote ({error}): the load starts over",
            )
        if state["format"] != FORMAT:
            return None, f"{self.path} is of format {state['format']}, not {FORMAT}: the load starts over"
        identity = {
            "dataset_fingerprint": state["dataset_fingerprint"],
            "system": state["system"],
            "variant": state["variant"],
        }
        if any(identity[k] != v for k, v in self.identity.items()):
            return None, "the load checkpoint is for other data or another variant: the load starts over"
        committed = state["committed"]
        report = LoadReport.from_state(state["report"])
        disagreement = _disagreement(committed, report, files)
        if disagreement is not None:
            return None, f"{self.path.name} {disagreement}: the load starts over"
        offered = sum(offered_in(path) for path in files[: len(committed)])
        expected = offered - report.refused_count
        try:
            count = engine_count()
        except Exception as error:  # noqa: BLE001 - e.g. the table is gone
            return None, f"{holder} cannot count the documents ({error}): the load starts over"
        if count != expected:
            return None, (
                f"{self.path.name} lists {len(committed)} files as committed, {expected:,} documents "
                f"in the data; {holder} holds {count:,}: the load starts over"
            )
        if (report.offered, state["expected_count"]) != (offered, expected):
            return None, (
                f"{self.path.name} counts {state['expected_count']:,} documents of "
                f"{report.offered:,} lines in its {len(committed)} committed files, which hold "
                f"{expected:,} of {offered:,}: the load starts over"
            )
        self.committed = list(committed)
        return Resumed(report, self.committed, self._refusal_lines(report.refused_count)), (
            f"resuming the load after {len(self.committed)} committed files "
            f"({expected:,} documents, as {holder} counts)"
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


class MalformedCheckpoint(ValueError):
    """A checkpoint that is JSON but not of the shape docbench writes (the reason)."""


_REPORT_COUNTS = (
    "offered",
    "empty_lines",
    "refused_count",
    "not_objects",
    "batches",
    "retried_batches",
    "whole_file_refusals",
)


def _count(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MalformedCheckpoint(f"{where} is {_shown(value)}, not a count")
    return value


def _text(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise MalformedCheckpoint(f"{where} is {_shown(value)}, not a text")
    return value


def _shown(value: object) -> str:
    text = orjson.dumps(value).decode() if value is not None else "missing"
    return text if len(text) <= 40 else text[:39] + "…"


def _object(value: object, where: str) -> JsonObject:
    if not isinstance(value, dict):
        raise MalformedCheckpoint(f"{where} is {_shown(value)}, not an object")
    return value


def _list(value: object, where: str) -> JsonArray:
    if not isinstance(value, list):
        raise MalformedCheckpoint(f"{where} is {_shown(value)}, not a list")
    return value


def _checked_state(state: object) -> CheckpointState:
    """The checkpoint's state when every field has the type docbench writes; otherwise
    :class:`MalformedCheckpoint` naming the first field that has not."""
    top = _object(state, "its content")
    format_ = _count(top.get("format"), "'format'")
    identity = {key: _text(top.get(key), f"'{key}'") for key in ("dataset_fingerprint", "system", "variant")}
    committed = [_text(name, "a name in 'committed'") for name in _list(top.get("committed"), "'committed'")]
    if len(set(committed)) != len(committed):
        raise MalformedCheckpoint("'committed' names a file twice")
    expected_count = _count(top.get("expected_count"), "'expected_count'")
    report = _object(top.get("report"), "'report'")
    counts = {key: _count(report.get(key), f"'report.{key}'") for key in _REPORT_COUNTS}
    seconds = report.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        raise MalformedCheckpoint(f"'report.seconds' is {_shown(seconds)}, not a duration")
    refused: list[RefusedState] = []
    for item in _list(report.get("refused"), "'report.refused'"):
        entry = _object(item, "an entry of 'report.refused'")
        if set(entry) != {"file", "line", "reason"}:
            raise MalformedCheckpoint(f"an entry of 'report.refused' has the keys {sorted(entry)}")
        refused.append(
            {
                "file": _text(entry["file"], "'report.refused[].file'"),
                "line": _count(entry["line"], "'report.refused[].line'"),
                "reason": _text(entry["reason"], "'report.refused[].reason'"),
            }
        )
    refused_lines = {
        name: [
            _count(line, f"a line of 'report.refused_lines.{name}'")
            for line in _list(lines, f"'report.refused_lines.{name}'")
        ]
        for name, lines in _object(report.get("refused_lines"), "'report.refused_lines'").items()
    }
    return {
        "format": format_,
        "dataset_fingerprint": identity["dataset_fingerprint"],
        "system": identity["system"],
        "variant": identity["variant"],
        "committed": committed,
        "expected_count": expected_count,
        "report": {
            "offered": counts["offered"],
            "empty_lines": counts["empty_lines"],
            "refused": refused,
            "refused_count": counts["refused_count"],
            "not_objects": counts["not_objects"],
            "refused_lines": refused_lines,
            "seconds": seconds,
            "batches": counts["batches"],
            "retried_batches": counts["retried_batches"],
            "whole_file_refusals": counts["whole_file_refusals"],
        },
    }


def _disagreement(committed: list[str], report: LoadReport, files: list[Path]) -> str | None:
    """What in the checkpoint contradicts itself or the dataset's files (None: nothing): the
    load commits the files in order, so the committed ones are the dataset's first files,
    and the refusals it records are in those files."""
    names = [path.name for path in files]
    for number, name in enumerate(committed, 1):
        if number > len(names) or names[number - 1] != name:
            where = (
                f"the dataset's file {number} is {names[number - 1]}"
                if number <= len(names)
                else "the dataset has fewer"
            )
            return f"lists {name} as committed file {number}, but {where}"
    outside = sorted(set(report.refused_lines) - set(committed))
    if outside:
        return f"records refused lines of {outside[0]}, a file it does not list as committed"
    listed = sum(len(lines) for lines in report.refused_lines.values())
    if listed != report.refused_count:
        return f"counts {report.refused_count:,} refused documents but lists {listed:,}"
    return None


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
