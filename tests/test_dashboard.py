"""The HTML dashboard: its data, its self-containedness, and the page itself in a real browser.

The browser test drives Debian's Chromium (headless) over the Chrome DevTools Protocol, from
Python through its websocket (the ``websocket-client`` package): it opens the generated file,
switches systems, scale, metric and queries by clicking the page's own controls, reads the
figures shown and compares them with the result files (and with the terminal report's score),
reloads to check the URL keeps the selection, checks that nothing but the file itself was
requested, and saves a screenshot. ``scripts/install-chromium.sh`` installs the browser.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import COLUMNAR, EMBEDDED, QUICK, QUICK_OTHER, SQL_SERVER, Role
from result_samples import header

from docbench import results
from docbench.cli import main
from docbench.report import html
from docbench.results.models import AnalyticsResult
from docbench.systems.jsonbench import counterpart
from docbench.workloads.analytics import dashboard
from docbench.workloads.analytics.report import TRUSTED, cold_time, hot_time, load_analytics, score

CHROMIUM = os.environ.get("DOCBENCH_CHROMIUM", "/usr/bin/chromium")
FIXTURES = Path(__file__).parent / "fixtures" / "jsonbench"
QUERIES = range(5)

# ----- sample results (schema-valid docbench result documents) -----------------------------

BASELINES = {
    "1m": {"raw": 480_000_000, "gzip": 80_000_000, "zstd": 60_000_000, "lz4": 120_000_000},
    "10m": {"raw": 4_800_000_000, "gzip": 800_000_000, "zstd": 600_000_000, "lz4": 1_200_000_000},
}
SIZES = {"1m": 1_000_000, "10m": 10_000_000}


def key(role: Role, variant: str | None = None) -> str:
    """A run's key in the dashboard: system/variant (the role's variant unless named)."""
    return f"{role.system}/{variant or role.variant}"


def sample_of(
    role: Role, variant: str | None = None, label: str = "1m", factor: float = 1.0, **kwargs: Any
) -> dict:
    """sample_document for a role's system (its variant unless named)."""
    return sample_document(role.system, role.display_name, variant or role.variant, label, factor, **kwargs)


# The runs of imported JSONBench results (tests/fixtures/jsonbench: ClickHouse and PostgreSQL).
IMPORTED_CLICKHOUSE = f"{counterpart('ClickHouse').system}/imported-m6i-8xlarge"
IMPORTED_POSTGRESQL = f"{counterpart('PostgreSQL').system}/imported-m6i-8xlarge"


def sample_document(
    system_name: str,
    display: str,
    variant: str,
    label: str,
    factor: float,
    statuses: list[str] | None = None,
    failed: tuple[int, ...] = (),
    role: str = "default",
) -> dict[str, Any]:
    """A complete analytics result with made-up but plausible figures.

    ``factor`` scales every time and size; ``statuses`` are the answer statuses of Q1-Q5;
    queries in ``failed`` have no time at all (an error on every try).
    """
    size = SIZES[label]
    scale = size / 1_000_000
    statuses = statuses or ["ok"] * 5
    result, memory, errors = [], [], []
    for q in QUERIES:
        if q in failed:
            result.append([None, None, None])
            memory.append([None, None, None])
            errors.append(["Timeout: query exceeded 600 s"] * 3)
            continue
        base = round(0.0123 * (q + 1) * factor * scale, 6)
        result.append([round(base * 4.1, 6), round(base * 1.07, 6), base])
        memory.append(
            [int(50e6 * factor * (q + 1)), int(42e6 * factor * (q + 1)), int(41e6 * factor * (q + 1))]
        )
        errors.append([None, None, None])
    loaded = size - int(3 * factor)
    total = int(100e6 * factor * scale)
    document = {
        "system": display,
        "version": "1.2.3",
        "os": "Debian GNU/Linux 12 (bookworm)",
        "date": "2026-01-15",
        "machine": "2 cores, 8 GiB, Test CPU @ 3.0GHz",
        "retains_structure": "yes",
        "tags": ["embedded", "lukewarm-cold-run"],
        "dataset_size": size,
        "num_loaded_documents": loaded,
        "total_size": total,
        "data_size": int(total * 0.9),
        "index_size": total - int(total * 0.9),
        "result": result,
        "memory_usage": memory,
        "load_time": round(7.5 * factor * scale, 3),
        "comment": f"{display} sample",
        "format": 1,
        "workload": "analytics",
        "complete": True,
        "system_name": system_name,
        "variant": variant,
        "variant_role": role,
        "variant_description": f"{variant} storage",
        "dataset": {
            "label": label,
            "path": f"/data/bluesky-{label}",
            "files": ["file_0001.json"],
            "documents_by_oracle": size,
            "invalid_lines_by_oracle": 0,
            "manifest": {"generator": "docbench-gen", "seed": 1, "documents": size},
            "baselines": BASELINES[label],
        },
        "environment": {
            "cpu_model": "Test CPU @ 3.0GHz",
            "cores": 2,
            "memory_bytes": 8 * 2**30,
            "os": "Debian GNU/Linux 12 (bookworm)",
            "kernel": "6.1.0-test",
            "python": "3.11.2",
            "docbench_version": "0.1.0",
            "versions": {system_name: "1.2.3"},
        },
        "tries": 3,
        "timeout_seconds": 600.0,
        "cold_method": "fresh worker process opens the database; OS page cache NOT dropped (not root)",
        "answers": [
            {
                "query": q + 1,
                "status": statuses[q],
                "detail": "Q3 rows differ: 24 expected, 23 returned" if statuses[q] == "wrong" else None,
                "rows": [["app.bsky.feed.post", 1]],
            }
            for q in QUERIES
        ],
        "engine_time": [[None] * 3 for _ in QUERIES],
        "bytes_read": [[0] * 3 for _ in QUERIES],
        "plans": ["SEQ_SCAN bluesky"] * 5,
        "plan_warnings": [None] * 5,
        "query_errors": errors,
        "load": {
            "insert_seconds": round(6.5 * factor * scale, 3),
            "finish_seconds": round(1.0 * factor * scale, 3),
            "offered": size,
            "documents_per_second": round(size / (7.5 * factor * scale), 1),
            "empty_lines": 0,
        },
        "load_errors": {
            "count": size - loaded,
            "first": [{"file": "file_0001.json", "line": 17, "reason": "invalid JSON: unexpected end"}]
            if size != loaded
            else [],
        },
        "storage": {
            "total": total,
            "data": int(total * 0.9),
            "index": total - int(total * 0.9),
            "on_disk": int(total * 1.05),
            "detail": {},
        },
    }
    results.validate(document)
    return document


