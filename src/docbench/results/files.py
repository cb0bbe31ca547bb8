"""Result files on disk: names, atomic writes, reading, and the latest run of an identity."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from docbench.contracts.cluster import requested_shape
from docbench.core import procstats
from docbench.core.jsontypes import (
    JsonMapping,
    JsonObject,
    JsonValue,
    as_array,
    as_object,
    as_str,
    is_object,
    optional_str,
)
from docbench.results.compat import model_body, upgrade
from docbench.results.environment import machine_slug, stamp

if TYPE_CHECKING:
    from docbench.results.models import RunHeader

# 2: `system` is the registry name everywhere (display name in `display_name`), one key per
# meaning (`variant_settings`, `started_at`, `finished_at`), machine and date in file names.
RESULT_FORMAT = 2
# Free space a results directory must have before a run starts (results are small; a full
# disk is what this catches).
MIN_FREE_BYTES = 16 << 20
# What a result file holds from the moment its name is reserved until the run writes the
# result: who reserved it. Never an empty file: a run killed before writing its result
# leaves this, which no reader takes for a result (it has no workload nor system), and the
# next run in the directory removes it once the process that reserved it is gone.
RESERVATION_KEY = "docbench_reservation"
# Result files up to this size are looked at for abandoned reservations (a result is larger).
_RESERVATION_MAX_BYTES = 4096


class ResultsUnwritable(Exception):
    """The results directory cannot take result files (the message says why)."""


def new_result_path(results_dir: Path, workload: str, system: str, variant: str, label: str) -> Path:
    """A new file name for a run, reserved at once: created holding the reservation (this
    process's identity), atomically and only if no file has that name, so two runs started
    in the same second never share a file, and no kill leaves an empty result file."""
    results_dir.mkdir(parents=True, exist_ok=True)
    base = f"{workload}.{system}.{variant}.{label}.{machine_slug()}.{stamp()}"
    reservation: JsonObject = {
        RESERVATION_KEY: _this_process(),
        "note": "the name of a docbench run's result, written when the run ends",
    }
    for attempt in range(1000):
        path = results_dir / (f"{base}.json" if attempt == 0 else f"{base}-{attempt + 1}.json")
        try:
            if _reserve(path, reservation):
                return path
        except OSError:
            # A directory that takes no file now: writing the result there fails too, and
            # write_or_keep keeps it elsewhere, saying why (the run's result is not lost).
            return path
    raise ResultsUnwritable(f"no free result file name for {base} in {results_dir}")


def _reserve(path: Path, reservation: JsonObject) -> bool:
    """Create ``path`` holding the reservation (False: the name is taken); on a full disk,
    which has no room for it, an empty file reserves the name."""
    try:
        return _create_new(path, reservation)
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        return True
    except FileExistsError:
        return False


def _this_process() -> JsonObject:
    pid = os.getpid()
    return {
        "pid": pid,
        "start_time": procstats.process_start_time(pid),
        "boot_id": procstats.boot_id(),
        "machine": machine_slug(),
    }


def _create_new(path: Path, document: JsonObject) -> bool:
    """Write ``document`` to ``path`` only if no file has that name (False: taken), whole or
    not at all: a complete temporary file linked to the name."""
    temporary = _write_temporary(path, document)
    try:
        os.link(temporary, path)
        return True
    except FileExistsError:
        return False
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        return _create_new_without_links(path, temporary)  # a file system without hard links
    finally:
        temporary.unlink(missing_ok=True)


def _create_new_without_links(path: Path, temporary: Path) -> bool:
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as handle:
        handle.write(temporary.read_bytes())
    return True


def _write_temporary(path: Path, document: Mapping[str, object]) -> Path:
    """The document in a hidden file beside ``path``, on disk (fsync). Its name carries this
    process's PID: a kill's leftover is removed by the next run (release_abandoned)."""
    data = orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    temporary = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        temporary.chmod(0o644)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def write_atomically(path: Path, document: Mapping[str, object]) -> None:
    """The document at ``path``, whole or not at all (a temporary file renamed over it). Any
    mapping orjson writes (JSON values, TypedDicts, dataclasses within)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = _write_temporary(path, document)
    try:
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def os_reason(error: OSError) -> str:
    """``No space left on device (ENOSPC)``: the OS's words and the error's name."""
    name = errno.errorcode.get(error.errno or 0)
    return f"{error.strerror or error}" + (f" ({name})" if name else "")


def write_or_keep(path: Path, document: MutableMapping[str, object], keep_dir: Path) -> Path | None:
    """Write the result; when the results directory fails (read-only, full disk), keep it in
    ``keep_dir`` (docbench's own work directory) instead, so a finished run is not lost, and
    say so on stderr (the OS's reason, both paths): the caller counts the run as failed, its
    result is not where it was asked for. When that fails too, print the result to stderr.
    Returns where it went (None: only stderr)."""
    try:
        write_atomically(path, document)
        return path
    except OSError as error:
        reason = os_reason(error)
        kept = keep_dir / path.name
        warnings = as_array(document.setdefault("warnings", []), "warnings")
        warnings.append(f"could not write {path} ({reason}); kept at {kept}")
        _release(path)
        try:
            write_atomically(kept, document)
        except OSError as second:
            print(
                f"error: could not write the result to {path} ({reason}) nor to {kept} "
                f"({os_reason(second)}); here it is:",
                file=sys.stderr,
            )
            print(orjson.dumps(document, option=orjson.OPT_NON_STR_KEYS).decode(), file=sys.stderr)
            return None
        print(
            f"error: could not write the result to {path}: {reason}; it is saved at {kept} instead "
            "(make room or fix the directory, then move it there; or give another --results)",
            file=sys.stderr,
        )
        return kept


def _reservation_of(path: Path) -> JsonObject | None:
    """Who reserved ``path`` when it still holds a reservation (not a result), else None."""
    try:
        if path.stat().st_size > _RESERVATION_MAX_BYTES:
            return None
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    owner = document.get(RESERVATION_KEY) if is_object(document) else None
    return owner if is_object(owner) else None


def _release(path: Path) -> None:
    """Remove ``path`` if it still holds this process's reservation (or is empty: the
    reservation of an earlier docbench version)."""
    with contextlib.suppress(OSError):
        if path.stat().st_size == 0 or _reservation_of(path) == _this_process():
            path.unlink()


@contextlib.contextmanager
def reserved(path: Path) -> Iterator[Path]:
    """A result file name reserved by new_result_path, released again (the reservation
    removed) if the run ends without writing it (an error, Ctrl-C, a signal)."""
    try:
        yield path
    finally:
        _release(path)


def _gone(owner: JsonObject) -> bool:
    """Whether the process that made a reservation has ended (False when that cannot be
    told: another machine's, or without its start time)."""
    if owner.get("machine") != machine_slug() or owner.get("start_time") is None:
        return False
    if owner.get("boot_id") != procstats.boot_id():
        return True
    pid = owner.get("pid")
    return not isinstance(pid, int) or procstats.process_start_time(pid) != owner["start_time"]


def _pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return procstats.process_start_time(pid) is None  # a zombie


def _abandoned(path: Path) -> str | None:
    """What the result file ``path`` is when a killed run left it (None: a result, or the
    reservation of a run that still runs)."""
    try:
        if path.stat().st_size == 0:
            return "an empty result file: a run killed before writing its result"
    except OSError:
        return None
    owner = _reservation_of(path)
    if owner is None or not _gone(owner):
        return None
    return f"the name reserved by docbench PID {owner.get('pid')}, which ended without writing its result"


def abandoned_files(results_dir: Path) -> list[tuple[Path, str]]:
    """What killed runs left in a results directory, each with what it is: reservations of
    processes that have ended, empty result files (an earlier docbench version reserved names
    that way) and temporary files of processes that have ended (a write cut short)."""
    found = [(path, what) for path in sorted(results_dir.glob("*.json")) if (what := _abandoned(path))]
    # The refusal log of a result never written: that of an abandoned name, or one alone (its
    # run killed while its lines were still in the buffer leaves it empty).
    abandoned = {path for path, _ in found}
    for log in sorted(results_dir.glob("*.refused.tsv")):
        result = log.with_name(log.name.removesuffix(".refused.tsv") + ".json")
        if result in abandoned or not result.exists():
            found.append((log, "the refusal log of a run killed before it wrote its result"))
    for path in sorted(results_dir.glob(".*.tmp")):
        pid = path.name.removesuffix(".tmp").split(".")[-2]
        if pid.isdigit() and _pid_gone(int(pid)):
            found.append((path, f"a result write of docbench PID {pid} cut short"))
    return found


def release_abandoned(results_dir: Path) -> list[str]:
    """Remove what killed runs left in the directory (abandoned_files); a note for each."""
    notes = []
    for path, what in abandoned_files(results_dir):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            notes.append(f"removed {path}: {what}")
    return notes


def check_writable(results_dir: Path, min_free: int = MIN_FREE_BYTES) -> None:
    """Raise ResultsUnwritable unless results can be written there (before any load starts);
    what killed runs left there is removed first, each with a note on stderr."""
    with contextlib.suppress(OSError):
        for note in release_abandoned(results_dir):
            print(f"note: {note}", file=sys.stderr)
    try:
        results_dir.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=results_dir, prefix=".docbench-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as error:
        raise ResultsUnwritable(
            f"results directory {results_dir} is not writable: {error.strerror or error}"
        ) from error
    free = shutil.disk_usage(results_dir).free
    if free < min_free:
        raise ResultsUnwritable(f"results directory {results_dir} has only {free:,} bytes free")


def read_result(path: Path) -> JsonObject | None:
    """The document in the current format (older formats upgraded), or None if unreadable."""
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return upgrade(document) if is_object(document) else None


def is_complete(path: Path) -> bool:
    document = read_result(path)
    return bool(document and document.get("complete"))


def _is_result(document: JsonObject) -> bool:
    return "system" in document and "workload" in document


def load_results(results_dirs: list[Path]) -> list[JsonObject]:
    """Every result document under the directories (recursively), each with its ``_path``."""
    documents = []
    for directory in results_dirs:
        candidates = [directory] if directory.is_file() else sorted(directory.rglob("*.json"))
        for path in candidates:
            if path.name.startswith(".") or path.name.endswith(".intervals.json"):
                continue
            document = read_result(path)
            if document is not None and _is_result(document):
                document.setdefault("_path", str(path))
                documents.append(document)
    return documents


def result_model(document: JsonObject) -> RunHeader:
    """A loaded document read through its workload's model, which remembers its file and the
    document as read; ValueError (pydantic's ValidationError) when it does not read."""
    from docbench.results.models import RESULT_MODELS

    workload = str(document.get("workload", "analytics"))
    if workload not in RESULT_MODELS:
        raise ValueError(f"no model for the {workload} workload")
    result = RESULT_MODELS[workload].model_validate(model_body(document))
    result.read_from(optional_str(document.get("_path"), "_path"), document)
    return result


def result_models(documents: list[JsonObject], quiet: bool = False) -> list[RunHeader]:
    """The documents read through their models; one that does not read is left out, and said
    so on stderr (unless ``quiet``)."""
    results = []
    for document in documents:
        try:
            results.append(result_model(document))
        except ValueError as error:
            if not quiet:
                where = document.get("_path") or f"a {document.get('workload')} result"
                print(f"note: left out {where}, which does not read: {_reason(error)}", file=sys.stderr)
    return results


def _reason(error: ValueError) -> str:
    """The first problem of a document that does not read through its model."""
    from pydantic import ValidationError

    if isinstance(error, ValidationError) and error.errors():
        first = error.errors()[0]
        return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
    return str(error)


def load_typed(results_dirs: list[Path], workload: str | None = None) -> list[RunHeader]:
    """Every result under the directories (``workload``'s only, when given) read through its
    workload's model."""
    documents = load_results(results_dirs)
    return result_models([d for d in documents if workload in (None, d.get("workload"))])


def shape_label(nodes: int, shards: int, replicas: int) -> str:
    """``3n/3s/1r`` for several nodes, shards or replicas; "" for one node with one shard."""
    if nodes == 1 and shards == 1 and replicas == 0:
        return ""
    return f"{nodes}n/{shards}s/{replicas}r"


def cluster_label(result: RunHeader | JsonObject) -> str:
    """The run's cluster shape (:func:`shape_label`); "" for systems that do not run as clusters."""
    if not isinstance(result, dict):
        cluster = result.cluster
        return shape_label(cluster.nodes, cluster.shards, cluster.replicas) if cluster else ""
    record = as_object(result.get("cluster") or {}, "cluster")
    nodes, shards, replicas = (
        _whole(record.get(k) or d, f"cluster.{k}") for k, d in (("nodes", 1), ("shards", 1), ("replicas", 0))
    )
    return shape_label(nodes, shards, replicas)


def _whole(value: JsonValue, what: str) -> int:
    """``int(value)`` of a count as a document holds it (a number, or its text)."""
    if isinstance(value, str | int | float):
        return int(value)
    raise TypeError(f"{what}: expected a number, got {type(value).__name__}")


NON_DEFAULT_MARK = "†"


def run_name(result: RunHeader | JsonObject) -> str:
    """``system/variant`` as reports show it, the cluster shape beside it for a distributed
    run (``opensearch/default [3n/3s/1r]``), and a mark when the variant departs from the
    engine's own defaults where it matters (:func:`non_default_notes` says how). Results of
    workloads whose reports still read dicts may be given as read."""
    shape = cluster_label(result)
    mark = f" {NON_DEFAULT_MARK}" if non_default(result) else ""
    return _system_variant(result) + (f" [{shape}]" if shape else "") + mark


def _system_variant(result: RunHeader | JsonObject) -> str:
    if isinstance(result, dict):
        return f"{result.get('system')}/{result.get('variant', '-')}"
    return f"{result.system}/{result.variant}"


def non_default(result: RunHeader | JsonObject) -> str | None:
    """What the run's variant sets beyond the engine's defaults, with its measured cost."""
    from docbench.results.models import AnalyticsResult

    if isinstance(result, AnalyticsResult):
        return result.representation.non_default if result.representation else None
    labels = result.get("representation") if isinstance(result, dict) else None
    return (
        optional_str(labels.get("non_default"), "representation.non_default") if is_object(labels) else None
    )


def non_default_notes(results: Sequence[RunHeader]) -> list[str]:
    """One footnote per system/variant whose runs carry the mark."""
    notes: dict[str, str] = {}
    for result in results:
        note = non_default(result)
        if note:
            notes.setdefault(_system_variant(result), note)
    return [f"{NON_DEFAULT_MARK} {name}: {note}" for name, note in sorted(notes.items())]


def run_identity(document: JsonObject) -> tuple[str, str, str, str, str]:
    """(workload, system, variant, data, cluster shape): what --resume and the report treat as
    the same run (a 3-node run is never the same as a 1-node one)."""
    return (
        as_str(document.get("workload", "analytics"), "workload"),
        str(document.get("system")),
        str(document.get("variant")),
        str(document.get("dataset_label")),
        cluster_label(document),
    )


def latest_run(
    results_dir: Path,
    workload: str,
    system: str,
    variant: str,
    label: str,
    dataset_fingerprint: str | None = None,
) -> tuple[Path, JsonObject] | None:
    """The latest run of this identity on this machine, or None.

    With ``dataset_fingerprint`` only runs on exactly that data count (a directory of the same
    name with other files is another dataset)."""
    if not results_dir.is_dir():
        return None
    host = machine_slug()
    shape = requested_shape()
    cluster = cluster_label({"cluster": shape.to_record()})
    found: list[tuple[str, float, Path, JsonObject]] = []
    for path in results_dir.glob("*.json"):
        if path.name.startswith(".") or path.name.endswith(".intervals.json"):
            continue
        document = read_result(path)
        if document is None or run_identity(document) != (workload, system, variant, label, cluster):
            continue
        if document.get("machine_slug", host) != host:
            continue
        if dataset_fingerprint and document.get("dataset_fingerprint") != dataset_fingerprint:
            continue
        found.append((str(document.get("started_at") or ""), path.stat().st_mtime, path, document))
    if not found:
        return None
    found.sort(key=lambda item: (item[0], item[1]))
    return found[-1][2], found[-1][3]


def latest_documents(documents: list[JsonObject]) -> list[JsonObject]:
    """Of each identity (workload, system, variant, data, machine), the latest complete run, or
    the latest run when none is complete. Imported results are each their own identity; a
    document without a data fingerprint (older formats) counts as the same data as the newest
    fingerprinted run of its identity."""

    def place(document: JsonObject) -> tuple[JsonValue, ...]:
        return (
            *run_identity(document),
            document.get("machine_slug") or document.get("machine"),
            document.get("_path") if document.get("imported") else None,
        )

    newest: dict[tuple[JsonValue, ...], tuple[str, JsonValue]] = {}
    for document in documents:
        if document.get("dataset_fingerprint"):
            stamp_ = str(document.get("started_at") or "")
            key = place(document)
            if key not in newest or stamp_ > newest[key][0]:
                newest[key] = (stamp_, document["dataset_fingerprint"])
    best: dict[tuple[JsonValue, ...], tuple[tuple[bool, str, str], JsonObject]] = {}
    for document in documents:
        fingerprint = document.get("dataset_fingerprint") or newest.get(place(document), ("", None))[1]
        key = (*place(document), fingerprint)
        rank = (
            bool(document.get("complete")),
            str(document.get("started_at") or ""),
            str(document.get("_path")),
        )
        if key not in best or rank > best[key][0]:
            best[key] = (rank, document)
    chosen = {id(entry[1]) for entry in best.values()}
    return [d for d in documents if id(d) in chosen]


# Keys of a result document that the dashboard's details panel does not need (already shown
# as figures, or bulky).
_DROPPED_KEYS = {"result", "memory_usage", "engine_time", "bytes_read", "_path"}
_LONG_TEXT = 4000


def trimmed_document(document: JsonMapping) -> JsonObject:
    """The document as a details panel shows it: without the figures and the bulky parts."""
    trimmed: JsonObject = {k: v for k, v in document.items() if k not in _DROPPED_KEYS}
    if isinstance(answers := trimmed.get("answers"), list):
        trimmed["answers"] = [
            {k: v for k, v in a.items() if k != "rows"} if isinstance(a, dict) else a for a in answers
        ]
    if isinstance(plans := trimmed.get("plans"), list):
        trimmed["plans"] = [
            p[:_LONG_TEXT] + ("…" if len(p) > _LONG_TEXT else "") if isinstance(p, str) else p for p in plans
        ]
    if isinstance(traceback := trimmed.get("error_traceback"), str):
        trimmed["error_traceback"] = traceback[-_LONG_TEXT:]
    return trimmed


def scrub(document: Any, url: str | None) -> Any:
    """The document with the URL's password replaced in every string (error messages and
    tracebacks may echo what a driver was given); a no-op without a URL."""
    if not url:
        return document
    from docbench.core.redact import redact_text

    if isinstance(document, str):
        return redact_text(document, url)
    if isinstance(document, dict):
        return {key: scrub(value, url) for key, value in document.items()}
    if isinstance(document, list):
        return [scrub(value, url) for value in document]
    return document
