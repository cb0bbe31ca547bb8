"""Portable queries (docs/queries.md): the spec's errors, the reference semantics, every
engine with a compiler running every operator on documents whose paths vary in type, are
missing, null or arrays, checked against the oracle; `docbench profile`; and the runs that
must not call nothing a result (documents that are not Bluesky events, empty answers)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from analytics_suite import query_session
from click.testing import CliRunner

from docbench.dataset.reader import dataset_files
from docbench.queries.oracle import check_rows, evaluate_set
from docbench.queries.profile import profile_files, propose_queries
from docbench.queries.spec import QuerySpecError, load_query_set, parse_query_set
from docbench.systems import adapter_class, adapter_variants, engine_class
from tests.conftest import broad_systems

FIXTURES = Path(__file__).parent / "fixtures" / "portable"
DATA = FIXTURES / "data"
OPERATORS = FIXTURES / "operators.yaml"


def answers() -> dict[str, list[list[object]]]:
    return evaluate_set(load_query_set(OPERATORS), dataset_files(DATA))["queries"]


# ----- the spec -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "queries:\n  - name: q\n    where: {path: a, eqq: 1}\n    aggregates: [{fn: count}]\n",
            "line 3: query 'q': unknown operator 'eqq'",
        ),
        (
            "queries:\n  - name: q\n    aggregates: [{fn: median, path: a}]\n",
            "line 3: query 'q': unknown aggregate 'median'",
        ),
        (
            "queries:\n  - name: q\n    select: [a]\n  - name: q\n    select: [b]\n",
            "line 4: query name 'q' already used on line 2",
        ),
        (
            "queries:\n  - name: q\n    group_by: [a]\n",
            "line 2: query 'q': a query needs 'aggregates' or 'select'",
        ),
        (
            "queries:\n  - name: q\n    select: [a]\n    order_by: [b]\n",
            "line 4: query 'q': order_by names 'b', not a column",
        ),
        (
            "queries:\n  - name: q\n    where: {path: a, gt: true}\n    select: [a]\n",
            "line 3: query 'q': 'gt' compares numbers or strings",
        ),
        ("queries: [\n", "not YAML or JSON"),
        ("name: x\n", "'queries' is missing"),
    ],
)
def test_spec_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(QuerySpecError) as error:
        parse_query_set(text)
    assert message in str(error.value)


def test_yaml_no_stays_a_string() -> None:
    query_set = parse_query_set(
        "queries:\n  - name: q\n    where: {path: country, eq: NO}\n    select: [a]\n"
    )
    assert query_set.queries[0].where.value == "NO"  # type: ignore[union-attr]


# ----- the reference semantics --------------------------------------------------------------


def test_reference_semantics_on_known_documents() -> None:
    found = answers()
    assert found["eq_number"] == [["a1"]]  # "5" is a string, not the number 5
    assert found["eq_string"] == [["a2"]]
    assert found["eq_null"] == [["a4"]]  # a missing n (a7 has true, b1 a number) is not null
    assert found["exists"] == [["a1"], ["a2"], ["a5"], ["a6"], ["a8"], ["a9"]]  # age: null exists
    assert found["array_contains"] == [["a1"], ["a5"], ["a6"]]  # not [["x"]], not "x" itself
    assert found["deep_path"] == [["a5", 3]]  # deep.a is an array in a7: not followed
    assert found["aggregate_over_nothing"] == [[0, None]]
    assert found["aggregates"][0][1] == 3  # ages 31, 31.0, 40, 25: 31 and 31.0 are one value
    assert ["y", 4] in found["unnest_values"] and ["x", 3] in found["unnest_values"]
    assert [None, 3] in found["unnest_values"] and [True, 1] in found["unnest_values"]
    assert found["bucket_iso"][0] == [1699920000, 2]  # Z and +00:00 the same day


def test_check_takes_any_of_the_tied_rows() -> None:
    query = load_query_set(OPERATORS).named("top_limit_ties")
    every = answers()["top_limit_ties"]
    assert every[:2] == [["post", 5], ["like", 2]]
    tied = [row for row in every if row[1] == every[2][1]]
    assert len(tied) == 3  # Like, repost and the documents without a kind: 1 each
    for row in tied:
        assert check_rows(query, [every[0], every[1], row], every).status == "correct"
    assert check_rows(query, [every[1], every[0], every[2]], every).status == "wrong"  # out of order
    assert check_rows(query, [every[0], ["like", 3], every[2]], every).status == "wrong"


# ----- every engine with a compiler ---------------------------------------------------------


def portable_systems() -> list[str]:
    return [name for name in broad_systems() if adapter_class(name, "portable") is not None]


def embedded_systems() -> list[str]:
    """Systems with a compiler that run in-process (no server to start): the quick tests'."""
    return [name for name in portable_systems() if engine_class(name).embedded]


