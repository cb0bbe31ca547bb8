"""`docbench plan`: disk, time and memory of a scale from the results of smaller ones here;
a scale that does not fit is refused before anything is generated or started."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import EMBEDDED, QUICK

from docbench import results
from docbench.cli import main
from docbench.workloads.analytics.plan import RAW_BYTES_PER_DOC, make_plan, refusal
from docbench.workloads.analytics.runner import RunRequest, run_analytics


@pytest.fixture(autouse=True)
def own_data(own_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's own home (conftest) and generated data directory."""
    monkeypatch.setenv("DOCBENCH_DATA", str(tmp_path / "data"))


def test_plan_extrapolates_from_a_result_here(real_data_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "real"
    data.mkdir()
    events = real_data_dir / "jsonbench_file_0001_first1000.jsonl"
    (data / "file_0001.json").write_bytes(events.read_bytes())
    results_dir = tmp_path / "results"
    assert (
        run_analytics(
            RunRequest(
                system_names=[QUICK.system],
                variants=[QUICK.variant],
                data_dir=data,
                results_dir=results_dir,
                tries=1,
                quiet=True,
            )
        )
        == 0
    )
    [measured] = results.load_results([results_dir])
    assert measured["docbench_peak_rss_bytes"] > 10 << 20
    plan = make_plan("10m", [QUICK.system], [QUICK.variant], [results_dir])
    [need] = plan.needs
    factor = 10_000_000 / measured["num_loaded_documents"]
    size = max(measured["total_size"], measured["storage"]["on_disk"] or 0)
    assert need.database_bytes == int(size * factor)
    assert need.load_seconds == pytest.approx(measured["load_time"] * factor)
    assert need.basis.startswith("x10,000.0 of the 1k run")
    # Nothing to extrapolate from for another engine: a stated guess.
    [guess] = make_plan("10m", [EMBEDDED.system], None, [results_dir]).needs
    assert guess.basis.startswith("guess") and guess.load_seconds is None
    assert plan.dataset_bytes == 10_000_000 * RAW_BYTES_PER_DOC and not (tmp_path / "data").exists()
    # A second scale, 10x larger, where size and load time grew 10x and query memory not at
    # all: the figures follow the power law through both (memory stays flat, not x10,000).
    larger = json.loads(json.dumps(measured))
    larger.update(
        num_loaded_documents=measured["num_loaded_documents"] * 10,
        dataset_size=measured["dataset_size"] * 10,
        load_time=measured["load_time"] * 10,
        total_size=size * 10,
        started_at="2099-01-01T00:00:00Z",
    )
    larger["storage"]["on_disk"] = size * 10
    (results_dir / f"analytics.{QUICK.system}.{QUICK.variant}.10k.test.json").write_text(json.dumps(larger))
    [need] = make_plan("10m", [QUICK.system], [QUICK.variant], [results_dir]).needs
    memory = max(m for row in measured["memory_usage"] for m in row if m)
    assert need.memory_bytes == pytest.approx(memory, rel=1e-6)
    assert need.database_bytes == pytest.approx(size * factor, rel=1e-6)
    assert need.load_seconds == pytest.approx(measured["load_time"] * factor)
    assert need.basis.startswith("power law through the 1k and 10k runs")


def test_a_scale_that_does_not_fit_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        main, ["plan", "--scale", "1000000m", "--systems", QUICK.system], terminal_width=200
    )
    assert outcome.exit_code == 1
    assert "does not fit" in outcome.output and "GB are free" in outcome.output
    outcome = CliRunner().invoke(
        main,
        ["run", "--scale", "1000000m", "--systems", QUICK.system, "--results", str(tmp_path / "results")],
        terminal_width=200,
    )
    assert outcome.exit_code == 2, outcome.output
    assert not (tmp_path / "data").exists()  # no dataset generated
    assert not list((tmp_path / "results").glob("*.json"))
    assert refusal(make_plan("20k", [QUICK.system])) is None