def write_sample_results(
    directory: Path, with_imports: bool = True, with_updates: bool = True
) -> list[AnalyticsResult]:
    """Three local systems/variants at 1m and 10m (one with a wrong answer that is the fastest,
    one with a failed query), the JSONBench fixtures imported, one `updates` result."""
    directory.mkdir(parents=True, exist_ok=True)
    documents = []
    for label in ("1m", "10m"):
        documents += [
            sample_of(EMBEDDED, label=label, factor=1.0),
            sample_of(QUICK, label=label, factor=2.5),
            # The fastest Q3 of all, but wrong: it must never be "best".
            sample_of(
                QUICK_OTHER, label=label, factor=3.0, statuses=["ok", "ok", "wrong", "ok", "precision"]
            ),
            sample_of(
                SQL_SERVER,
                "lz4",
                label=label,
                factor=6.0,
                failed=(4,),
                statuses=["ok", "ok", "ok", "approximate", "error"],
            ),
        ]
    documents[2]["result"][2] = [0.0005, 0.0002, 0.0001]
    documents[6]["result"][2] = [0.0005, 0.0002, 0.0001]
    for d in documents:
        # Written in format 1 (docbench before the redesign): the reports must still read it.
        name = f"{d['system_name']}.{d['variant']}.{d['dataset']['label']}.json"
        results.write_atomically(directory / name, d)
    if with_imports:
        outcome = CliRunner().invoke(
            main, ["import-jsonbench", str(FIXTURES), "--out", str(directory / "imported")]
        )
        assert outcome.exit_code == 0, outcome.output
    if with_updates:
        results.write_atomically(
            directory / f"updates.{EMBEDDED.system}.{EMBEDDED.variant}.1m.json",
            {
                "workload": "updates",
                "system": EMBEDDED.display_name,
                "system_name": EMBEDDED.system,
                "variant": EMBEDDED.variant,
                "dataset": {"label": "1m"},
                "updates_per_second": 1234.5,
                "p99_ms": 8.25,
                "rows_changed": 1000,
                "nested": {"ignored": True},
            },
        )
    return load_analytics([directory])


# ----- the payload, without a browser ------------------------------------------------------


def test_payload_has_the_terminal_figures(tmp_path: Path) -> None:
    documents = write_sample_results(tmp_path / "results")
    payload = html.build_payload(results.load_results([tmp_path / "results"]))
    runs = {(r["key"], r["dataset"]): r for r in payload["runs"]}
    assert len(runs) == len(documents) == 11
    for d in documents:
        run = runs[(dashboard.run_key(d), dashboard.dataset_label(d))]
        assert run["hot"] == [hot_time(d, q) for q in QUERIES]
        assert run["cold"] == [cold_time(d, q) for q in QUERIES]
        assert run["total_size"] == d.total_size
        assert all("rows" not in a for a in run["doc"].get("answers") or [])
    imported = [r for r in payload["runs"] if r["imported"]]
    assert len(imported) == 3
    assert all(s == "unchecked" for r in imported for s in r["status"])
    assert [d["label"] for d in payload["datasets"]] == ["1m", "10m"]
    assert [t["workload"] for t in payload["workloads"]] == ["updates"]
    assert "updates_per_second" in payload["workloads"][0]["columns"]
    assert "nested" not in payload["workloads"][0]["columns"]