def exact_variant(name: str) -> str | None:
    """The system's first analytics variant whose representation keeps JSON's values."""
    engine = engine_class(name)(Path("/nonexistent"))
    for variant in adapter_variants(name, "analytics"):
        compiler = adapter_class(name, "portable")(engine, variant)
        if compiler.exact() is None and not variant.own_server_only:
            return variant.name
    return None


def smoke_embedded_systems() -> list[str]:
    """Another version of an embedded system (no server to start): its compiler may differ
    in the table it reads (duckdb113 reads JSONBench's), so it runs the operators too."""
    from docbench.systems import REGISTERED

    return [
        name
        for name in REGISTERED
        if engine_class(name).smoke_tests_only
        and engine_class(name).embedded
        and adapter_class(name, "portable") is not None
    ]


def run_set_in_one_session(system, query_set, refused: dict[str, set[int]]) -> dict:  # type: ignore[no-untyped-def]
    """The set's record as the runner makes it (run_portable_queries: compile, run, check),
    each compiled query run once in one session opened as the query worker opens it (the
    runner's worker per query, cold and hot, is the runner tests' concern: here each engine's
    dialect is, and a worker per query made this test minutes long on Spark)."""
    import time

    from docbench.workloads.analytics.portable import run_portable_queries
    from docbench.workloads.query_worker import QueryRun, TryResult

    # the answers over what the system took, as the runner's (portable_expected)
    expected = evaluate_set(query_set, dataset_files(DATA), skip=refused or None)["queries"]
    with query_session(system, timeout=60) as session:

        def run_text(text: str) -> QueryRun:
            started = time.monotonic()
            try:
                rows = [list(row) for row in session.execute(0, text).rows]
            except Exception as error:  # the runner records a failing query and goes on
                return QueryRun(tries=[TryResult(error=f"{type(error).__name__}: {error}")])
            return QueryRun(tries=[TryResult(seconds=time.monotonic() - started, rows=rows)])

        return run_portable_queries(system, query_set, dict(expected), run_text)


@pytest.mark.parametrize("name", portable_systems() + smoke_embedded_systems())
def test_every_operator_on_every_engine(name: str, tmp_path: Path, server_url) -> None:  # type: ignore[no-untyped-def]
    """On a representation that keeps JSON's values, every answer is the reference's (a
    dialect may leave one query not expressible, saying why). An engine whose values differ
    (a mapping's types, flattened arrays) runs the set too: no query fails to run, and what
    differs is a wrong answer or a reason, never a silent pass."""
    from docbench.systems import open_adapter
    from docbench.workloads.load import load_files

    exact = exact_variant(name)
    variant = exact or adapter_variants(name, "analytics")[0].name
    system = open_adapter(name, "analytics", tmp_path / "db", variant, url=server_url(name))
    system.engine.start()
    try:
        system.create()
        report = load_files(system.loader(), dataset_files(DATA), 1_000)
        loaded = system.count()
        record = run_set_in_one_session(system, load_query_set(OPERATORS), report.refused_lines)
    finally:
        system.release()
        system.engine.stop()
    off = {q["name"]: (q["status"], q.get("detail")) for q in record["queries"] if q["status"] != "correct"}
    if exact:
        assert all(status == "not_expressible" for status, _ in off.values()), off
        assert len(off) <= 1, off
        assert loaded == 10  # line 10 of 11 is no JSON object
        assert record["differs_from_json"] is None
    else:
        assert record["differs_from_json"]
        assert not [q for q, (status, _) in off.items() if status == "error"], off
        assert record["correct"] >= 8, off


