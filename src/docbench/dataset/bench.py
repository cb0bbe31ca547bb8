"""``docbench bench generate``: throughput and memory of the dataset tools, and how faithful
the generated data is to the published JSONBench 1M figures."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from docbench.core.console import report_console
from docbench.dataset import faithfulness
from docbench.dataset.generate import RunStats, docs_per_file_default, generate_dataset

_ORACLE_SNIPPET = """
import json, sys, time
from pathlib import Path
from docbench.dataset.oracle import compute_answers
files = [Path(p) for p in sys.argv[1:]]
t = time.perf_counter()
compute_answers(files, jobs=1)
seconds = time.perf_counter() - t
hwm = 0
try:
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) * 1024
except OSError:
    pass
print(json.dumps({"seconds": seconds, "peak_rss_bytes": hwm}))
"""


def _generate(n_docs: int, out: Path, jobs: int, docs_per_file: int | None) -> RunStats:
    stats = RunStats()
    generate_dataset(
        n_docs, out, jobs=jobs, quiet=True, answers=False, docs_per_file=docs_per_file, stats=stats
    )
    return stats


def _oracle(files: list[Path]) -> dict | None:
    """Run the answer oracle on one core in a child process: seconds and peak RSS."""
    try:
        from docbench.dataset import oracle
    except ImportError:
        return None
    if not hasattr(oracle, "compute_answers"):
        return None
    started = time.perf_counter()
    with tempfile.TemporaryFile() as errfile:
        proc = subprocess.Popen(
            [sys.executable, "-c", _ORACLE_SNIPPET, *map(str, files)], stdout=subprocess.PIPE, stderr=errfile
        )
        out = proc.stdout.read() if proc.stdout else b""
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS
        proc.returncode = os.waitstatus_to_exitcode(status)
        errfile.seek(0)
        err = errfile.read()
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        return {"error": err.decode("utf-8", "replace")[-500:]}
    try:
        reported = json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        reported = {}
    # VmHWM of the child itself; wait4's maxrss also counts the forked parent before exec.
    rss = reported.get("peak_rss_bytes") or usage.ru_maxrss * 1024
    return {"seconds": reported.get("seconds", wall), "wall_seconds": wall, "peak_rss_bytes": rss}


def _fmt_rate(x: float) -> str:
    return f"{x:,.0f}"


def bench_dataset_tools(
    n_docs: int, jobs: int, console: Console | None = None, workdir: Path | None = None
) -> dict:
    """Measure and print: generation docs/s and MB/s with --jobs 1 and --jobs J, the
    generator's peak RSS, the oracle's docs/s and peak RSS on one core, and the faithfulness
    figures of the generated data against the published 1M ones."""
    console = console or report_console()
    jobs = max(1, int(jobs))
    result: dict = {"docs": n_docs, "jobs": jobs}
    with tempfile.TemporaryDirectory(prefix="docbench-bench-", dir=workdir) as tmp:
        tmp_path = Path(tmp)
        one = tmp_path / "jobs1"
        s1 = _generate(n_docs, one, 1, None)
        runs = [("--jobs 1", s1, math.ceil(n_docs / docs_per_file_default()))]
        if jobs > 1:
            # With fewer files than jobs, split the documents into `jobs` files so that every
            # job has work (same generator, smaller files).
            dpf_default = docs_per_file_default()
            dpf = None if math.ceil(n_docs / dpf_default) >= jobs else math.ceil(n_docs / jobs)
            many = tmp_path / f"jobs{jobs}"
            sj = _generate(n_docs, many, jobs, dpf)
            runs.append((f"--jobs {jobs}", sj, math.ceil(n_docs / (dpf or dpf_default))))
            import shutil

            shutil.rmtree(many, ignore_errors=True)

        table = Table(title=f"docbench dataset tools, {n_docs:,} documents")
        for col in ("run", "files", "seconds", "docs/s", "MB/s", "peak RSS (MB)"):
            table.add_column(col, justify="right" if col != "run" else "left")
        for label, s, nfiles in runs:
            table.add_row(
                f"generate {label}",
                str(nfiles),
                f"{s.seconds:.2f}",
                _fmt_rate(s.docs / s.seconds),
                f"{s.uncompressed_bytes / 1e6 / s.seconds:,.0f}",
                f"{s.peak_rss_bytes / 1e6:,.1f}",
            )
            result[label] = {
                "seconds": s.seconds,
                "docs_per_second": s.docs / s.seconds,
                "mb_per_second": s.uncompressed_bytes / 1e6 / s.seconds,
                "peak_rss_bytes": s.peak_rss_bytes,
                "files": nfiles,
            }

        from docbench.dataset.manifest import read_manifest

        manifest = read_manifest(one)
        files = manifest.file_paths(one) if manifest else []
        orc = _oracle(files)
        if orc is None:
            table.add_row("oracle (1 core)", "-", "-", "not available", "-", "-")
        elif "error" in orc:
            table.add_row("oracle (1 core)", "-", "-", "failed", "-", "-")
            result["oracle"] = orc
        else:
            table.add_row(
                "oracle (1 core)",
                str(len(files)),
                f"{orc['seconds']:.2f}",
                _fmt_rate(n_docs / orc["seconds"]),
                f"{s1.uncompressed_bytes / 1e6 / orc['seconds']:,.0f}",
                f"{orc['peak_rss_bytes'] / 1e6:,.1f}",
            )
            result["oracle"] = {**orc, "docs_per_second": n_docs / orc["seconds"]}
        console.print(table)
        if jobs > 1:
            speedup = result[f"--jobs {jobs}"]["docs_per_second"] / result["--jobs 1"]["docs_per_second"]
            console.print(f"speed-up with --jobs {jobs}: {speedup:.2f}x (on {os.cpu_count()} cores)")

        measured = faithfulness.measure(files)
        result["faithfulness"] = measured
        checks = faithfulness.compare(measured)
        result["checks"] = [
            {
                "name": c.name,
                "measured": c.measured,
                "published": c.published,
                "deviation": c.deviation,
                "bound": c.bound,
                "ok": c.ok,
            }
            for c in checks
        ]
        ft = Table(title="faithfulness vs the published JSONBench 1M figures (methodology §3)")
        for col in ("figure", "generated", "published", "deviation", "bound", ""):
            ft.add_column(col, justify="left" if col == "figure" else "right")
        for c in checks:
            dev = c.deviation
            ft.add_row(
                c.name,
                f"{c.measured:,.3f}" if c.measured is not None else "-",
                f"{c.published:,.3f}",
                f"{100 * dev:+.1f}%" if dev is not None else "-",
                f"±{100 * c.bound:.0f}%",
                "[green]pass" if c.ok else "[red]FAIL",
            )
        console.print(ft)
        if n_docs != 1_000_000:
            console.print(
                "[yellow]note: the published figures are for 1M documents; counts "
                "are scaled, distinct users do not scale linearly."
            )
        _print_details(console, measured)
    return result


def _print_details(console: Console, m: dict) -> None:
    p = faithfulness.PUBLISHED_1M
    t = Table(title="more figures (informative)")
    t.add_column("figure")
    t.add_column("generated", justify="right")
    t.add_column("published", justify="right")
    rows = [
        ("events per second", f"{m['events_per_second']:,.0f}", f"{p['events_per_second']:,.0f}"),
        (
            "commits: create share",
            f"{m['create_share_of_commits']:.3f}",
            f"{p['create_share_of_commits']:.3f}",
        ),
        (
            "delete : update",
            f"{m['delete_to_update']:.1f}" if m["delete_to_update"] else "-",
            f"{p['delete_to_update']:.0f}",
        ),
        ("createdAt lag median (s)", f"{m['created_lag_median_s']:.1f}", f"{p['created_lag_median_s']:.0f}"),
        ("createdAt lag p90 (s)", f"{m['created_lag_p90_s']:.0f}", f"{p['created_lag_p90_s']:.0f}"),
        ("largest batch commit", str(m["max_batch"]), "20"),
        (
            f"DuckDB row groups ({faithfulness.DUCKDB_ROW_GROUP:,} docs) with a doc >= "
            f"{faithfulness.LARGE_DOC_BYTES} B",
            f"{m['row_groups_with_large_doc']:.3f}" if m["row_groups_with_large_doc"] is not None else "-",
            "~0.98-0.99",
        ),
    ]
    for k in ("like", "repost", "follow", "block", "delete", "identity", "post"):
        if k in m["doc_bytes"]:
            rows.append((f"mean bytes: {k}", f"{m['doc_bytes'][k]:.0f}", str(p["doc_bytes"][k])))
    for k, v in p["post"].items():
        got = m["post"].get(k)
        rows.append((f"post {k}", f"{got:.3f}" if isinstance(got, float) else str(got), str(v)))
    for coll, (n_pub, u_pub) in p["creates_users"].items():
        n, u = m["creates_users"].get(coll, (0, 0))
        rows.append(
            (f"Q2 {coll.rsplit('.', 1)[-1]} creates / users", f"{n:,} / {u:,}", f"{n_pub:,} / {u_pub:,}")
        )
    for r in rows:
        t.add_row(*r)
    console.print(t)