def test_page_is_self_contained_and_escapes_data(tmp_path: Path) -> None:
    write_sample_results(tmp_path / "results", with_imports=False)
    documents = results.load_results([tmp_path / "results"])  # as read, before the models
    documents[0]["comment"] = "</script><script>alert(1)</script> & <!-- \u2028"
    documents[1]["load_time"] = float("nan")
    page = html.render_dashboard(html.build_payload(documents))
    assert page.count("</script>") == 2  # the data block and the script, nothing injected
    assert "alert(1)</script>" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "@import" not in page and "url(http" not in page
    assert "fetch(" not in page and "XMLHttpRequest" not in page
    data = re.search(r'<script id="docbench-data" type="application/json">(.*?)</script>', page, re.S)
    assert data is not None
    payload = json.loads(data.group(1))
    assert payload["runs"][0]["doc"]["comment"].startswith("</script>")
    assert any(r["load_time"] is None for r in payload["runs"])


def test_report_html_command(tmp_path: Path) -> None:
    write_sample_results(tmp_path / "results")
    out = tmp_path / "site" / "index.html"
    outcome = CliRunner().invoke(main, ["report", "--html", str(out), "--results", str(tmp_path / "results")])
    assert outcome.exit_code == 0, outcome.output
    assert "11 analytics results" in outcome.output
    assert out.stat().st_size > 20_000
    assert not list(out.parent.glob(".*.tmp"))


# ----- the page in Chromium ----------------------------------------------------------------


class Chromium:
    """Headless Chromium driven over the DevTools Protocol (one page, one websocket)."""

    def __init__(self, workdir: Path) -> None:
        import websocket  # websocket-client

        self.profile = workdir / "chromium-profile"
        self.profile.mkdir(parents=True)
        self.log = (workdir / "chromium.log").open("wb")
        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--hide-scrollbars",
                "--mute-audio",
                f"--user-data-dir={self.profile}",
                "--remote-debugging-port=0",
                "--remote-allow-origins=*",
                "--window-size=1400,1000",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            start_new_session=True,
        )
        self.events: list[dict[str, Any]] = []
        self._id = 0
        try:
            port = self._port()
            targets = self._targets(port)
            page = next(t for t in targets if t.get("type") == "page")
            self.ws = websocket.create_connection(
                page["webSocketDebuggerUrl"], timeout=60, suppress_origin=True
            )
        except BaseException:
            self.close()
            raise

    def _port(self) -> int:
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.process.returncode}")
            if marker.exists():
                text = marker.read_text().split()
                if text:
                    return int(text[0])
            time.sleep(0.1)
        raise TimeoutError("chromium did not open its DevTools port")

    @staticmethod
    def _targets(port: int) -> list[dict[str, Any]]:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                    targets = json.loads(r.read())
                if any(t.get("type") == "page" for t in targets):
                    return targets
            except OSError:
                if time.monotonic() > deadline:
                    raise
            if time.monotonic() > deadline:
                raise TimeoutError("no page target in chromium")
            time.sleep(0.1)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_event(self, method: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(i)
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                self.events.append(json.loads(self.ws.recv()))
            finally:
                self.ws.settimeout(60)
        raise TimeoutError(method)

    def js(self, expression: str) -> Any:
        reply = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def open(self, url: str) -> None:
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")
        self.wait_ready()

    def reload(self) -> None:
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        self.call("Page.reload", ignoreCache=True)
        self.wait_event("Page.loadEventFired")
        self.wait_ready()

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 20
        while not self.js("document.body && document.body.dataset.ready || ''"):
            if time.monotonic() > deadline:
                thrown = [e for e in self.events if e.get("method") == "Runtime.exceptionThrown"]
                raise TimeoutError(f"the dashboard did not render: {thrown[-1:]}")
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        found = self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return false; e.click(); return true; })()"
        )
        assert found, f"nothing matches {selector}"

    def screenshot(self, path: Path, width: int = 1400) -> None:
        height = int(self.js("Math.ceil(document.documentElement.scrollHeight)"))
        height = max(600, min(height, 4000))
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        try:
            if getattr(self, "ws", None) is not None:
                with contextlib.suppress(Exception):  # the browser may already be gone
                    self.call("Browser.close")
                self.ws.close()
        finally:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(self.process.pid, signal.SIGKILL)
                    self.process.wait(10)
            self.log.close()
            shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture
def browser(tmp_path: Path):
    # `make test` installs both; under CI a missing browser is a failure, not a skip.
    missing = pytest.fail if os.environ.get("CI") else pytest.skip
    if not Path(CHROMIUM).exists():
        missing(f"{CHROMIUM} is missing: run scripts/install-chromium.sh")
    try:
        import websocket  # noqa: F401
    except ImportError:
        missing("the browser test needs websocket-client (pip install -e '.[dev]')")
    chromium = Chromium(tmp_path)
    try:
        chromium.call("Page.enable")
        chromium.call("Runtime.enable")
        chromium.call("Network.enable")
        yield chromium
    finally:
        chromium.close()