def test_json_type_differences_are_wrong_answers_not_hidden(tmp_path: Path) -> None:
    """A representation that is not exact is judged as it is: its differences are wrong
    answers in the result, never counted as correct."""
    from docbench.workloads.analytics.runner import RunRequest, run_analytics

    inexact = [
        (name, v.name)
        for name in portable_systems()
        if engine_class(name).embedded
        for v in adapter_variants(name, "analytics")
        if adapter_class(name, "portable")(engine_class(name)(tmp_path / "x"), v).exact() is not None
    ]
    if not inexact:
        pytest.skip("every embedded representation is exact")
    name, variant = inexact[0]
    request = RunRequest(
        system_names=[name],
        data_dir=DATA,
        results_dir=tmp_path,
        tries=1,
        variants=[variant],
        quiet=True,
        query_set=load_query_set(OPERATORS),
    )
    run_analytics(request)
    (result,) = [json.loads(p.read_text()) for p in tmp_path.glob("analytics.*.json")]
    statuses = {q["name"]: q["status"] for q in result["portable"]["queries"]}
    assert statuses["eq_null"] == "wrong"  # no path holds null there
    assert statuses["eq_number"] == "correct"


# ----- runs that must not call nothing a result ---------------------------------------------


def test_documents_that_are_not_bluesky_get_the_queries_profile_proposes(tmp_path: Path) -> None:
    """No --queries on documents that are not Bluesky events: Q1-Q5 (which would match
    nothing, "5/5 correct" on empty answers) are not run; the profile's proposal is, written
    beside the results to edit."""
    from docbench.cli import main

    outcome = CliRunner().invoke(
        main,
        [
            "run",
            "--systems",
            embedded_systems()[-1],
            "--data",
            str(DATA),
            "--tries",
            "1",
            "--results",
            str(tmp_path),
        ],
    )
    said = " ".join(outcome.output.split())  # the console wraps long lines
    assert "not Bluesky events" in said
    proposal = tmp_path / "data.proposed-queries.yaml"
    assert proposal.exists() and str(proposal) in outcome.output.replace("\n", "")
    proposed = load_query_set(proposal)
    for path in tmp_path.glob("analytics.*.json"):
        result = json.loads(path.read_text())
        assert result["result"] == [] and "answers" not in result
        assert result["portable"]["set"] == proposed.name
        assert result["portable"]["correct"] == len(proposed.queries)
    assert "5/5 correct" not in outcome.output


def test_all_empty_answers_are_said_loudly(tmp_path: Path) -> None:
    from docbench.cli import main

    queries = tmp_path / "nothing.yaml"
    queries.write_text(
        "queries:\n  - name: none\n    where: {path: kind, eq: nothing}\n    aggregates: [{fn: count}]\n"
        "  - name: none_grouped\n    where: {path: nope, exists: true}\n    group_by: [kind]\n"
        "    aggregates: [{fn: count}]\n"
    )
    results = tmp_path / "results"
    outcome = CliRunner().invoke(
        main,
        [
            "run",
            "--systems",
            ",".join(embedded_systems()[-2:]),
            "--data",
            str(DATA),
            "--queries",
            str(queries),
            "--tries",
            "2",
            "--results",
            str(results),
        ],
    )
    said = " ".join(outcome.output.split())  # the console wraps long lines
    assert "every answer is empty" in said
    assert "EVERY ANSWER IS EMPTY" in said and "faster than" not in said


def test_a_bad_query_file_is_refused_with_its_line(tmp_path: Path) -> None:
    from docbench.cli import main

    queries = tmp_path / "bad.yaml"
    queries.write_text("queries:\n  - name: q\n    where: {path: a, eqq: 1}\n    select: [a]\n")
    outcome = CliRunner().invoke(
        main, ["run", "--systems", embedded_systems()[-1], "--data", str(DATA), "--queries", str(queries)]
    )
    assert outcome.exit_code == 2
    said = " ".join(outcome.output.split())
    assert f"{queries}:line 3: query 'q': unknown operator 'eqq'" in said.replace("│", "").replace("  ", " ")


