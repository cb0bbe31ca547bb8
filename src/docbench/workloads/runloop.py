"""The run loop every workload shares for one (system, variant): its work directory claimed,
its result's name reserved, its engine started and, whatever happens, released, stopped and
its directory cleared, and its result written (or kept elsewhere when the results directory
fails). ClickBench's one shared driver: a workload says what it measures, this module says how
a run starts and ends.

One policy for failures: nothing is swallowed. A failure while measuring is the result's
``error`` (with its traceback) and the run is not ``complete``; a failure while stopping is a
warning in the result. Either way the next system runs.
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeAlias, TypedDict

from docbench import results
from docbench.contracts.engine import Engine
from docbench.core import paths
from docbench.core.jsontypes import JsonObject, as_array
from docbench.core.ownership import claim_directory
from docbench.core.redact import redact_text
from docbench.servers.managed import clear_work_directory

UNSAVED = "unsaved-results"


class RunRecord(TypedDict, total=False):
    """The keys of a result this loop writes (every workload's result has them: its header's
    ``finished_at`` and ``complete``; ``error``, its traceback and ``warnings`` when they occur).
    A workload's own TypedDict of its result extends it; a result still built as a JSON object
    is taken too."""

    finished_at: str | None
    complete: bool
    error: str
    error_traceback: str
    warnings: list[str]


# A result as the loop takes it: a workload's typed result, or a JSON object.
RunDocument: TypeAlias = "RunRecord | JsonObject"


def claim_workdir(path: Path, fresh: bool = False) -> Path:
    """The run's work directory, marked as docbench's (``fresh``: emptied first, when it is
    docbench's own)."""
    if fresh:
        clear_work_directory(path)
    claim_directory(path)
    return path


@contextlib.contextmanager
def result_slot(
    results_dir: Path, workload: str, system: str, variant: str, label: str, resumed: Path | None = None
) -> Iterator[Path]:
    """A new result file name (or the ``resumed`` run's own), reserved until the result is
    written (released if the run ends without it: an error, Ctrl-C, a signal)."""
    path = resumed or results.new_result_path(results_dir, workload, system, variant, label)
    with results.reserved(path):
        yield path


def save(path: Path, document: RunDocument, url: str | None) -> Path | None:
    """The result written without the URL's password; kept in docbench's work directory when
    the results directory fails (None when it could be written nowhere)."""
    return results.write_or_keep(path, results.scrub(document, url), paths.work_dir() / UNSAVED)


def record_failure(document: RunDocument, engine: Engine, error: BaseException) -> str:
    """A failure while measuring, in the result (the URL's password never written)."""
    document["error"] = redact_text(f"{type(error).__name__}: {error}", engine.url)[:2000]
    document["error_traceback"] = redact_text(traceback.format_exc(limit=8), engine.url)
    document["complete"] = False
    return str(document["error"])


def stop(engine: Engine, document: RunDocument, release: Callable[[], None] | None = None) -> None:
    """Release the process's handles and stop the engine; a failure is a warning in the
    result, never silence."""
    for step, action in (("release", release or engine.release), ("stop", engine.stop)):
        try:
            action()
        except Exception as error:  # noqa: BLE001 - recorded: the run's figures stand
            warnings = as_array(document.setdefault("warnings", []), "the result's warnings")
            warnings.append(redact_text(f"{step} failed: {type(error).__name__}: {error}", engine.url))


@contextlib.contextmanager
def engine_running(
    engine: Engine,
    document: RunDocument,
    release: Callable[[], None] | None = None,
    keep_workdir: Callable[[], bool] = lambda: False,
    start: Callable[[], None] | None = None,
    record: bool = True,
    say: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """The engine started for the body, then released, stopped and its work directory
    cleared (unless ``keep_workdir()`` says the run keeps it, or the engine is a user's server
    by URL). ``start``/``release``: the workload's own, where its target holds more than the
    engine (the engine's stop runs after ``release`` either way; it is safe twice).
    ``record``: a failure in the body becomes the result's ``error`` and the run goes on
    (``say`` tells it); otherwise it propagates (after the stop)."""
    claim_workdir(engine.workdir)
    try:
        (start or engine.start)()
        yield
    except Exception as error:
        if not record:
            raise
        message = record_failure(document, engine, error)
        if say is not None:
            say(message)
    finally:
        stop(engine, document, release)
        if engine.url is None and not keep_workdir():
            # Stops first whatever server a failed stop left running there (by its pid file).
            clear_work_directory(engine.workdir)
        document["finished_at"] = results.now_iso()


__all__ = [
    "RunDocument",
    "RunRecord",
    "claim_workdir",
    "engine_running",
    "record_failure",
    "result_slot",
    "save",
    "stop",
]
