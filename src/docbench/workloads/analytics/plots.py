"""The dashboard's charts as PNG files (matplotlib, Agg backend, no display needed).

``docbench report --plots DIR`` writes, per dataset label (``1m``, ``bluesky-real``...):

- ``analytics-<label>-hot.png`` / ``-cold.png``: seconds per query per system/variant, log scale;
  a wrong or failed answer is drawn hatched red with a ✗, an unchecked one (imported) faded
  with a ?, a missing one as a ✗ on the axis;
- ``analytics-<label>-memory.png``: peak memory per query (when recorded);
- ``analytics-<label>-storage.png``: total bytes, with the dataset's file baselines (raw ndjson,
  gzip, zstd, lz4) as reference lines;
- ``analytics-<label>-load-time.png`` and ``analytics-<label>-data-quality.png``;

and ``analytics-scaling.png`` (every metric against the dataset size, log axes) when results
exist at several scales. Names depend only on the labels, so they are stable across runs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from docbench.results.models import AnalyticsResult, RunHeader
from docbench.workloads.analytics.dashboard import (
    dataset_label,
    datasets,
    is_imported,
    loaded_share,
    scaling_value,
    sort_runs,
    status,
    unique_keys,
)
from docbench.workloads.analytics.report import (
    QUERY_COUNT,
    TRUSTED,
    analytics_only,
    cold_time,
    hot_time,
    memory_hot,
)

PALETTE = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
]
BAD = "#c62828"
BASELINE_STYLES = {"raw": ":", "gzip": "--", "zstd": "-.", "lz4": (0, (5, 1, 1, 1))}
PICK = {"hot": hot_time, "cold": cold_time, "memory": memory_hot}
# Runs of one chart, each with its key (the name it is drawn under).
Keyed = list[tuple[str, AnalyticsResult]]
TITLES = {
    "hot": "hot runs (fastest of tries 2..n), seconds",
    "cold": "cold runs (try 1), seconds",
    "memory": "peak memory per query (hot tries), bytes",
}


def write_plots(results: Sequence[RunHeader], out_dir: Path) -> list[Path]:
    """Every chart of these analytics results; returns the files written."""
    return plot_runs(analytics_only(results), out_dir)


def plot_runs(results: Sequence[AnalyticsResult], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    ordered = sort_runs(results)
    keys = unique_keys(ordered)
    runs = list(zip(keys, ordered, strict=True))
    colors = {key: PALETTE[i % len(PALETTE)] for i, key in enumerate(dict.fromkeys(keys))}
    written: list[Path] = []
    labels = [d["label"] for d in datasets(ordered)]
    for label in labels:
        group = [(k, d) for k, d in runs if dataset_label(d) == label]
        stem = f"analytics-{safe_name(label)}"
        for metric in ("hot", "cold", "memory"):
            if metric == "memory" and not any(memory_hot(d, q) for _, d in group for q in range(QUERY_COUNT)):
                continue
            written.append(
                _save(per_query_chart(group, metric, label, colors), out_dir / f"{stem}-{metric}.png")
            )
        written.append(_save(storage_chart(group, label, colors), out_dir / f"{stem}-storage.png"))
        written.append(_save(load_chart(group, label, colors), out_dir / f"{stem}-load-time.png"))
        written.append(_save(quality_chart(group, label, colors), out_dir / f"{stem}-data-quality.png"))
    if len(labels) >= 2:
        written.append(_save(scaling_chart(runs, colors), out_dir / "analytics-scaling.png"))
    return written


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "dataset"


def _save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    tmp = path.with_name(f".{path.name}.tmp.png")
    figure.savefig(tmp, dpi=110, bbox_inches="tight")
    tmp.replace(path)
    return path


def _label(key: str, run: AnalyticsResult) -> str:
    return f"{key} (imported)" if is_imported(run) else key


# ----- per dataset -----------------------------------------------------------------------


def per_query_chart(group: Keyed, metric: str, label: str, colors: dict[str, str]) -> Figure:
    pick = PICK[metric]
    figure = Figure(figsize=(max(8.0, 1.2 + 0.35 * len(group) * QUERY_COUNT), 4.8))
    ax = figure.add_subplot()
    n = max(1, len(group))
    width = 0.8 / n
    values = [v for _, d in group for q in range(QUERY_COUNT) if (v := pick(d, q))]
    floor = min(values) / 3 if values else 1e-3
    notes = False
    for i, (key, d) in enumerate(group):
        for q in range(QUERY_COUNT):
            x = q - 0.4 + width * (i + 0.5)
            value, answer = pick(d, q), status(d, q)
            if not value:
                ax.text(x, floor, "✗", ha="center", va="bottom", color=BAD, fontsize=11, fontweight="bold")
                notes = True
                continue
            bad = answer not in TRUSTED and answer != "unchecked"
            ax.bar(
                x,
                value - floor,
                width * 0.92,
                bottom=floor,
                color="#ffd6d6" if bad else colors[key],
                edgecolor=BAD if bad else "none",
                hatch="///" if bad else None,
                alpha=0.5 if answer == "unchecked" else 1.0,
                label=_label(key, d) if q == 0 else None,
            )
            if bad or answer == "unchecked":
                ax.text(
                    x,
                    value * 1.08,
                    "✗" if bad else "?",
                    ha="center",
                    va="bottom",
                    color=BAD if bad else "#2b3a8f",
                    fontsize=10,
                    fontweight="bold",
                )
                notes = True
        if all(not pick(d, q) for q in range(QUERY_COUNT)):
            ax.bar(0, 0, 0, color=colors[key], label=_label(key, d))
    ax.set_yscale("log")
    ax.set_xticks(range(QUERY_COUNT), [f"Q{q + 1}" for q in range(QUERY_COUNT)])
    ax.set_xlim(-0.5, QUERY_COUNT - 0.5)
    if values:
        ax.set_ylim(floor, max(values) * 3)
    ax.set_ylabel("bytes" if metric == "memory" else "seconds")
    ax.set_title(f"{label}: {TITLES[metric]}, log scale")
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    if notes:
        figure.text(
            0.01,
            0.005,
            "✗ hatched red: wrong answer or failed query (not a result); "
            "✗ on the axis: no result; ? faded: answer unchecked (imported)",
            fontsize=8,
            color="#444",
        )
    return figure


def _hbar_figure(n: int) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(9.0, 1.4 + 0.42 * max(1, n)))
    return figure, figure.add_subplot()


def storage_chart(group: Keyed, label: str, colors: dict[str, str]) -> Figure:
    rows = sorted(group, key=lambda kd: (kd[1].total_size is None, kd[1].total_size or 0))
    figure, ax = _hbar_figure(len(rows))
    names = [_label(k, d) for k, d in rows]
    sizes = [(d.total_size or 0) / 1e6 for _, d in rows]
    ax.barh(range(len(rows)), sizes, color=[colors[k] for k, _ in rows])
    for y, (_, d) in enumerate(rows):
        total = d.total_size
        ax.text(
            (total or 0) / 1e6, y, f" {total / 1e6:,.1f} MB" if total else " n/a", va="center", fontsize=8
        )
    baselines = next((b for _, d in group if (b := d.dataset.baselines.sizes()) and any(b.values())), {})
    for name, size in baselines.items():
        if size:
            ax.axvline(
                size / 1e6,
                color="#555",
                linestyle=BASELINE_STYLES.get(name, "--"),
                linewidth=1.2,
                label=f"file: ndjson {name} ({size / 1e6:,.1f} MB)",
            )
    ax.set_yticks(range(len(rows)), names)
    ax.invert_yaxis()
    widest = max([*sizes, *((v or 0) / 1e6 for v in baselines.values())], default=0)
    ax.set_xlim(0, widest * 1.2 or 1)
    ax.set_xlabel("MB on disk (total: data + indexes)")
    ax.set_title(f"{label}: storage, with the dataset's files as reference")
    ax.grid(axis="x", alpha=0.3)
    if any(baselines.values()):
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure


def load_chart(group: Keyed, label: str, colors: dict[str, str]) -> Figure:
    rows = sorted(group, key=lambda kd: (kd[1].load_time is None, kd[1].load_time or 0))
    figure, ax = _hbar_figure(len(rows))
    ax.barh(range(len(rows)), [d.load_time or 0 for _, d in rows], color=[colors[k] for k, _ in rows])
    for y, (_, d) in enumerate(rows):
        seconds = d.load_time
        rate = d.load.documents_per_second if d.load else None
        text = (
            f" {seconds:,.2f} s" + (f" ({rate:,.0f} docs/s)" if rate else "")
            if seconds is not None
            else " n/a"
        )
        ax.text(seconds or 0, y, text, va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [_label(k, d) for k, d in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, max((d.load_time or 0 for _, d in rows), default=0) * 1.4 or 1)
    ax.set_xlabel("seconds (insert + index build / merges)")
    ax.set_title(f"{label}: load time")
    ax.grid(axis="x", alpha=0.3)
    return figure


def quality_chart(group: Keyed, label: str, colors: dict[str, str]) -> Figure:
    rows = sorted(group, key=lambda kd: -(loaded_share(kd[1]) or -1))
    figure, ax = _hbar_figure(len(rows))
    shares = [100 * (loaded_share(d) or 0) for _, d in rows]
    ax.barh(range(len(rows)), shares, color=[colors[k] for k, _ in rows])
    for y, (_, d) in enumerate(rows):
        share = loaded_share(d)
        refused = d.load_errors.count if d.load_errors else None
        text = (
            (
                f" {_percent(share)}  ({d.num_loaded_documents:,} / {d.dataset_size:,}"
                + (f", {refused:,} refused" if refused else "")
                + ")"
            )
            if share is not None
            else " n/a"
        )
        ax.text(100 * (share or 0), y, text, va="center", fontsize=8)
    low = min((s for s in shares if s > 0), default=0.0)
    ax.set_xlim(max(0.0, low - max(1.0, (100 - low) * 0.5)), 100 + max(1.0, (100 - low) * 0.9))
    ax.set_xticks([t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= 100])
    ax.set_yticks(range(len(rows)), [_label(k, d) for k, d in rows])
    ax.invert_yaxis()
    ax.set_xlabel("documents loaded, % of offered (higher is better)")
    ax.set_title(f"{label}: data quality")
    ax.grid(axis="x", alpha=0.3)
    return figure


def _percent(share: float) -> str:
    """Truncated, not rounded: 999,997 of 1,000,000 is 99.999%, never 100%."""
    return "100%" if share >= 1 else f"{math.floor(share * 100_000) / 1000:.3f}%"


# ----- across datasets ----------------------------------------------------------------------


SCALING = [
    ("hot", "hot run: geometric mean (s)", True),
    ("cold", "cold run: geometric mean (s)", True),
    ("storage", "storage (bytes)", True),
    ("load", "load time (s)", True),
    ("quality", "documents loaded (%)", False),
    ("memory", "peak memory: geometric mean (bytes)", True),
]


def scaling_chart(runs: Keyed, colors: dict[str, str]) -> Figure:
    figure = Figure(figsize=(13.0, 8.0))
    axes = figure.subplots(2, 3)
    keys = list(dict.fromkeys(k for k, _ in runs))
    for ax, (metric, title, log_y) in zip(axes.flat, SCALING, strict=True):
        for key in keys:
            points = sorted(
                (d.dataset_size, v)
                for k, d in runs
                if k == key
                and d.dataset_size
                and (v := scaling_value(d, metric)) is not None
                and (v > 0 or not log_y)
            )
            if not points:
                continue
            imported = any(is_imported(d) for k, d in runs if k == key)
            ax.plot(
                [p[0] for p in points],
                [p[1] for p in points],
                marker="o",
                color=colors[key],
                linestyle="--" if imported else "-",
                label=key + (" (imported)" if imported else ""),
            )
        ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("documents (log)", fontsize=8)
        ax.grid(which="both", alpha=0.3)
    handles, names = [], []
    for ax in axes.flat:
        for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
            if name not in names:
                handles.append(handle)
                names.append(name)
    if handles:
        figure.legend(handles, names, loc="lower center", ncol=min(4, len(names)), fontsize=8)
    figure.suptitle(
        "Scaling: each metric against the dataset size (timings: only scales where "
        "every query has a correct answer)",
        fontsize=11,
    )
    figure.subplots_adjust(bottom=0.16, hspace=0.35, wspace=0.28)
    return figure
