"""The portable oracle's native scan (``docbench-scan --portable``, Rust:
``native/docbench-gen/src/portable.rs``): the partial answers of a query set over the lines it
can judge exactly, turned into the Python evaluations they would have been; the lines it hands
back are evaluated here. The semantics stay in :mod:`docbench.queries.semantics` (tests compare
both); without the binary, or with ``DOCBENCH_ORACLE_NATIVE=0``, or for a set with an ISO 8601
bucket (whose text Python's parser reads), everything is evaluated in Python.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import orjson

from docbench.core.jsontypes import (
    JsonArray,
    JsonObject,
    JsonValue,
    as_array,
    as_float,
    as_int,
    as_object,
    as_str,
)
from docbench.dataset.native_scan import DISABLE_ENV, find_native
from docbench.dataset.reader import compression_of
from docbench.queries.semantics import Evaluation, _Accumulator, value_key
from docbench.queries.spec import (
    BUCKET_CYCLES,
    BUCKET_UNITS,
    EPOCH_DIVISORS,
    Combined,
    Filter,
    Path_,
    Query,
    QuerySet,
)

COMPRESSIONS = {"none": "none", "gzip": "gzip", "zstd": "zstd"}


class NativeUnavailable(RuntimeError):
    """The native scan cannot take this set or file (the caller evaluates in Python)."""


def binary() -> Path | None:
    if os.environ.get(DISABLE_ENV) == "0":
        return None
    return find_native("docbench-scan")


def plan_of(query_set: QuerySet) -> JsonObject:
    """The set as the native scan reads it; NativeUnavailable for what it does not evaluate."""
    return {"queries": [_query(q) for q in query_set.queries]}


def _path(path: Path_) -> JsonObject:
    return {"keys": list(path.keys), "element": path.element}


def _filter(where: Filter) -> JsonObject:
    if isinstance(where, Combined):
        return {"op": where.op, "parts": [_filter(p) for p in where.parts]}
    value = list(where.value) if where.op == "in" else where.value
    return {"op": "cond", "path": _path(where.path), "test": where.op, "value": value}


def _query(query: Query) -> JsonObject:
    keys: JsonArray = []
    for key in query.group_by:
        entry: JsonObject = {"path": _path(key.path)}
        if key.unit is not None:
            if key.time_format == "iso8601":
                raise NativeUnavailable("an ISO 8601 bucket is read by Python's parser")
            entry.update(
                divisor=EPOCH_DIVISORS[str(key.time_format)],
                width=BUCKET_UNITS[key.unit],
                cycle=BUCKET_CYCLES.get(key.unit),
            )
        keys.append(entry)
    return {
        "where": _filter(query.where) if query.where is not None else None,
        "unnest": list(query.unnest.path.keys) if query.unnest else None,
        "group_by": keys,
        "aggregates": [{"fn": a.fn, "path": _path(a.path) if a.path else None} for a in query.aggregates],
        "select": [_path(p) for _, p in query.select],
    }


def _native_key(text: str) -> Any:
    """The native scan's distinct key as Python's ``value_key``."""
    tag, _, value = text.partition(":")
    if tag == "n":
        return ("n", int(value))
    if tag == "f":
        return ("n", float(value))
    if tag == "b":
        return ("b", value == "true")
    return ("s", value)


def _accumulator(fn: str, state: JsonObject, final: bool) -> _Accumulator:
    # the scan writes only what differs from an empty accumulator; built without __init__ (a
    # group by a high-cardinality path has hundreds of thousands of them)
    accumulator = _Accumulator.__new__(_Accumulator)
    accumulator.fn = fn
    accumulator.count = as_int(state.get("count", 0), "count")
    accumulator.total = _total(state.get("total"))
    accumulator.least, accumulator.most = state.get("least"), state.get("most")
    distinct = state.get("distinct")
    accumulator.distinct = (
        {_native_key(as_str(k, "distinct")) for k in as_array(distinct)} if distinct else set()
    )
    # final (no line handed back): a distinct count came as its count alone
    accumulator.distinct_count = (
        as_int(state.get("distinct_count", 0), "distinct_count") if final and fn == "count_distinct" else None
    )
    return accumulator


def _total(total: JsonValue) -> int | float:
    """A sum as the scan writes it: absent (0), ``{"int": "<digits>"}`` (exact at any size) or
    ``{"float": <number>}``."""
    if total is None:
        return 0
    total = as_object(total, "total")
    return (
        int(as_str(total["int"], "total.int")) if "int" in total else as_float(total["float"], "total.float")
    )


def evaluate_files(
    query_set: QuerySet,
    files: list[Path],
    threads: int,
    plan_file: Path,
    skip: dict[str, set[int]] | None = None,
) -> tuple[int, list[Evaluation], list[bytes]]:
    """The evaluations of every file, in order, from one native scan on ``threads`` threads
    (it merges its threads' states), and the lines it handed back; ``skip``: line numbers
    (1-based) per file name left out (the documents an engine refused)."""
    program = binary()
    if program is None:
        raise NativeUnavailable("no docbench-scan")
    command = [str(program), "--portable", str(plan_file), "--threads", str(max(1, threads))]
    if skip:
        lines = {str(i): sorted(skip.get(path.name, ())) for i, path in enumerate(files)}
        handle, name = tempfile.mkstemp(prefix="docbench-skip-", suffix=".json")
        with os.fdopen(handle, "w") as out:
            json.dump(lines, out)
        command += ["--skip", name]
    try:
        return _run(command, query_set, files)
    finally:
        if skip:
            Path(name).unlink(missing_ok=True)


def _evaluation(query: Query, found: JsonObject, final: bool) -> Evaluation:
    evaluation = Evaluation(query)
    evaluation.selected = [
        list(as_array(row, "selected row")) for row in as_array(found["selected"], "selected")
    ]
    for group in as_array(found["groups"], "groups"):
        keys, states = (as_array(part, "group") for part in as_array(group, "group"))
        slot = tuple(value_key(k) for k in keys)
        accumulators = [
            _accumulator(a.fn, as_object(s, "state"), final)
            for a, s in zip(query.aggregates, states, strict=True)
        ]
        evaluation.groups[slot] = (keys, accumulators)
    return evaluation


def _run(
    command: list[str], query_set: QuerySet, files: list[Path]
) -> tuple[int, list[Evaluation], list[bytes]]:
    for path in files:
        compression = COMPRESSIONS.get(compression_of(path))
        if compression is None:
            raise NativeUnavailable(f"{path.name}: a compression docbench-scan does not read")
        command += ["--file", compression, str(path)]
    proc = subprocess.run(command, capture_output=True)
    if proc.returncode != 0:
        raise NativeUnavailable(f"docbench-scan failed: {proc.stderr.decode(errors='replace')[-500:]}")
    header_end = proc.stdout.index(b"\n")
    header = as_object(orjson.loads(memoryview(proc.stdout)[:header_end]), "docbench-scan's header")
    final = as_int(header["handed_back"], "handed_back") == 0
    found = zip(query_set.queries, as_array(header["queries"], "queries"), strict=True)
    evaluations = [_evaluation(query, as_object(groups, "query"), final) for query, groups in found]
    handed_back = []
    at = header_end + 1
    for _ in range(as_int(header["handed_back"], "handed_back")):
        length = int.from_bytes(proc.stdout[at : at + 4], "little")
        handed_back.append(proc.stdout[at + 4 : at + 4 + length])
        at += 4 + length
    return as_int(header["documents"], "documents"), evaluations, handed_back


def plan_file(query_set: QuerySet) -> Path:
    """The plan written where the scan can read it (the caller removes it)."""
    plan = plan_of(query_set)
    handle, name = tempfile.mkstemp(prefix="docbench-portable-", suffix=".json")
    with os.fdopen(handle, "w") as out:
        json.dump(plan, out)
    return Path(name)
