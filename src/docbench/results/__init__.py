"""Result documents: one JSON file per run of (workload, system, variant, dataset).

pyperf-style: every run writes a new, versioned file of raw values with its metadata, analysed
later by ``docbench report``. A file name carries the machine and the start time
(``updates.postgresql.jsonb-btree.100k.myhost.20261124T091500Z.json``), so nothing is ever
overwritten; ``--resume`` and the report use the latest run of an identity, and older runs stay
readable. Files are written atomically (temporary file + rename): an interrupted run leaves
either the previous state of its own file or the new one.

* :mod:`.files` -- names, atomic writes, reading (as documents, or through the result models:
  ``load_typed``, ``result_model``), finding the latest run;
* :mod:`.header` -- the header every workload's result starts from (one meaning per key);
* :mod:`.compat` -- documents of older formats read as the current one;
* :mod:`.models` -- a model per workload's result (pydantic), the one description of a result;
* :mod:`.schema` -- a JSON Schema per workload (``schema/<workload>.schema.json``), from them.
"""

from __future__ import annotations

from docbench.results.compat import upgrade_copy
from docbench.results.environment import environment, machine_label, now_iso, today
from docbench.results.files import (
    RESULT_FORMAT,
    ResultsUnwritable,
    check_writable,
    cluster_label,
    is_complete,
    latest_run,
    load_results,
    load_typed,
    new_result_path,
    read_result,
    reserved,
    result_model,
    result_models,
    run_name,
    scrub,
    write_atomically,
    write_or_keep,
)
from docbench.results.header import result_header
from docbench.results.schema import validate

__all__ = [
    "RESULT_FORMAT",
    "ResultsUnwritable",
    "check_writable",
    "cluster_label",
    "environment",
    "is_complete",
    "latest_run",
    "load_results",
    "load_typed",
    "machine_label",
    "new_result_path",
    "now_iso",
    "read_result",
    "reserved",
    "result_header",
    "result_model",
    "result_models",
    "run_name",
    "scrub",
    "today",
    "upgrade_copy",
    "validate",
    "write_atomically",
    "write_or_keep",
]
