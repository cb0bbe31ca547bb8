"""The portable queries' oracle over a dataset, and the check of an engine's answer against it.

The oracle reads every line of the dataset once for the whole query set (no database), in
the reference semantics of :mod:`docbench.queries.semantics`. Its answers are cached beside
the analytics answers, bound to the data files' SHA-256 and the query file's SHA-256: a
changed file or query set is evaluated again, never judged by an old answer.
"""

from __future__ import annotations

import contextlib
import decimal
import gc
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import orjson

from docbench.dataset.reader import compression_of, iter_line_batches, split_ranges
from docbench.queries.semantics import Evaluation, is_number, order_key, value_key
from docbench.queries.spec import Query, QuerySet

ORACLE_VERSION = 1


class SetAnswers(TypedDict):
    """A query set's answers: the documents read, and every query's whole answer (its rows,
    ordered, before its limit) by the query's name."""

    documents: int
    queries: dict[str, list[list[Any]]]


def parse_document(line: bytes) -> Any:
    """A line's JSON object, or None when the line is not one (not a document). Integers
    beyond 64 bits, which orjson refuses, are read by the standard library."""
    if not line.strip():
        return None
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            return None
    return value if isinstance(value, dict) else None


Piece = tuple[Path, int, int | None]  # a file, or a byte range of an uncompressed one


def iter_piece(piece: Piece) -> Iterator[Any]:
    path, start, end = piece
    for batch in iter_line_batches(path, start=start, end=end):
        for line in batch:
            document = parse_document(line)
            if document is not None:
                yield document


def evaluate_piece(query_set: QuerySet, piece: Piece) -> tuple[int, list[Evaluation]]:
    """One piece's partial answers (a worker process's task)."""
    evaluations = [Evaluation(q) for q in query_set.queries]
    return _feed(evaluations, iter_piece(piece)), evaluations


def _feed(evaluations: list[Evaluation], documents: Iterator[Any]) -> int:
    """Every document to every evaluation; how many there were."""
    count = 0
    for count, document in enumerate(documents, start=1):  # noqa: B007 - the last count is the result
        for evaluation in evaluations:
            evaluation.add(document)
    return count


def pieces_of(files: list[Path], jobs: int) -> list[Piece]:
    """The files, an uncompressed one cut into about ``jobs`` ranges at line starts."""
    pieces: list[Piece] = []
    for path in files:
        if jobs > 1 and compression_of(path) == "none":
            pieces.extend((path, start, end) for start, end in split_ranges(path, jobs))
        else:
            pieces.append((path, 0, None))
    return pieces


def iter_documents(files: list[Path], skip: dict[str, set[int]] | None = None) -> Iterator[Any]:
    """Every document of the files in order, leaving out the (file, line) pairs in ``skip``."""
    for path in files:
        skipped = (skip or {}).get(path.name, set())
        number = 0
        for batch in iter_line_batches(path):
            for line in batch:
                number += 1
                if skipped and number in skipped:
                    continue
                document = parse_document(line)
                if document is not None:
                    yield document


def evaluate_set(
    query_set: QuerySet, files: list[Path], skip: dict[str, set[int]] | None = None, jobs: int = 1
) -> SetAnswers:
    """Every query's whole answer (ordered, before its limit), in one pass over the data,
    leaving out the (file, line) pairs in ``skip``: natively on ``jobs`` threads, else on
    ``jobs`` processes (the pieces' partial answers merged in order) unless lines are skipped."""
    with _no_cyclic_collection():
        native = _evaluate_native(query_set, files, jobs, skip)
        if native is not None:
            documents, evaluations = native
        elif skip or jobs <= 1:
            evaluations = [Evaluation(q) for q in query_set.queries]
            documents = _feed(evaluations, iter_documents(files, skip))
        else:
            documents, evaluations = _evaluate_parallel(query_set, pieces_of(files, jobs), jobs)
        return {
            "documents": documents,
            "queries": {e.query.name: e.all_rows() for e in evaluations},
        }


