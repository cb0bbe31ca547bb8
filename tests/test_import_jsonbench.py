"""`docbench import-jsonbench`: JSONBench result files become docbench results marked as
imported (another machine, answers unchecked), shown beside local results."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

from docbench import results
from docbench.cli import main
from docbench.report.jsonbench_import import convert, import_files, scale_label
from docbench.results.files import result_model
from docbench.results.models import AnalyticsResult
from docbench.workloads.analytics import dashboard
from docbench.workloads.analytics.report import cold_time, hot_time, print_analytics_report

FIXTURES = Path(__file__).parent / "fixtures" / "jsonbench"


def test_import_command_writes_schema_valid_marked_results(tmp_path: Path) -> None:
    out = tmp_path / "imported"
    outcome = CliRunner().invoke(main, ["import-jsonbench", str(FIXTURES), "--out", str(out)])
    assert outcome.exit_code == 0, outcome.output
    assert "3 JSONBench results imported" in outcome.output
    written = sorted(p.name for p in out.iterdir())
    assert written == [
        "analytics.clickhouse.imported-m6i-8xlarge.10m.imported.json",
        "analytics.clickhouse.imported-m6i-8xlarge.1m.imported.json",
        "analytics.postgresql.imported-m6i-8xlarge.1m.imported.json",
    ]
    for path in out.iterdir():
        document = json.loads(path.read_text())
        results.validate(document)
        source = json.loads(Path(document["imported"]["source"]).read_text())
        assert document["imported"]["from"] == "JSONBench"
        assert "imported" in document["tags"]
        assert "answers" not in document  # never "ok": the reports call these "unchecked"
        run = result_model(document)
        assert isinstance(run, AnalyticsResult)
        assert all(dashboard.status(run, q) == "unchecked" for q in range(5))
        # JSONBench's `system` is docbench's display_name (docbench's `system` is its slug).
        assert document["display_name"] == source["system"]
        for key in (
            "version",
            "os",
            "date",
            "machine",
            "retains_structure",
            "dataset_size",
            "num_loaded_documents",
            "total_size",
            "data_size",
            "index_size",
            "result",
        ):
            assert document[key] == source[key], key
        assert document["dataset"]["label"] == scale_label(source["dataset_size"])
    postgres = json.loads((out / "analytics.postgresql.imported-m6i-8xlarge.1m.imported.json").read_text())
    assert postgres["load_time"] == 71.4
    assert postgres["memory_usage"][0] == [210000000, 190000000, 190500000]
    run = result_model(postgres)
    assert isinstance(run, AnalyticsResult)
    assert hot_time(run, 0) == 0.605 and cold_time(run, 0) == 3.912
    assert hot_time(run, 4) is None
    assert "Q5 did not finish" in postgres["comment"] and "JSONBench" in postgres["comment"]


def test_import_is_idempotent_and_skips_other_files(tmp_path: Path) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "a.json").write_text((FIXTURES / "m6i.8xlarge_bluesky_1m_clickhouse.json").read_text())
    (sources / "b.json").write_text((FIXTURES / "m6i.8xlarge_bluesky_1m_clickhouse.json").read_text())
    (sources / "notes.json").write_text('{"hello": "world"}')
    (sources / "broken.json").write_text("{")
    written, skipped = import_files([sources], tmp_path / "out")
    assert [p.name for p in written] == [
        "analytics.clickhouse.imported-m6i-8xlarge.1m.imported.json",
        "analytics.clickhouse.imported-m6i-8xlarge-b.1m.imported.json",
    ]
    assert sorted(p.name for p, _ in skipped) == ["broken.json", "notes.json"]
    again, _ = import_files([sources], tmp_path / "out")
    assert again == written
    assert len(list((tmp_path / "out").iterdir())) == 2


def test_scale_labels_and_odd_values() -> None:
    assert [scale_label(n) for n in (1_000_000, 10_000_000, 1_000_000_000, 20_000, 1234, None)] == [
        "1m",
        "10m",
        "1000m",
        "20k",
        "1234",
        "unknown",
    ]
    document = convert(
        {
            "system": "X (lz4)",
            "dataset_size": 1000,
            "result": [[1, None]] * 5,
            "memory_usage": "n/a",
            "extra": 1,
        },
        "x.json",
    )
    assert document["system"] == "x-lz4" and document["tries"] == 2
    assert document["imported"]["memory_usage"] == "n/a"
    assert document["imported"]["other_keys"] == {"extra": 1}
    assert "memory_usage" not in document


def test_terminal_report_marks_imported_results(tmp_path: Path) -> None:
    import_files([FIXTURES], tmp_path / "results" / "imported")
    console = Console(record=True, width=200)
    print_analytics_report([tmp_path / "results"], console=console)
    text = console.export_text()
    assert "clickhouse/imported-m6i-8xlarge" in text
    assert "unchecked" in text
