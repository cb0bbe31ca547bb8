"""Every representation variant (role "representation": another way for an engine to hold the
documents, e.g. PostgreSQL's json text or jsonb with generated columns, DuckDB's VARIANT)
against its real engine: every real event loaded, 20,000 generated documents with their hard
documents (a refusal only of a hard document), the five answers equal the oracle's, the plan
uses the variant's index, and the result labels say what the representation is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from analytics_suite import non_empty_lines, real_files_of, work_dir
from conftest import broad_systems
from hard_lines import LINES

from docbench.core.answers import check_answer
from docbench.dataset.manifest import read_manifest
from docbench.dataset.oracle import compute_answers
from docbench.dataset.reader import dataset_files
from docbench.systems import adapter_class, adapter_variants, engine_class, open_engine
from docbench.workloads.analytics.expected import answers_without
from docbench.workloads.load import load_files


def representation_variants() -> list[tuple[str, str]]:
    """Of the systems the broad tests run (another version of one, e.g. postgresql18, shares
    its variants and has smoke tests)."""
    return [
        (system, variant.name)
        for system in broad_systems()
        if engine_class(system).availability().ok
        for variant in adapter_variants(system, "analytics")
        if variant.role == "representation"
    ]


@pytest.fixture(scope="module")
def documents(real_data_dir: Path, generated_20k: Path, tmp_path_factory: pytest.TempPathFactory):
    """The real events and the generated 20k (hard documents included) in one directory; the
    generated files' hard documents by (file name, line)."""
    target = tmp_path_factory.mktemp("representations")
    for path in real_files_of(real_data_dir) + dataset_files(generated_20k):
        shutil.copy(path, target / path.name)
    manifest = read_manifest(generated_20k)
    assert manifest is not None and manifest.hard_documents
    hard = {(h.file, h.line): h.kind for h in manifest.hard_documents}
    return dataset_files(target), hard


@pytest.fixture(scope="module")
def loaded(request: pytest.FixtureRequest, server_url, documents):
    system_name, variant_name = request.param
    files, hard = documents
    base = work_dir(f"{system_name}-{variant_name}")
    engine = open_engine(system_name, base / "work", server_url(system_name))
    adapter_type = adapter_class(system_name, "analytics")
    system = adapter_type(engine, adapter_type.variant_named(variant_name))
    try:
        engine.start()
        system.create()
        report = load_files(system.loader(), files, adapter_type.load_batch_size)
        refused = {(name, line) for name, lines in report.refused_lines.items() for line in lines}
        assert refused <= set(hard), report.refused  # only hard documents may be refused
        system.finish_load()
        yield system, report
    finally:
        system.release()
        engine.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("loaded", representation_variants(), indirect=True, ids="/".join)
def test_representation_answers_like_the_oracle(loaded, documents):
    loaded, report = loaded
    files, _hard = documents
    expected = answers_without(files, report.refused_lines, compute_answers(files))
    assert loaded.count() == len(non_empty_lines(files)) - report.refused_count == expected["documents"]
    labels = loaded.representation_labels()
    assert labels["name"] == loaded.variant.settings["representation"] != type(loaded).representation
    assert labels["schema_by_hand"] is bool(loaded.variant.settings.get("schema_by_hand"))
    assert loaded.storage().total
    spec: dict[str, Any] = json.loads(json.dumps({**loaded.session_spec(), "timeout": 30}))
    loaded.release()  # an embedded engine's worker opens the database itself
    session = type(loaded).open_session(spec)
    try:
        for number, text in enumerate(loaded.queries(), start=1):
            outcome = session.execute(number, text)
            check = check_answer(number, outcome.rows, expected, time_precision_us=loaded.time_precision_us)
            assert check.status == "ok", (number, check.detail, outcome.rows[:5])
            assert session.explain(number, text)
    finally:
        session.close()


@pytest.mark.parametrize(
    "loaded",
    [(name, variant) for name, variant in representation_variants() if name.startswith("postgresql")],
    indirect=True,
    ids="/".join,
)
def test_postgresql_representations_use_their_index(loaded):
    """On a table this small the planner rightly prefers a sequential scan: with it off, each
    filtering query must go through the variant's index (its expressions or its columns)."""
    loaded, _report = loaded
    no_seqscan = {"enable_seqscan": "off"}
    session = type(loaded).open_session({**loaded.session_spec(), "session_settings": no_seqscan})
    try:
        for number, text in enumerate(loaded.queries()[1:], start=2):
            assert loaded.check_plan(number, session.explain(number, text)) is None
    finally:
        session.close()