def cells(browser: Chromium) -> dict[tuple[str, int], dict[str, Any]]:
    rows = browser.js("""[...document.querySelectorAll('#details td.cell')].map(td => ({
        key: td.dataset.key, q: +td.dataset.q, value: td.dataset.value, status: td.dataset.status,
        text: td.textContent, best: td.classList.contains('best'),
        struck: getComputedStyle(td.querySelector('.value') || td).textDecorationLine}))""")
    return {(c["key"], c["q"]): c for c in rows}


def summary(browser: Chromium) -> dict[str, dict[str, Any]]:
    rows = browser.js("""[...document.querySelectorAll('#summary tr.summary-row[data-key]')].map(tr => ({
        key: tr.dataset.key, value: tr.querySelector('.summary-number').dataset.value,
        text: tr.querySelector('.summary-number').textContent,
        name: tr.querySelector('.summary-name').textContent}))""")
    return {r["key"]: r for r in rows}


def field_values(browser: Chromium, field: str) -> dict[str, str]:
    return browser.js(f"""Object.fromEntries([...document.querySelectorAll('#details tr.run-row')].map(tr =>
        [tr.dataset.key, tr.querySelector('td[data-field="{field}"]').dataset.value]))""")


def best_times(docs: list[AnalyticsResult], pick: Any, queries: list[int]) -> list[float | None]:
    """The best correct time per query among ``docs`` (None for queries not selected)."""
    best: list[float | None] = []
    for q in QUERIES:
        times = [pick(d, q) for d in docs if dashboard.status(d, q) in TRUSTED and pick(d, q) is not None]
        best.append(min(times) if times and q in queries else None)
    return best


def fmt_seconds(t: float) -> str:
    """The page's format: 3 decimals in seconds, or in milliseconds below 10 ms."""
    return f"{t:.3f} s" if t >= 0.01 or t == 0 else f"{t * 1000:.3f} ms"


def check_timings(browser: Chromium, docs: list[AnalyticsResult], kind: str, queries: list[int]) -> None:
    """Every cell and score shown equals the result files' figure / the terminal's score."""
    pick = hot_time if kind == "hot" else cold_time
    shown, scores = cells(browser), summary(browser)
    assert set(scores) == {dashboard.run_key(d) for d in docs}
    best_all = best_times(docs, pick, list(QUERIES))
    for d in docs:
        key = dashboard.run_key(d)
        for q in QUERIES:
            cell, value = shown[(key, q + 1)], pick(d, q)
            assert cell["status"] == dashboard.status(d, q)
            if value is None:
                assert cell["value"] == "" and "✗" in cell["text"]
                continue
            assert float(cell["value"]) == value
            assert fmt_seconds(value) in cell["text"]
            if cell["status"] in ("wrong", "error"):
                assert "✗" in cell["text"] and "line-through" in cell["struck"]
                assert not cell["best"]
            elif cell["status"] == "unchecked":
                assert "? unchecked" in cell["text"] and not cell["best"]
            else:
                assert cell["best"] == (value == best_all[q])
                assert f"×{(0.01 + value) / (0.01 + best_all[q]):.2f}" in cell["text"]
        expected = score(d, pick, best_times(docs, pick, queries))
        assert math.isclose(float(scores[key]["value"]), expected, rel_tol=1e-9), key
        assert scores[key]["text"] == f"×{expected:.2f}"