# ----- the profile --------------------------------------------------------------------------


def test_profile_of_known_documents_proposes_queries_with_answers(tmp_path: Path) -> None:
    from docbench.cli import main

    found = profile_files(dataset_files(DATA), sample=1000)
    rows = {r["path"]: r for r in found.rows()}
    assert found.documents == 10 and not found.sampled
    assert rows["n"]["types"] == {"number": 0.7, "string": 0.1, "null": 0.1, "boolean": 0.1}
    assert rows["tags"]["array"] and rows["user.age"]["present"] == 0.6
    assert rows["ts"]["time"] == "epoch_ms" and rows["when"]["time"] == "iso8601"
    out = tmp_path / "proposed.yaml"
    outcome = CliRunner().invoke(main, ["profile", str(DATA), "--out", str(out)])
    assert outcome.exit_code == 0, outcome.output
    proposed = load_query_set(out)
    names = [q.name for q in proposed.queries]
    assert "point_lookup" in names and any(n.startswith("per_hour_") for n in names)
    assert any(q.unnest for q in proposed.queries)
    every = evaluate_set(proposed, dataset_files(DATA))["queries"]
    assert all(every[name] for name in names)
    assert propose_queries(found, "x")["queries"] == [
        {k: v for k, v in q.items()} for q in propose_queries(found, "x")["queries"]
    ]


def test_a_query_set_from_concurrent_clients(tmp_path: Path) -> None:
    """--clients runs the set's compiled queries (number 0, the compiled text) from many
    clients, each answer checked by the portable check: none wrong on an exact engine."""
    from docbench.workloads.analytics.concurrency import ConcurrencyRequest
    from docbench.workloads.analytics.runner import RunRequest, run_analytics

    request = RunRequest(
        system_names=[embedded_systems()[-1]],
        variants=[exact_variant(embedded_systems()[-1]) or ""],
        representations=True,
        data_dir=DATA,
        results_dir=tmp_path,
        tries=1,
        quiet=True,
        query_set=load_query_set(OPERATORS),
        concurrency=ConcurrencyRequest(clients=[2], duration_s=1.0, warmup_s=0.2, progress=False),
    )
    run_analytics(request)
    result = json.loads(sorted(tmp_path.glob("analytics.*.json"))[0].read_text())
    record = result["concurrency"]
    assert record["queries"] == [q.name for q in load_query_set(OPERATORS).queries]
    (level,) = record["levels"]
    assert level["outcomes"]["ok"] > 0 and level["outcomes"]["wrong"] == 0, level
    assert {q["query"] for q in level["per_query"]} == set(range(1, len(record["queries"]) + 1))
    (ceiling,) = record["ceiling"]
    assert ceiling["outcomes"]["wrong"] == 0  # the echo's rows pass the same check


def test_the_oracle_on_two_processes_gives_the_same_answers(real_data_dir: Path) -> None:
    """Pieces (files, byte ranges of a file) evaluated apart and merged in order are the
    one-pass answers: the operators set on its documents, Q1-Q5 in the spec on real events."""
    from docbench.queries.spec import shipped_query_set

    jsonbench = shipped_query_set("jsonbench")
    assert jsonbench is not None
    for query_set, data in ((load_query_set(OPERATORS), DATA), (jsonbench, real_data_dir)):
        files = dataset_files(data)
        assert evaluate_set(query_set, files, jobs=2) == evaluate_set(query_set, files)