def test_postgresql_json_keeps_what_jsonb_refuses_or_rewrites(server_url, tmp_path: Path):
    """json is the text as it arrived: duplicate keys, key order, whitespace and numbers come
    back as they were sent. Its input accepts \\u0000, but its operators then fail on that
    document, so the table refuses it (as jsonb does, the default and jsonb_columns)."""
    if not engine_class("postgresql").availability().ok:
        pytest.skip("PostgreSQL not installed")
    lines = [LINES["nul_escape"], LINES["duplicate_keys"], b'{"b": 1,  "a": [1, 2.50]}']
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    refused_by = {}
    for variant_name in ("json", "jsonb_columns"):
        base = work_dir(f"postgresql-odd-{variant_name}")
        engine = open_engine("postgresql", base / "work", server_url("postgresql"))
        adapter_type = adapter_class("postgresql", "analytics")
        system = adapter_type(engine, adapter_type.variant_named(variant_name))
        try:
            engine.start()
            system.create()
            report = load_files(system.loader(), [path], adapter_type.load_batch_size)
            refused_by[variant_name] = report.refused_lines.get(path.name, set())
            if variant_name == "json":
                query = f"SELECT data::text FROM {system.table}"
                stored = engine.admin_connection().execute(query).fetchall()
                assert sorted(row[0].encode() for row in stored) == sorted(lines[1:])
        finally:
            system.release()
            engine.stop()
            shutil.rmtree(base, ignore_errors=True)
    assert refused_by == {"json": {1}, "jsonb_columns": {1}}


@pytest.mark.parametrize(
    ("system_name", "variant_name", "beyond"),
    [
        ("postgresql", "pglz", {}),
        ("postgresql", "lz4", {"compression": "lz4"}),
        (
            "clickhouse",
            "jsonbench",
            {
                "codec": "CODEC(ZSTD(1))",
                "max_parts_to_merge_at_once": 5,
                "server_settings": "background_merges_mutations_concurrency_ratio=1&compatibility=25.11",
                "table_settings": ", string_serialization_version = 'single_stream'",
            },
        ),
        ("clickhouse", "string", {"codec": "CODEC(ZSTD(1))", "max_parts_to_merge_at_once": 20}),
        ("duckdb", "variant", {}),
    ],
)
def test_labels_name_the_settings_beyond_the_engine_defaults(
    system_name, variant_name, beyond, tmp_path: Path
):
    adapter_type = adapter_class(system_name, "analytics")
    system = adapter_type(
        open_engine(system_name, tmp_path / "work"), adapter_type.variant_named(variant_name)
    )
    assert system.representation_labels()["settings_beyond_defaults"] == beyond


def test_the_report_lists_each_run_representation():
    from result_samples import analytics_result, header

    from docbench.results.files import result_model
    from docbench.workloads.analytics.report import lossless_by_variant, representation_table

    labels = {"name": "json", "retains_structure": True, "schema_by_hand": False}
    labels["settings_beyond_defaults"] = {}
    runs = [
        analytics_result("postgresql", "json", representation=labels),
        analytics_result(
            "postgresql",
            "lz4",
            representation={**labels, "name": "jsonb", "settings_beyond_defaults": {"compression": "lz4"}},
        ),
    ]
    fidelity = [
        result_model(
            header(
                "fidelity",
                "postgresql",
                "json",
                started_at=started,
                lossless=lossless,
                documents=[],
            )
        )
        for started, lossless in (
            ("2026-11-28T10:00:00Z", False),
            ("2026-11-28T11:00:00Z", True),  # the latest counts
        )
    ]
    table = representation_table(runs, lossless_by_variant(fidelity))
    assert table is not None
    cells = {column.header: list(column.cells) for column in table.columns}
    assert cells["system"] == ["postgresql/json", "postgresql/lz4"]
    assert cells["representation"] == ["json", "jsonb"]
    assert cells["lossless"] == ["yes", "- (run fidelity)"]
    assert cells["settings beyond defaults"] == ["-", "compression=lz4"]
    assert representation_table([analytics_result("x", "y")]) is None  # results without labels
