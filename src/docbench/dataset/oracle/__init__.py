"""The answer oracle: exact answers of Q1-Q5 for a directory of ndjson files, without a database.

Every line of every data file (see :mod:`docbench.dataset.reader`) is a document, an empty
line or an invalid line, and each query counts documents as :mod:`.semantics` says. The
answers are computed per file, as partial aggregates merged into one, then into the
canonical answer document (``answers.json``, :mod:`.document`). The modules, from the
bottom up (each imports only those above it in this list):

- :mod:`.semantics`: what the queries count; the collections, hours, int64 range.
- :mod:`.parse`: a line into a document (orjson, then fallbacks for valid JSON it refuses).
- :mod:`.dids`: exact sets of dids in 16 bytes each (packed ``did:plc:`` ids in numpy runs).
- :mod:`.partials`: :class:`Partial`, one file's aggregates, and its per-collection
  :class:`CollectionState`.
- :mod:`.templates`: the byte layouts of recurring lines, and the proof that a line fitting
  one needs no parse.
- :mod:`.block_router`: a block's lines to the templates (checked in bulk with numpy) or to
  the full parse.
- :mod:`.scan`: blocks and lines into a partial (the full parse's hot loop).
- :mod:`.compute_log`: what a computation did, for the CLI and the tests.
- :mod:`.tasks`: scanning a file or a byte range (Python or the native scanner), hashing.
- :mod:`.parallel`: the tasks on ``jobs`` processes.
- :mod:`.partial_cache`: the per-file partials, cached (``.oracle-partials/``).
- :mod:`.document`: merged aggregates into the answer document and its text.
- :mod:`.compute`: the answers of a list of files.
- :mod:`.answers_cache`: the answers of a dataset directory, cached (``answers.json``).
- :mod:`.cli`: ``docbench answers``.

Speed, memory and the measurements behind them: ``docs/oracle.md``.
"""

from __future__ import annotations

import sys
import types

from docbench.dataset.oracle import answers_cache, partial_cache, scan, tasks
from docbench.dataset.oracle.answers_cache import (
    ANSWERS_NAME,
    answers_cache_path,
    load_or_compute,
    load_or_compute_answers,
    read_cached_answers,
    write_answers,
)
from docbench.dataset.oracle.cli import answers_command, format_time_us, print_answers
from docbench.dataset.oracle.compute import compute_answers
from docbench.dataset.oracle.compute_log import ComputeLog
from docbench.dataset.oracle.dids import DistinctDids, FirstLast, decode_did, encode_dids, pack_did_rows
from docbench.dataset.oracle.document import FORMAT, MAX_TIED_DIDS, NEXT_ROWS, TOP_N, dumps_answers, finalize
from docbench.dataset.oracle.parallel import execute, worker_main
from docbench.dataset.oracle.parse import INVALID, parse_deep, parse_document, parse_fallback
from docbench.dataset.oracle.partial_cache import (
    PARTIAL_FORMAT,
    PARTIALS_DIR,
    PartialCache,
    directory_writable,
    oracle_version,
)
from docbench.dataset.oracle.partials import CollectionState, Partial
from docbench.dataset.oracle.scan import SIMD_MIN_BYTES, scan_batches, scan_blocks, simd_parse
from docbench.dataset.oracle.semantics import (
    HOUR_US,
    INT64_MAX,
    INT64_MIN,
    LIKE,
    NO_HOUR,
    POST,
    Q3_COLLECTIONS,
    REPOST,
)
from docbench.dataset.oracle.tasks import READ_BYTES, Task, native_partial, plan_tasks
from docbench.dataset.oracle.templates import TEMPLATE_MAX_LEN, Template, TemplateStore, derive_template

__all__ = [
    "ANSWERS_NAME",
    "FORMAT",
    "HOUR_US",
    "INT64_MAX",
    "INT64_MIN",
    "INVALID",
    "LIKE",
    "MAX_TIED_DIDS",
    "NEXT_ROWS",
    "NO_HOUR",
    "PARTIALS_DIR",
    "PARTIAL_FORMAT",
    "POST",
    "Q3_COLLECTIONS",
    "READ_BYTES",
    "REPOST",
    "SIMD_MIN_BYTES",
    "TEMPLATE_MAX_LEN",
    "TOP_N",
    "CollectionState",
    "ComputeLog",
    "DistinctDids",
    "FirstLast",
    "Partial",
    "PartialCache",
    "Task",
    "Template",
    "TemplateStore",
    "answers_cache_path",
    "answers_command",
    "compute_answers",
    "decode_did",
    "derive_template",
    "directory_writable",
    "dumps_answers",
    "encode_dids",
    "execute",
    "finalize",
    "format_time_us",
    "load_or_compute",
    "load_or_compute_answers",
    "native_partial",
    "oracle_version",
    "pack_did_rows",
    "parse_deep",
    "parse_document",
    "parse_fallback",
    "plan_tasks",
    "print_answers",
    "read_cached_answers",
    "scan_batches",
    "scan_blocks",
    "simd_parse",
    "worker_main",
    "write_answers",
]

# The names these functions had when the oracle was one module (the tests use them).
_load_or_compute = load_or_compute
_plan_tasks = plan_tasks
_parse_deep = parse_deep
_simd_parse = simd_parse
_execute = execute


def _forwarded(module: types.ModuleType, name: str) -> property:
    """``name`` of this package as ``module.name``: read there, assigned there."""
    return property(lambda _: getattr(module, name), lambda _, value: setattr(module, name, value))


class _Package(types.ModuleType):
    """This package, whose names for process-wide state, hooks and tunables are those of the
    module that reads them: assigning one here (a test's monkeypatch of ``SPLIT_MIN_BYTES``,
    a fresh ``_TEMPLATES``...) changes what that module reads, and reading one never gives a
    stale copy (data descriptors: pytest's monkeypatch restores them by assignment too)."""

    _MEMO = _forwarded(answers_cache, "_MEMO")
    _write_atomic = _forwarded(answers_cache, "_write_atomic")
    _TEMPLATES = _forwarded(scan, "_TEMPLATES")
    _SIMD = _forwarded(scan, "_SIMD")
    FLUSH_AT = _forwarded(scan, "FLUSH_AT")
    _VERSION = _forwarded(partial_cache, "_VERSION")
    SPLIT_MIN_BYTES = _forwarded(tasks, "SPLIT_MIN_BYTES")


sys.modules[__name__].__class__ = _Package
