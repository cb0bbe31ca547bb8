"""The findings and the static site (`docbench site`): the findings come from the result files
(change a file, the figure changes), name files that exist and the commands that made them;
the site's pages are written, self-contained (relative links that resolve, nothing fetched),
and open in Chromium without an error or a failed request while every dashboard view is
clicked. No system is named here: the published results decide which are shown."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from docbench.cli import main
from docbench.report.findings import Finding, findings, markdown_list, readme_commands
from docbench.report.site import markdown_html
from docbench.results.files import result_model
from docbench.workloads.analytics.dashboard import scaling_value

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
SCRIPT = ROOT / "scripts" / "readme-findings.py"


@pytest.fixture(scope="module")
def published() -> list[Finding]:
    return findings(RESULTS)


def test_the_published_results_give_at_least_five_findings(published: list[Finding]) -> None:
    assert len(published) >= 5
    assert len({f.slug for f in published}) == len(published)
    for finding in published:
        assert re.fullmatch(r"[a-z0-9-]+", finding.slug), finding.slug
        assert finding.files, finding.slug
        for name in finding.files:
            assert (RESULTS / name).is_file(), (finding.slug, name)
            assert name.split("/")[0] == finding.directory
        assert finding.command, f"{finding.slug}: no command found in its README"
        readme = (RESULTS / finding.directory / "README.md").read_text()
        flat = " ".join(readme.replace("\\\n", " ").split())
        for command in finding.command:  # taken from the README, not invented
            assert command in flat, (finding.slug, command)
        assert re.search(r"\d", finding.summary), finding.slug
        assert finding.details.startswith("| ") and "|---" in finding.details


def _first_number(text: str) -> str:
    found = re.search(r"\d[\d,.]*", text)
    assert found
    return found.group(0)


def test_a_figure_changes_when_its_result_file_changes(tmp_path: Path, published: list[Finding]) -> None:
    """The unthrottled ingest rate: the fastest system's level set to another rate in a copy
    of the results is what the summary says; the other findings are absent (no directory)."""
    shutil.copytree(RESULTS / "ingest", tmp_path / "ingest")
    before = next(f for f in published if f.directory == "ingest")
    top = None
    for path in sorted((tmp_path / "ingest").glob("*.json")):
        document = json.loads(path.read_text())
        for level in (document.get("ingest") or {}).get("levels") or []:
            unthrottled = level.get("target_rate") is None and level.get("sustained_rate") is not None
            if unthrottled and (top is None or level["sustained_rate"] > top[0]):
                top = (level["sustained_rate"], path)
    assert top is not None
    document = json.loads(top[1].read_text())
    for level in document["ingest"]["levels"]:
        if level.get("target_rate") is None:
            level["sustained_rate"] = 123456.0
    top[1].write_text(json.dumps(document))
    after = findings(tmp_path)
    assert [f.directory for f in after] == ["ingest"]
    assert "123,456 documents/s" in after[0].summary
    assert f"{top[0]:,.0f} documents/s" in before.summary
    assert "123,456 documents/s" not in before.summary


def test_the_hot_spread_follows_the_times(tmp_path: Path, published: list[Finding]) -> None:
    """Every time of the slowest run doubled: the spread (slowest / fastest) doubles."""
    shutil.copytree(RESULTS / "representations", tmp_path / "representations")
    before = next(f for f in published if f.directory == "representations")
    spread = float(_first_number(before.title).replace(",", ""))
    hot = {}
    for path in sorted((tmp_path / "representations").glob("analytics.*.json")):
        document = json.loads(path.read_text())
        value = scaling_value(result_model(document | {"_path": str(path)}), "hot")  # type: ignore[arg-type]
        if value is not None:
            hot[path] = value
    path = max(hot, key=hot.__getitem__)
    assert max(hot.values()) / min(hot.values()) == pytest.approx(spread, rel=0.01)
    document = json.loads(path.read_text())
    document["result"] = [[None if t is None else 2 * t for t in row] for row in document["result"]]
    path.write_text(json.dumps(document))
    after = next(f for f in findings(tmp_path) if f.directory == "representations")
    doubled = float(_first_number(after.title).replace(",", ""))
    assert doubled == pytest.approx(2 * spread, rel=0.02)


def test_a_result_that_does_not_read_is_left_out_with_a_note(
    tmp_path: Path, published: list[Finding], capsys: pytest.CaptureFixture[str]
) -> None:
    """A result its model refuses does not count in a finding, and the finding says nothing
    silently: stderr names the file."""
    shutil.copytree(RESULTS / "ingest", tmp_path / "ingest")
    path = sorted((tmp_path / "ingest").glob("*.json"))[0]
    document = json.loads(path.read_text())
    document["tries"] = "three"  # not a count
    path.write_text(json.dumps(document))
    findings(tmp_path)
    assert f"note: left out {path}" in capsys.readouterr().err


def test_commands_are_read_from_the_readme(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        "Made by `docbench run analytics --systems S\n--tries 3` and, in a block:\n\n"
        "```\ndocbench run --data D \\\n  --queries Q\nscripts/x.py D\n```\n"
        "The option `--tries 3` alone is not a command; `docbench run --queries` neither.\n"
        "Summarised by `.venv/bin/python scripts/y.py 'runs/*'`.\n"
    )
    wanted = readme_commands(tmp_path, lambda c: c.startswith("docbench run"))
    assert wanted == ["docbench run --data D --queries Q", "docbench run analytics --systems S --tries 3"]
    scripts = readme_commands(tmp_path, lambda c: "scripts/" in c)
    assert scripts == [".venv/bin/python scripts/y.py 'runs/*'"]
    assert readme_commands(tmp_path / "absent", lambda c: True) == []


def test_the_readme_script_prints_a_stable_markdown_list(published: list[Finding]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    runs = [
        subprocess.run(
            [sys.executable, str(SCRIPT), "docs/results"], cwd=ROOT, capture_output=True, text=True, env=env
        )
        for _ in range(2)
    ]
    assert all(run.returncode == 0 for run in runs), runs[0].stderr
    assert runs[0].stdout == runs[1].stdout == markdown_list(published, "docs/results")
    lines = runs[0].stdout.splitlines()
    assert len(lines) == len(published)
    for line, finding in zip(lines, published, strict=True):
        link = f"docs/results/{finding.directory}"
        assert line.startswith(f"- **{finding.title}.** {finding.summary}")
        assert line.endswith(f"[{link}]({link})") and (ROOT / link).is_dir()
    findings_md = (ROOT / "docs" / "findings.md").read_text()
    assert "<!-- generated by: scripts/readme-findings.py docs/results -->" in findings_md


def test_markdown_tables_become_html() -> None:
    page = markdown_html("A **b** `c<d>` [e](f.html).\n\n| x | y |\n|---|---:|\n| `1` | 2 \\| 3 |\n")
    assert '<p>A <strong>b</strong> <code>c&lt;d&gt;</code> <a href="f.html">e</a>.</p>' in page
    assert '<th class="num">y</th>' in page and '<td class="num">2 | 3</td>' in page
    assert "<td><code>1</code></td>" in page


# ----- the site ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    started = time.monotonic()
    outcome = CliRunner().invoke(main, ["site", str(RESULTS), str(out)])
    assert outcome.exit_code == 0, outcome.output
    assert time.monotonic() - started < 60, "docbench site took more than a minute"
    return out


HREF = re.compile(r'(?:href|src)="([^"#]*)(?:#[^"]*)?"')


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_site_writes_every_page(site: Path, published: list[Finding]) -> None:
    assert (site / "index.html").is_file() and (site / "jsonbench.html").is_file()
    for finding in published:
        page = (site / "findings" / f"{finding.slug}.html").read_text()
        assert finding.files[0] in page and finding.files[-1] in page
        for command in finding.command:
            assert html.escape(command) in page
        assert (site / "results" / finding.files[0]).is_file()  # the named files are there, linked
    index = (site / "index.html").read_text()
    for name in ("jsonbench", "representations", "fidelity"):
        assert f'href="sets/{name}.html"' in index and (site / "sets" / f"{name}.html").is_file()
    assert "docbench run analytics" in index  # a set's command
    jsonbench = (site / "jsonbench.html").read_text()
    assert "docbench compare --against jsonbench" in jsonbench
    assert '"comparison":' in jsonbench
    assert next(f for f in published if f.directory == "jsonbench").files[0] in jsonbench


def test_site_is_self_contained(site: Path) -> None:
    for page in pages(site):
        text = page.read_text()
        assert "<link" not in text and "@import" not in text, page
        for target in HREF.findall(text):
            if not target:
                continue
            assert not re.match(r"[a-z]+:", target), (page, target)  # no http:, file:, //
            assert not target.startswith("/"), (page, target)
            assert (page.parent / target).exists(), (page, target)


class _Browser:
    """test_dashboard's Chromium (DevTools Protocol), with the page's errors and failed requests."""

    def __init__(self, workdir: Path) -> None:
        from test_dashboard import CHROMIUM, Chromium

        missing = pytest.fail if os.environ.get("CI") else pytest.skip
        if not Path(CHROMIUM).exists():
            missing(f"{CHROMIUM} is missing: run scripts/install-chromium.sh")
        self.chromium = Chromium(workdir)
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.chromium.call(f"{domain}.enable")

    def visit(self, page: Path) -> None:
        """Open the page and wait until it is this page that is loaded and rendered (a big
        dashboard before it must not answer for it)."""
        self.chromium.open(page.resolve().as_uri())
        check = (
            f"location.pathname.endsWith({json.dumps('/' + page.name)}) && "
            "document.readyState === 'complete' && !!document.body.dataset.ready"
        )
        deadline = time.monotonic() + 30
        while not self.chromium.js(check):
            assert time.monotonic() < deadline, f"{page} did not render"
            time.sleep(0.05)

    def problems(self) -> list[dict[str, Any]]:
        found = []
        for event in self.chromium.events:
            method = event.get("method")
            params = event.get("params") or {}
            if (
                method in ("Runtime.exceptionThrown", "Network.loadingFailed")
                or (method == "Runtime.consoleAPICalled" and params.get("type") == "error")
                or (method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error")
            ):
                found.append(event)
        return found


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[_Browser]:
    try:
        import websocket  # noqa: F401
    except ImportError:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("the browser test needs websocket-client")
    driven = _Browser(tmp_path)
    try:
        yield driven
    finally:
        driven.chromium.close()


def test_site_in_chromium(site: Path, browser: _Browser, published: list[Finding]) -> None:
    """Every page opens from file:// and every view of every dashboard is clicked: no error in
    the console, no exception, no failed request."""
    chromium = browser.chromium
    visited = []
    for page in pages(site):
        browser.visit(page)
        visited.append(page.relative_to(site).as_posix())
        views = chromium.js("[...document.querySelectorAll('#tabs button')].map(b => b.dataset.view)") or []
        for view in views:
            chromium.click(f'#tabs button[data-view="{view}"]')
            assert chromium.js("document.querySelector('#tabs button.active').dataset.view") == view
        if page == site / "index.html":
            assert "analytics" in views and len(views) >= 3, views
            assert chromium.js("document.querySelectorAll('nav.site-nav a').length") >= len(published) + 2
        if page.parent.name == "findings":
            assert chromium.js("document.querySelectorAll('main table tbody tr').length") >= 1
        if page == site / "jsonbench.html":
            assert views[0] == "compare"
        assert not browser.problems(), (page, browser.problems()[:3])
    assert "index.html" in visited and "jsonbench.html" in visited
    assert {f"findings/{f.slug}.html" for f in published} <= set(visited)
