"""PNG charts: written per dataset with stable names, non-empty, and a scaling chart when
results exist at several scales."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from conftest import EMBEDDED
from test_dashboard import sample_of, write_sample_results

from docbench import results
from docbench.cli import main
from docbench.report.plots import write_plots

PNG = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG, path
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_report_plots_command(tmp_path: Path) -> None:
    write_sample_results(tmp_path / "results")
    out = tmp_path / "plots"
    outcome = CliRunner().invoke(
        main, ["report", "--plots", str(out), "--results", str(tmp_path / "results")]
    )
    assert outcome.exit_code == 0, outcome.output
    expected = {
        f"analytics-{label}-{chart}.png"
        for label in ("1m", "10m")
        for chart in ("hot", "cold", "memory", "storage", "load-time", "data-quality")
    }
    expected.add("analytics-scaling.png")
    assert {p.name for p in out.iterdir()} == expected
    for path in out.iterdir():
        width, height = png_size(path)
        assert width > 400 and height > 150, path
        assert path.stat().st_size > 10_000, path
    assert "13 charts" in outcome.output


def test_plots_are_stable_and_single_scale_has_no_scaling_chart(tmp_path: Path) -> None:
    directory = tmp_path / "results"
    document = sample_of(EMBEDDED)
    document["memory_usage"] = [[None] * 3 for _ in range(5)]
    document["result"][4] = [None, None, None]
    document["dataset"]["label"] = "bluesky real/2026"
    results.write_atomically(directory / f"{EMBEDDED.system}.{EMBEDDED.variant}.real.json", document)
    first = write_plots([directory], tmp_path / "a")
    second = write_plots([directory], tmp_path / "b")
    names = [p.name for p in first]
    assert names == [p.name for p in second]
    assert names == [
        f"analytics-bluesky_real_2026-{c}.png"
        for c in ("hot", "cold", "storage", "load-time", "data-quality")
    ]
    assert all(png_size(p)[0] > 400 for p in first)
    assert not list((tmp_path / "a").glob(".*"))


def test_no_results_no_plots(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert write_plots([tmp_path / "empty"], tmp_path / "plots") == []


def test_shapes_plots_one_chart_per_metric_of_each_sweep(tmp_path: Path) -> None:
    """The recorded Elasticsearch depth sweep (tests/fixtures/shapes): bytes per document,
    load time and hot query time against the depth."""
    fixtures = Path(__file__).parent / "fixtures" / "shapes"
    out = tmp_path / "plots"
    outcome = CliRunner().invoke(main, ["report", "--plots", str(out), "--results", str(fixtures)])
    assert outcome.exit_code == 0, outcome.output
    assert {p.name for p in out.iterdir()} == {
        "shapes-depth-bytes_per_document-1.png",
        "shapes-depth-load_time-1.png",
        "shapes-depth-hot_seconds-1.png",
    }
    for path in out.iterdir():
        width, height = png_size(path)
        assert width > 400 and height > 150, path