def test_a_shape_preset_profiled_and_queried(tmp_path: Path) -> None:
    """`docbench generate --shape` writes another shape's documents; `docbench profile`
    proposes queries for them that the oracle answers (not empty) and an engine answers
    the same."""
    from docbench.cli import main

    data = tmp_path / "logs"
    runner = CliRunner()
    made = runner.invoke(main, ["generate", "--shape", "logs", "--docs", "2000", "--out", str(data)])
    assert made.exit_code == 0, made.output
    assert [p.name for p in dataset_files(data)] == ["file_0001.json"]  # not its summary
    proposed = tmp_path / "logs.yaml"
    assert runner.invoke(main, ["profile", str(data), "--out", str(proposed)]).exit_code == 0
    query_set = load_query_set(proposed)
    assert len(query_set.queries) >= 4
    every = evaluate_set(query_set, dataset_files(data))["queries"]
    assert all(every[q.name] for q in query_set.queries)
    results = tmp_path / "results"
    name = embedded_systems()[-1]
    outcome = runner.invoke(
        main,
        [
            "run",
            "--systems",
            name,
            "--variants",
            exact_variant(name) or "",
            "--representations",
            "--data",
            str(data),
            "--queries",
            str(proposed),
            "--tries",
            "1",
            "--results",
            str(results),
        ],
    )
    assert outcome.exit_code == 0, outcome.output
    (result,) = [json.loads(p.read_text()) for p in results.glob("analytics.*.json")]
    assert result["portable"]["correct"] == len(query_set.queries)


def test_the_native_scan_gives_the_python_answers(
    real_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docbench-scan --portable (Rust) and the Python reference agree on every query of the
    shipped Q1-Q5 and the real collections' kinds of documents (the real events hold lines it
    hands back: lone surrogates, integers beyond 64 bits, deep nesting)."""
    from docbench.queries import native
    from docbench.queries.spec import shipped_query_set

    if native.binary() is None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("docbench-scan is not built (make native)")
    jsonbench = shipped_query_set("jsonbench")
    assert jsonbench is not None
    sets = [
        (jsonbench, real_data_dir),
        (
            load_query_set(OPERATORS).__class__(
                name="no-iso",
                queries=tuple(
                    q
                    for q in load_query_set(OPERATORS).queries
                    if not any(k.time_format == "iso8601" for k in q.group_by)
                ),
            ),
            DATA,
        ),
    ]
    for query_set, data in sets:
        files = dataset_files(data)
        # documents an engine refused are left out by line number (1-based, per file)
        skip = {files[0].name: {1, 2, 7}}
        monkeypatch.setenv("DOCBENCH_ORACLE_NATIVE", "0")
        python = evaluate_set(query_set, files, jobs=2)
        python_skipping = evaluate_set(query_set, files, skip=skip, jobs=2)
        monkeypatch.setenv("DOCBENCH_ORACLE_NATIVE", "1")
        assert native.binary() is not None
        assert evaluate_set(query_set, files, jobs=2) == python
        assert evaluate_set(query_set, files, skip=skip, jobs=2) == python_skipping
        assert python_skipping["documents"] < python["documents"]


def test_the_jsonbench_set_runs_beside_the_hand_written_queries_on_one_load(
    real_data_dir: Path, tmp_path: Path
) -> None:
    """On Bluesky events, `--queries jsonbench` runs the hand-written Q1-Q5 and the compiled
    ones on the same load: one result holds both, each answer checked."""
    from docbench.cli import main

    data = tmp_path / "events"
    data.mkdir()
    events = real_data_dir / "jsonbench_file_0001_first1000.jsonl"
    (data / "file_0001.json").write_bytes(events.read_bytes())
    results = tmp_path / "results"
    name = embedded_systems()[-1]
    outcome = CliRunner().invoke(
        main,
        ["run", "--systems", name, "--variants", exact_variant(name) or "", "--data", str(data)]
        + ["--queries", "jsonbench", "--tries", "2", "--results", str(results)],
    )
    assert outcome.exit_code == 0, outcome.output
    (result,) = [json.loads(p.read_text()) for p in results.glob("analytics.*.json")]
    assert [a["query"] for a in result["answers"]] == [1, 2, 3, 4, 5]
    assert all(a["status"] == "ok" for a in result["answers"]), result["answers"]
    assert len(result["result"]) == 5 and all(len(row) == 2 for row in result["result"])
    assert [q["status"] for q in result["portable"]["queries"]] == ["correct"] * 5
    assert "Q1-Q5 hand-written 5/5 correct" in " ".join(outcome.output.split())
