"""Every representation variant (role "representation": another way for an engine to hold the
documents, e.g. PostgreSQL's json text or jsonb with generated columns, DuckDB's VARIANT)
against its real engine: every real event loaded, 6,000 generated documents with their hard
documents (a refusal only of a hard document), the five answers equal the oracle's, the plan
uses the variant's index, and the result labels say what the representation is."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from analytics_suite import non_empty_lines, real_files_of, work_dir
from conftest import SQL_SERVER, broad_systems

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


def gather_documents(real_data_dir: Path, generated_6k: Path, target: Path) -> tuple[list[Path], dict]:
    """The real events and the generated 6k (hard documents included) in one directory; the
    generated files' hard documents by (file name, line)."""
    for path in real_files_of(real_data_dir) + dataset_files(generated_6k):
        shutil.copy(path, target / path.name)
    manifest = read_manifest(generated_6k)
    assert manifest is not None and manifest.hard_documents
    hard = {(h.file, h.line): h.kind for h in manifest.hard_documents}
    return dataset_files(target), hard


@contextlib.contextmanager
def loaded_variant(system_name: str, variant_name: str, url: str | None, documents: tuple[list[Path], dict]):
    """The variant's engine started, its table created and loaded with the documents (only
    hard ones may be refused): (the system, the load report)."""
    files, hard = documents
    base = work_dir(f"{system_name}-{variant_name}")
    engine = open_engine(system_name, base / "work", url)
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


@pytest.fixture(scope="module")
def documents(real_data_dir: Path, generated_6k: Path, tmp_path_factory: pytest.TempPathFactory):
    return gather_documents(real_data_dir, generated_6k, tmp_path_factory.mktemp("representations"))


@pytest.fixture(scope="module")
def loaded(request: pytest.FixtureRequest, server_url, documents):
    system_name, variant_name = request.param
    with loaded_variant(system_name, variant_name, server_url(system_name), documents) as system_and_report:
        yield system_and_report


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


def labels_beyond_defaults(system_name: str, variant_name: str, tmp_path: Path) -> dict:
    """The representation labels' settings_beyond_defaults of a system's analytics variant
    (each system's own: test_labels_name_the_settings_beyond_the_engine_defaults in its
    tests/test_system_<name>.py)."""
    adapter_type = adapter_class(system_name, "analytics")
    system = adapter_type(
        open_engine(system_name, tmp_path / "work"), adapter_type.variant_named(variant_name)
    )
    return system.representation_labels()["settings_beyond_defaults"]


def test_the_report_lists_each_run_representation():
    from result_samples import analytics_result, header

    from docbench.results.files import result_model
    from docbench.workloads.analytics.report import lossless_by_variant, representation_table

    labels = {"name": "json", "retains_structure": True, "schema_by_hand": False}
    labels["settings_beyond_defaults"] = {}
    runs = [
        analytics_result(SQL_SERVER.system, "json", representation=labels),
        analytics_result(
            SQL_SERVER.system,
            "lz4",
            representation={**labels, "name": "jsonb", "settings_beyond_defaults": {"compression": "lz4"}},
        ),
    ]
    fidelity = [
        result_model(
            header(
                "fidelity",
                SQL_SERVER.system,
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
    assert cells["system"] == [f"{SQL_SERVER.system}/json", f"{SQL_SERVER.system}/lz4"]
    assert cells["representation"] == ["json", "jsonb"]
    assert cells["lossless"] == ["yes", "- (run fidelity)"]
    assert cells["settings beyond defaults"] == ["-", "compression=lz4"]
    assert representation_table([analytics_result("x", "y")]) is None  # results without labels