@contextlib.contextmanager
def _no_cyclic_collection() -> Iterator[None]:
    """The answers' groups (hundreds of thousands for a group by a high-cardinality path) are
    built and sorted at once, with no cycle among them: the cyclic collector would walk the
    growing heap again and again (measured: a fifth of the whole evaluation at 10m)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _evaluate_native(
    query_set: QuerySet, files: list[Path], jobs: int, skip: dict[str, set[int]] | None = None
) -> tuple[int, list[Evaluation]] | None:
    """One native scan of every file on ``jobs`` threads, the lines it hands back evaluated
    here; None when it cannot take the set or a file (then Python evaluates everything)."""
    from docbench.queries import native

    if native.binary() is None:
        return None
    try:
        plan = native.plan_file(query_set)
    except native.NativeUnavailable:
        return None
    try:
        documents, evaluations, handed_back = native.evaluate_files(query_set, files, jobs, plan, skip)
    except native.NativeUnavailable:
        return None
    finally:
        plan.unlink(missing_ok=True)
    if handed_back:
        documents += _feed(evaluations, (d for d in map(parse_document, handed_back) if d is not None))
    return documents, evaluations


def _evaluate_parallel(query_set: QuerySet, pieces: list[Piece], jobs: int) -> tuple[int, list[Evaluation]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # forkserver: fresh workers that import docbench once, never a fork of a threaded parent
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=min(jobs, len(pieces)), mp_context=context) as pool:
        parts = list(pool.map(evaluate_piece, [query_set] * len(pieces), pieces))
    documents, evaluations = parts[0]
    for count, later in parts[1:]:
        documents += count
        for evaluation, part in zip(evaluations, later, strict=True):
            evaluation.merge(part)
    return documents, evaluations


def answers_for(
    query_set: QuerySet,
    files: list[Path],
    file_hashes: list[tuple[str, str]],
    cache_dir: Path,
    jobs: int = 1,
) -> SetAnswers:
    """The set's answers, from the cache when it holds them for exactly these files and this
    query file, else evaluated and cached."""
    identity = hashlib.sha256(
        repr((ORACLE_VERSION, query_set.sha256, sorted(file_hashes))).encode()
    ).hexdigest()
    cached = cache_dir / "portable" / f"{query_set.name}-{identity[:16]}.json"
    if cached.exists():
        try:
            stored = orjson.loads(cached.read_bytes())
            if stored.get("identity") == identity:
                found = dict(stored["answers"])  # TypeError: no mapping, evaluated again
                return SetAnswers(documents=found["documents"], queries=found["queries"])
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
            pass  # evaluated again below
    answers = evaluate_set(query_set, files, jobs=jobs)
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(orjson.dumps({"identity": identity, "answers": answers}, default=_jsonable))
    os.replace(partial, cached)
    return answers


def _jsonable(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    raise TypeError(type(value).__name__)


# ----- checking an engine's answer ----------------------------------------------------------


@dataclass
class PortableCheck:
    status: str  # correct | wrong | error | not_expressible
    detail: str = ""
    rows: int | None = None
    # The expected answer has no row, or only zero counts: a correct answer proves little.
    empty: bool = False


def normal(value: Any) -> Any:
    """A value as the check compares it: Decimal and floats that hold an integer as int;
    other floats to 9 significant digits (engines sum in doubles, the oracle exactly)."""
    if isinstance(value, decimal.Decimal):
        value = int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bool) or not is_number(value):
        if isinstance(value, list):
            return [normal(v) for v in value]
        if isinstance(value, dict):
            return {k: normal(v) for k, v in value.items()}
        return value
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
        return float(f"{value:.9g}")
    return value if abs(value) < 2**53 else float(f"{value:.9g}")


def is_empty_answer(query: Query, expected: list[list[Any]]) -> bool:
    if not expected:
        return True
    if query.global_aggregate:
        return all(v in (0, None) for v in expected[0])
    return False


def check_rows(query: Query, got: list[list[Any]], expected_all: list[list[Any]]) -> PortableCheck:
    """Whether the engine's rows are the query's answer. With order_by and a limit, rows that
    tie with the last one kept may be any of the tied ones; without order_by the rows are
    compared as a multiset (with a limit: any of the answer's rows, as many as it allows)."""
    got = [[normal(v) for v in row] for row in got]
    expected_all = [[normal(v) for v in row] for row in expected_all]
    empty = is_empty_answer(query, expected_all)
    wanted = min(len(expected_all), query.limit) if query.limit else len(expected_all)
    if len(got) != wanted:
        return PortableCheck("wrong", f"{len(got)} rows, expected {wanted}", len(got), empty)
    if any(len(row) != len(query.columns) for row in got):
        return PortableCheck(
            "wrong", f"rows of {len(got[0])} columns, expected {len(query.columns)}", len(got), empty
        )
    pool = _multiset(expected_all)
    if not query.order_by:
        if wanted == len(expected_all):
            missing = _difference(_multiset(expected_all), _multiset(got))
            extra = _difference(_multiset(got), _multiset(expected_all))
            if missing or extra:
                return PortableCheck("wrong", _mismatch(extra, missing), len(got), empty)
        else:
            extra = _difference(_multiset(got), pool)
            if extra:
                return PortableCheck("wrong", _mismatch(extra, {}), len(got), empty)
        return PortableCheck("correct", "", len(got), empty)
    keys = [order_key(query, row) for row in got]
    for index in range(1, len(keys)):
        if keys[index] < keys[index - 1]:
            return PortableCheck("wrong", f"row {index + 1} is out of order", len(got), empty)
    if not wanted:
        return PortableCheck("correct", "", 0, empty)
    boundary = order_key(query, expected_all[wanted - 1])
    required = _multiset([r for r in expected_all if order_key(query, r) < boundary])
    tied = _multiset([r for r in expected_all if order_key(query, r) == boundary])
    got_set = _multiset(got)
    missing = _difference(required, got_set)
    extra = _difference(_difference(got_set, required), tied)
    if missing or extra:
        return PortableCheck("wrong", _mismatch(extra, missing), len(got), empty)
    return PortableCheck("correct", "", len(got), empty)


def _multiset(rows: list[list[Any]]) -> dict[Any, list[Any]]:
    counts: dict[Any, list[Any]] = {}
    for row in rows:
        key = tuple(value_key(v) for v in row)
        counts.setdefault(key, [row, 0])[1] += 1
    return counts


def _difference(a: dict[Any, list[Any]], b: dict[Any, list[Any]]) -> dict[Any, list[Any]]:
    left = {}
    for key, (row, count) in a.items():
        remaining = count - (b[key][1] if key in b else 0)
        if remaining > 0:
            left[key] = [row, remaining]
    return left


def _mismatch(extra: dict[Any, list[Any]], missing: dict[Any, list[Any]]) -> str:
    def sample(rows: dict[Any, list[Any]]) -> str:
        shown = [json.dumps(row, default=str)[:120] for row, _ in list(rows.values())[:2]]
        more = sum(c for _, c in rows.values()) - len(shown)
        return "; ".join(shown) + (f" (+{more} more)" if more > 0 else "")

    parts = []
    if extra:
        parts.append(f"unexpected {sample(extra)}")
    if missing:
        parts.append(f"missing {sample(missing)}")
    return "; ".join(parts)
