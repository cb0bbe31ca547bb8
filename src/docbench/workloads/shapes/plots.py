"""The shapes workload's charts for `docbench report --plots`: per sweep, bytes per document,
load time and the hot shape queries' summed time against the knob (log axes), a line per
system/variant, its break point marked with a red ring -- the dashboard's charts as PNG."""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from docbench.core.jsontypes import JsonObject
from docbench.workloads.shapes.report import charts, sweeps


def write_plots(documents: list[JsonObject], out_dir: Path) -> list[Path]:
    """One PNG per sweep and metric; returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for number, chart in enumerate(charts(sweeps(documents))):
        figure = Figure(figsize=(7.5, 4.5))
        axes = figure.add_subplot()
        for series in chart["series"]:
            points = series["points"]
            if not points:
                continue
            xs, ys = [p[0] for p in points], [p[1] for p in points]
            axes.plot(xs, ys, marker="o", label=series["key"])
            for x, y in points:
                if x in series["breaks"]:
                    axes.plot([x], [y], marker="o", markersize=14, fillstyle="none", color="crimson")
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel(chart["x_label"])
        axes.set_ylabel(chart["unit"])
        axes.set_title(chart["title"], fontsize=8)
        axes.legend(fontsize=7)
        # The sweep's number (three charts each) tells apart sweeps of the same knob.
        path = out_dir / f"{chart['metric']}-{number // 3 + 1}.png"
        FigureCanvasAgg(figure)
        temporary = path.with_name(f".{path.name}.tmp.png")
        figure.savefig(temporary, dpi=110, bbox_inches="tight")
        temporary.replace(path)
        written.append(path)
    return written