def test_dashboard_in_chromium(tmp_path: Path, browser: Chromium) -> None:
    documents = write_sample_results(tmp_path / "results")
    page = tmp_path / "dashboard.html"
    outcome = CliRunner().invoke(
        main, ["report", "--html", str(page), "--results", str(tmp_path / "results")]
    )
    assert outcome.exit_code == 0, outcome.output
    url = page.resolve().as_uri()
    browser.open(url)
    by_label = {
        label: [d for d in documents if dashboard.dataset_label(d) == label] for label in ("1m", "10m")
    }

    # Every scale and timing metric: the cells are the result files' times.
    for label in ("1m", "10m"):
        browser.click(f'#sel-scales [data-scale="{label}"]')
        for kind in ("hot", "cold"):
            browser.click(f'#sel-metrics [data-metric="{kind}"]')
            assert f"metric={kind}" in browser.js("location.hash")
            check_timings(browser, by_label[label], kind, list(QUERIES))

    # The wrong Q3 of QUICK_OTHER is the fastest time but not the best, and is penalised.
    shown = cells(browser)
    assert shown[(key(QUICK_OTHER), 3)]["status"] == "wrong" and not shown[(key(QUICK_OTHER), 3)]["best"]
    assert shown[(key(EMBEDDED), 3)]["best"]
    assert "✗ Q3 wrong" in summary(browser)[key(QUICK_OTHER)]["name"]

    # Switch systems off and on: the scores follow (best among the systems shown).
    browser.click(f'#sel-systems [data-system="{EMBEDDED.system}"]')
    remaining = [d for d in by_label["10m"] if d.system != EMBEDDED.system]
    assert set(summary(browser)) == {dashboard.run_key(d) for d in remaining}
    check_timings(browser, remaining, "cold", list(QUERIES))
    browser.click(f'#sel-variants [data-key="{key(QUICK_OTHER)}"]')
    remaining = [d for d in remaining if dashboard.run_key(d) != key(QUICK_OTHER)]
    check_timings(browser, remaining, "cold", list(QUERIES))

    # Queries: only Q2 and Q4 in the score.
    for q in (1, 3, 5):
        browser.click(f'#sel-queries input[data-q="{q}"]')
    check_timings(browser, remaining, "cold", [1, 3])

    # The URL keeps the selection: reload and find the same page.
    state = browser.js("location.hash")
    assert "q=24" in state and "scale=10m" in state and "runs=" in state
    browser.reload()
    assert browser.js("location.hash") == state
    assert browser.js("document.querySelector('#sel-metrics .active').dataset.metric") == "cold"
    assert browser.js("[...document.querySelectorAll('#sel-queries input')].map(i => i.checked)") == [
        False,
        True,
        False,
        True,
        False,
    ]
    check_timings(browser, remaining, "cold", [1, 3])
    browser.click("#queries-all")
    browser.click(f'#sel-systems [data-system="{EMBEDDED.system}"]')
    browser.click(f'#sel-variants [data-key="{key(QUICK_OTHER)}"]')
    assert "runs=" not in browser.js("location.hash")

    # Imported JSONBench results: shown beside the local ones, marked, never "best".
    browser.click('#sel-scales [data-scale="1m"]')
    browser.click('#sel-metrics [data-metric="hot"]')
    check_timings(browser, by_label["1m"], "hot", list(QUERIES))
    names = summary(browser)
    assert "imported" in names[IMPORTED_CLICKHOUSE]["name"]
    assert "imported" in names[IMPORTED_POSTGRESQL]["name"]

    # Storage, data quality, load time, memory.
    browser.click('#sel-metrics [data-metric="storage"]')
    sizes = field_values(browser, "total_size")
    assert {k: int(v) for k, v in sizes.items()} == {
        dashboard.run_key(d): d.total_size for d in by_label["1m"]
    }
    baselines = browser.js(
        "[...document.querySelectorAll('#summary tr[data-baseline]')].map(tr =>"
        " [tr.dataset.baseline, +tr.querySelector('.summary-number').dataset.value])"
    )
    assert dict(baselines) == BASELINES["1m"]
    browser.click('#sel-metrics [data-metric="quality"]')
    loaded = field_values(browser, "num_loaded_documents")
    assert {k: int(v) for k, v in loaded.items()} == {
        dashboard.run_key(d): d.num_loaded_documents for d in by_label["1m"]
    }
    browser.click('#sel-metrics [data-metric="load"]')
    loads = field_values(browser, "load_time")
    assert {k: (float(v) if v else None) for k, v in loads.items()} == {
        dashboard.run_key(d): d.load_time for d in by_label["1m"]
    }
    browser.click('#sel-metrics [data-metric="memory"]')
    shown = cells(browser)
    for d in by_label["1m"]:
        for q in QUERIES:
            expected = dashboard.memory_hot(d, q)
            value = shown[(dashboard.run_key(d), q + 1)]["value"]
            assert (float(value) if value else None) == expected

    # The environment of a result, one click away.
    browser.click('#sel-metrics [data-metric="hot"]')
    browser.click(f'button[data-details="{key(EMBEDDED)}"]')
    panel = browser.js(f"document.querySelector('[data-panel=\"{key(EMBEDDED)}\"]').textContent")
    assert "Test CPU @ 3.0GHz" in panel and "OS page cache NOT dropped" in panel
    assert "docbench-gen" in panel and "lukewarm-cold-run" in panel
    browser.click(f'button[data-details="{IMPORTED_CLICKHOUSE}"]')
    panel = browser.js(f"document.querySelector('[data-panel=\"{IMPORTED_CLICKHOUSE}\"]').textContent")
    assert "JSONBench" in panel and "m6i.8xlarge, 10000gib gp3" in panel
    browser.screenshot(tmp_path / "analytics.png")

    # Scaling: one chart per metric, the points are the files' figures.
    browser.click('#tabs [data-view="scaling"]')
    assert browser.js("document.querySelectorAll('#scaling-charts figure').length") == 6
    points = browser.js("""[...document.querySelectorAll('figure[data-chart="storage"] circle')]
        .map(c => [c.dataset.key, +c.dataset.x, +c.dataset.y])""")
    assert sorted(points) == sorted([dashboard.run_key(d), d.dataset_size, d.total_size] for d in documents)
    hot_points = browser.js("""[...document.querySelectorAll('figure[data-chart="hot"] circle')]
        .map(c => c.dataset.key)""")
    assert key(QUICK_OTHER) not in hot_points  # a wrong answer leaves its point out
    assert "view=scaling" in browser.js("location.hash")

    # Other workloads: a generic table of the scalar fields.
    browser.click('#tabs [data-view="workload-updates"]')
    table = browser.js("document.querySelector('table[data-workload=\"updates\"]').textContent")
    assert "updates_per_second" in table and "1234.5" in table

    # Unchecked answers can be counted as correct (then an import can be the best).
    browser.click('#tabs [data-view="analytics"]')
    browser.click("#opt-unchecked")
    assert "unchecked=1" in browser.js("location.hash")
    assert cells(browser)[(IMPORTED_CLICKHOUSE, 1)]["best"]

    screenshot = Path(os.environ.get("DOCBENCH_SCREENSHOT", tmp_path / "dashboard.png"))
    browser.click('#sel-metrics [data-metric="hot"]')
    browser.screenshot(screenshot)
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert screenshot.stat().st_size > 20_000

    # Nothing but the file itself was requested, and the page threw nothing.
    requests = [
        e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    assert requests and all(u.split("#")[0] == url for u in requests), requests
    errors = [
        e
        for e in browser.events
        if e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
    ]
    assert not errors, errors


def test_dashboard_with_one_scale_and_nothing_else(tmp_path: Path, browser: Chromium) -> None:
    directory = tmp_path / "results"
    document = sample_of(EMBEDDED)
    results.write_atomically(directory / f"{EMBEDDED.system}.{EMBEDDED.variant}.1m.json", document)
    page = tmp_path / "one.html"
    html.write_dashboard([directory], page)
    browser.open(page.resolve().as_uri() + "#view=scaling&metric=nonsense&runs=ghost")
    views = browser.js("[...document.querySelectorAll('#tabs button')].map(b => b.dataset.view)")
    assert views == ["analytics"]
    assert browser.js("document.getElementById('nothing-selected').hidden") is False
    browser.click(f'#sel-variants [data-key="{key(EMBEDDED)}"]')
    assert summary(browser)[key(EMBEDDED)]["text"] == "×1.00"
    assert browser.js("document.querySelector('#sel-metrics .active').dataset.metric") == "hot"


def test_label_filters_select_the_runs_that_have_the_label(tmp_path: Path, browser: Chromium) -> None:
    """A run whose representation gives a schema by hand: the "schema by hand" label switches
    it off and on; the details panel names its representation. `lossless` comes from the
    latest complete fidelity result of the same system/variant."""
    directory = tmp_path / "results"
    for label in ("1m", "10m"):
        for variant, by_hand in (("default", False), ("columns", True)):
            document = sample_of(EMBEDDED, variant, label=label, factor=1.0 if by_hand else 2.0)
            document["representation"] = {
                "name": variant.upper(),
                "retains_structure": True,
                "schema_by_hand": by_hand,
            }
            results.write_atomically(directory / f"{EMBEDDED.system}.{variant}.{label}.json", document)
    # Two fidelity runs of EMBEDDED/columns (a variant of its own): the later one (not lossless) is the label.
    for started, lossless in (("2026-01-01T00:00:00Z", True), ("2026-02-01T00:00:00Z", False)):
        fidelity = header(
            "fidelity", EMBEDDED.system, "columns", started_at=started, lossless=lossless, documents=[]
        )
        results.write_atomically(
            directory / f"fidelity.{EMBEDDED.system}.columns.{started[:7]}.json", fidelity
        )
    page = tmp_path / "labels.html"
    html.write_dashboard([directory], page)
    browser.open(page.resolve().as_uri())
    labels = browser.js("[...document.querySelectorAll('#sel-labels button')].map(b => b.dataset.label)")
    assert labels == ["structure", "by-hand", "no-schema", "not-lossless"]
    assert set(summary(browser)) == {key(EMBEDDED), key(EMBEDDED, "columns")}
    browser.click('#sel-labels [data-label="not-lossless"]')
    assert set(summary(browser)) == {key(EMBEDDED)}
    browser.click('#sel-labels [data-label="not-lossless"]')
    browser.click('#sel-labels [data-label="by-hand"]')
    assert set(summary(browser)) == {key(EMBEDDED)}
    browser.click('#sel-labels [data-label="by-hand"]')
    assert set(summary(browser)) == {key(EMBEDDED), key(EMBEDDED, "columns")}
    payload = html.build_payload(results.load_results([directory]))
    views = {run["key"]: run["labels"] for run in payload["runs"]}
    assert views[key(EMBEDDED, "columns")] == {
        "non_default": None,
        "representation": "COLUMNS",
        "retains_structure": True,
        "schema_by_hand": True,
        "lossless": False,
    }
    assert views[key(EMBEDDED)]["lossless"] is None


def test_a_variant_beyond_the_engines_defaults_is_marked_with_its_cost(
    tmp_path: Path, browser: Chromium
) -> None:
    """A run whose variant departs from the engine's own defaults where it matters (ClickHouse's
    lz4 and zstd: max_dynamic_paths = 0) carries a mark in the dashboard and the terminal, and
    the note with the measured cost."""
    from rich.console import Console

    from docbench.workloads.analytics.report import print_report

    directory = tmp_path / "results"
    note = "max_dynamic_paths = 0, not ClickHouse's default: +66% storage at 10m"
    for variant, non_default in (("lz4", note), ("jsonbench", None)):
        document = sample_of(COLUMNAR, variant)
        document["representation"] = {"name": "JSON", "retains_structure": True, "schema_by_hand": False}
        document["representation"]["non_default"] = non_default
        results.write_atomically(directory / f"{COLUMNAR.system}.{variant}.json", document)
    page = tmp_path / "marks.html"
    html.write_dashboard([directory], page)
    browser.open(page.resolve().as_uri())
    marks = browser.js("[...document.querySelectorAll('.non-default')].map(m => m.title)")
    assert marks and set(marks) == {note}
    out = io.StringIO()
    print_report(load_analytics([directory]), Console(file=out, width=300), [])
    text = out.getvalue()
    assert f"{key(COLUMNAR, 'lz4')} †" in text and f"† {key(COLUMNAR, 'lz4')}: {note}" in text
    assert f"{key(COLUMNAR, 'jsonbench')} †" not in text


def test_concurrency_view_draws_qps_and_p99_per_number_of_clients(tmp_path: Path, browser: Chromium) -> None:
    """A run with `--clients` levels gets the "Concurrent clients" view: a point per level in
    the QPS and p99 charts, a table row per level with the driver's ceiling beside it."""
    directory = tmp_path / "results"
    document = sample_of(EMBEDDED)

    def level(clients: int, qps: float, p99: float, bad: int = 0) -> dict:
        latency = {"count": 10, "p50_ms": p99 / 2, "p99_ms": p99}
        outcomes = {"ok": 10, "wrong": bad, "error": 0, "timeout": 0}
        return {"clients": clients, "processes": 1, "error": None, "queries": 10 + bad, "qps": qps} | {
            "outcomes": outcomes,
            "latency_ms": latency,
            "engine": {"cores": 1.5},
            "per_query": [],
        }

    document["concurrency"] = {
        "mode": "closed loop",
        "duration_s": 60,
        "warmup_s": 5,
        "seed": 1,
        "levels": [level(1, 2.0, 900.0), level(4, 3.5, 2500.0, bad=1)],
        "ceiling": [level(1, 20000.0, 0.2), level(4, 30000.0, 0.4)],
    }
    results.write_atomically(directory / f"{EMBEDDED.system}.{EMBEDDED.variant}.1m.json", document)
    page = tmp_path / "concurrency.html"
    html.write_dashboard([directory], page)
    browser.open(page.resolve().as_uri() + "#view=concurrency")
    views = browser.js("[...document.querySelectorAll('#tabs button')].map(b => b.dataset.view)")
    assert "concurrency" in views
    rows = browser.js(
        "[...document.querySelectorAll('#concurrency-table tbody tr')]"
        ".map(r => [...r.cells].map(c => c.textContent))"
    )
    assert rows == [
        [key(EMBEDDED), "1", "2.00", "0.450 s", "0.900 s", "0 of 10", "1.50", "20,000"],
        [key(EMBEDDED), "4", "3.50", "1.250 s", "2.500 s", "1 of 11", "1.50", "30,000"],
    ]
    qps_points = browser.js(
        "[...document.querySelectorAll('[data-chart=qps] circle')].map(c => [+c.dataset.x, +c.dataset.y])"
    )
    assert [1, 2] in qps_points and [4, 3.5] in qps_points and [4, 30000] in qps_points


def test_shapes_view_draws_each_metric_against_the_knob_with_the_break_point(
    tmp_path: Path, browser: Chromium
) -> None:
    """Recorded shapes results (Elasticsearch 8.19 at depth 2 and 24, 2,000 documents): the
    Shapes view has its table and charts, and the break point is ringed at depth 2, where the
    dynamic mapping of a path of varying type already gave a wrong count (at 24 it also
    refuses 1,996 documents past its mapping depth limit)."""
    page = tmp_path / "shapes.html"
    html.write_dashboard([FIXTURES.parent / "shapes"], page)
    browser.open(page.resolve().as_uri() + "#view=workload-shapes")
    rows = browser.js("document.querySelectorAll('table.generic[data-workload=shapes] tbody tr').length")
    assert rows == 2
    points = browser.js(
        "[...document.querySelectorAll('[data-chart=shapes-depth-load_time] circle[data-x]')]"
        ".map(c => +c.dataset.x)"
    )
    assert sorted(points) == [2, 24]
    rings = browser.js(
        "[...document.querySelectorAll('[data-chart=shapes-depth-load_time] circle.break')]"
        ".map(c => c.textContent)"
    )
    assert len(rings) == 1 and "breaks at 2: varying_filter: wrong" in rings[0]


def test_ingest_view_draws_rate_and_freshness_second_by_second(tmp_path: Path, browser: Chromium) -> None:
    """A run with `--ingest-rates` levels gets the "Live ingest" view: a line per level of
    documents acknowledged and of freshness against the seconds of the stream (each marker
    where the level has markers, else the median by count of each second), a table row per
    level with how freshness was measured and the count's verdict."""
    directory = tmp_path / "results"
    document = sample_of(SQL_SERVER)

    def level(target: float | None, per_second: list[int], exact: bool, markers: bool) -> dict:
        timeline = [
            {"second": i + 1, "acknowledged": n, "freshness_p50_ms": 20.0 * (i + 1)}
            for i, n in enumerate(per_second)
        ]
        total = sum(per_second)
        return {
            "target_rate": target,
            "offered": total,
            "acknowledged": total,
            "refused": 0,
            "offered_rate": total / len(per_second),
            "sustained_rate": total / len(per_second),
            "lag_s": {"max": 0.1, "last": 0.0},
            "freshness_ms": (
                {
                    "method": "markers",
                    "p50": 40.0,
                    "p99": 60.0,
                    "markers": 3,
                    "seen": 3,
                    "points": [[0.5, 35.0], [1.5, 45.0], [2.5, 55.0]],
                }
                if markers
                else {"method": "count", "p50": 40.0, "p99": 60.0}
            ),
            "count_before": 1_000_000,
            "expected_count": 1_000_000 + total,
            "final_count": 1_000_000 + total - (0 if exact else 5),
            "exact": exact,
            "queries_idle": {"count": 5, "p50_ms": 100.0, "p99_ms": 200.0, "errors": 0},
            "queries_during": {"count": 4, "p50_ms": 150.0, "p99_ms": 300.0, "errors": 0},
            "timeline": timeline,
            "error": None,
        }

    document["ingest"] = {
        "duration_s": 3,
        "clients": 2,
        "levels": [
            level(1000.0, [1000, 1000, 1000], True, markers=True),
            level(None, [5000, 6000, 5500], False, markers=False),
        ],
    }
    results.write_atomically(directory / f"{SQL_SERVER.system}.{SQL_SERVER.variant}.1m.json", document)
    page = tmp_path / "ingest.html"
    html.write_dashboard([directory], page)
    browser.open(page.resolve().as_uri() + "#view=ingest")
    views = browser.js("[...document.querySelectorAll('#tabs button')].map(b => b.dataset.view)")
    assert "ingest" in views
    points = "[...document.querySelectorAll('[data-chart=%s] circle')].map(c => [+c.dataset.x, +c.dataset.y])"
    rate_points = browser.js(points % "ingest-rate")
    assert [1, 1000] in rate_points and [2, 6000] in rate_points and len(rate_points) == 6
    freshness = browser.js(points % "ingest-freshness")
    assert [0.5, 0.035] in freshness and [2.5, 0.055] in freshness  # the markers of level 1
    assert [3, 0.06] in freshness and len(freshness) == 6  # level 2 by count, second by second
    rows = browser.js(
        "[...document.querySelectorAll('#ingest-table tbody tr')]"
        ".map(r => [...r.cells].map(c => c.textContent))"
    )
    assert [row[1] for row in rows] == ["1,000/s", "max"]
    assert [row[6] for row in rows] == ["markers", "count"]
    assert rows[0][-1] == "exact (1,003,000)" and rows[1][-1] == "1,016,495 of 1,016,500"


def test_a_query_set_has_its_own_view_with_its_query_names(tmp_path: Path, browser: Chromium) -> None:
    """Results of `docbench run --queries` (the operators set on two engines, recorded): the
    dashboard has a tab for the set, a row per run and the set's own query names, and the
    page throws nothing while the views are clicked through."""
    page = tmp_path / "queries.html"
    html.write_dashboard([FIXTURES.parent / "portable" / "results"], page)
    browser.open(page.resolve().as_uri())
    tabs = browser.js("[...document.querySelectorAll('#tabs button')].map(b => b.dataset.view)")
    assert "workload-queries-operators" in tabs
    for view in tabs:
        browser.js(f"document.querySelector('#tabs button[data-view=\"{view}\"]').click()")
    browser.js("document.querySelector('#tabs button[data-view=\"workload-queries-operators\"]').click()")
    selector = "table.generic[data-workload=queries-operators]"
    assert browser.js(f"document.querySelectorAll('{selector} tbody tr').length") == 2
    headers = browser.js(f"[...document.querySelectorAll('{selector} th')].map(t => t.textContent)")
    assert "eq_number answer" in headers and "top_limit_ties hot s" in headers
    cells = browser.js(f"[...document.querySelectorAll('{selector} tbody td')].map(t => t.textContent)")
    assert "25/25" in cells
    errors = [
        e
        for e in browser.events
        if e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
    ]
    assert not errors, errors
