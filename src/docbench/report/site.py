"""``docbench site RESULTS_ROOT OUT``: the published results as one static site.

Nothing is fetched when a page is viewed and every link is relative, so the site works from
``file://``, attached to a mail or served as is::

    OUT/index.html             the dashboard over every result under RESULTS_ROOT (the latest run
                               of each identity, as `docbench report --results RESULTS_ROOT`),
                               the list of result sets with the commands that made them
    OUT/sets/NAME.html         the dashboard of one result directory alone (a run that a later
                               run of the same identity in another directory hides on the
                               index is shown here)
    OUT/findings/SLUG.html     one page per finding (report/findings.py): its summary, its table,
                               the result files it read and the command that made them
    OUT/jsonbench.html         `docbench compare --against jsonbench RESULTS_ROOT/jsonbench`: the
                               Compare view against JSONBench's published figures
    OUT/results/...            a copy of RESULTS_ROOT: the files every page names, linked

The dashboard pages are report/html.py's, with the site's navigation and the result files and
commands of the page added around them.
"""

from __future__ import annotations

import html
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from docbench.core.jsontypes import as_str
from docbench.report.findings import Finding, findings, readme_commands
from docbench.report.html import build_payload, render_dashboard
from docbench.results.files import latest_documents, load_results

RESULTS = "results"  # where the copy of RESULTS_ROOT goes inside OUT

STYLE = """
body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Roboto, Helvetica,
  Arial, sans-serif; color: #1b1f24; background: #fff; font-size: 14px; }
.site-nav { display: flex; flex-wrap: wrap; gap: 4px 14px; padding: 8px 24px; background: #1b1f24;
  font-size: 13px; }
.site-nav a { color: #ffcc00; text-decoration: none; }
.site-nav a.here { color: #fff; font-weight: bold; }
.site-nav .group { color: #9aa4b1; }
.site-page, .site-files { padding: 0 24px; max-width: 1200px; }
.site-page h1 { font-size: 24px; margin: 18px 0 8px; }
.site-page h2, .site-files h2 { font-size: 18px; margin: 22px 0 6px; }
.site-page table, .site-files table { border-collapse: collapse; margin: 6px 0 12px; }
.site-page th, .site-page td, .site-files th, .site-files td { border: 1px solid #d9dee5;
  padding: 3px 8px; text-align: left; vertical-align: top; }
.site-page td.num, .site-page th.num { text-align: right; font-variant-numeric: tabular-nums; }
.site-page code, .site-files code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas,
  monospace; background: #f5f7fa; padding: 0 3px; border-radius: 3px; }
.site-page pre, .site-files pre { background: #f5f7fa; padding: 8px; white-space: pre-wrap;
  word-break: break-all; }
.site-page .summary { font-size: 16px; max-width: 900px; }
.site-page ul.files, .site-files ul.files { columns: 2; font-size: 12px; }
.site-files details { margin: 6px 0; }
"""


@dataclass
class Site:
    """What the pages link to: the result sets, the findings and the pages there are."""

    root: Path
    out: Path
    sets: list[str] = field(default_factory=list)
    found: list[Finding] = field(default_factory=list)
    jsonbench: bool = False


# ----- Markdown (the findings' own: paragraphs, pipe tables, code, bold, links) ----------------


def inline(text: str) -> str:
    """One line of Markdown as HTML: `code`, **bold**, [text](link); the rest escaped."""
    parts = re.split(r"(`[^`]+`)", text)
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
            continue
        escaped = html.escape(part)
        escaped = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped)
        escaped = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', escaped)
        out.append(escaped)
    return "".join(out)


def _cells(line: str) -> list[str]:
    inner = line.strip().removeprefix("|").removesuffix("|")
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", inner)]


def markdown_html(text: str) -> str:
    """The findings' Markdown as HTML: pipe tables (right-aligned columns kept) and paragraphs."""
    blocks: list[str] = []
    lines = text.strip().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("|") and i + 1 < len(lines) and set(lines[i + 1].strip()) <= set("|-: "):
            head = _cells(line)
            right = [cell.endswith(":") for cell in _cells(lines[i + 1])]
            i += 2
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1

            def cls(column: int, right: list[bool] = right) -> str:
                return ' class="num"' if column < len(right) and right[column] else ""

            blocks.append(
                "<table><thead><tr>"
                + "".join(f"<th{cls(c)}>{inline(h)}</th>" for c, h in enumerate(head))
                + "</tr></thead><tbody>"
                + "".join(
                    "<tr>" + "".join(f"<td{cls(c)}>{inline(v)}</td>" for c, v in enumerate(row)) + "</tr>"
                    for row in rows
                )
                + "</tbody></table>"
            )
            continue
        paragraph = []
        while i < len(lines) and lines[i].strip() and not lines[i].lstrip().startswith("|"):
            paragraph.append(lines[i].strip())
            i += 1
        if paragraph:
            blocks.append(f"<p>{inline(' '.join(paragraph))}</p>")
        else:
            i += 1
    return "\n".join(blocks)


# ----- the pieces every page has ---------------------------------------------------------------


def _up(depth: int) -> str:
    return "../" * depth


def navigation(site: Site, here: str, depth: int) -> str:
    """The site's links, relative to a page ``depth`` directories below OUT."""
    up = _up(depth)

    def link(target: str, text: str) -> str:
        mark = ' class="here"' if target == here else ""
        return f'<a href="{up}{target}"{mark}>{html.escape(text)}</a>'

    links = [link("index.html", "Dashboard (all results)")]
    if site.jsonbench:
        links.append(link("jsonbench.html", "Against JSONBench"))
    links.append('<span class="group">Findings:</span>')
    links += [link(f"findings/{f.slug}.html", f.slug) for f in site.found]
    links.append('<span class="group">Result sets:</span>')
    links += [link(f"sets/{name}.html", name) for name in site.sets]
    return '<nav class="site-nav" aria-label="site">' + "".join(links) + "</nav>"


def files_list(files: list[str], depth: int) -> str:
    up = _up(depth)
    items = "".join(
        f'<li><a href="{up}{RESULTS}/{html.escape(f)}"><code>{html.escape(f)}</code></a></li>' for f in files
    )
    return f'<ul class="files">{items}</ul>'


def commands_block(commands: list[str]) -> str:
    if not commands:
        return "<p>The result directory's README states no command.</p>"
    return "<pre>" + "\n".join(html.escape(c) for c in commands) + "</pre>"


def _page(title: str, nav: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="docbench">\n<title>{html.escape(title)}</title>\n'
        f"<style>{STYLE}</style>\n</head>\n"
        f'<body data-ready="1">\n{nav}\n<main class="site-page">\n{body}\n</main>\n</body>\n</html>\n'
    )


def _with_site(page: str, nav: str, section: str) -> str:
    """A dashboard page with the site's style and navigation at its top and ``section`` (the
    result files and commands) before its footer."""
    page = page.replace("</head>", f"<style>{STYLE}</style>\n</head>", 1)
    before, found, after = page.partition("<body>")
    if not found:
        raise ValueError("dashboard page lacks <body>")
    page = before + found + "\n" + nav + after
    before, found, after = page.partition('<footer id="footer">')
    if not found:
        raise ValueError("dashboard page lacks its footer")
    return before + f'<section class="site-files">{section}</section>\n' + found + after


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _relative(path: str | Path, root: Path) -> str:
    resolved = Path(str(path)).resolve()
    try:
        return resolved.relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(str(path)).as_posix()


def _set_commands(directory: Path) -> list[str]:
    return readme_commands(directory, lambda c: c.startswith("docbench ") or "scripts/" in c.split()[0])


# ----- the pages -------------------------------------------------------------------------------


def result_sets(root: Path) -> list[str]:
    """The directories under ``root`` that hold docbench results."""
    return [
        d.name
        for d in sorted(root.iterdir())
        if d.is_dir() and not d.name.startswith(".") and load_results([d])
    ]


def sets_section(site: Site, depth: int) -> str:
    up = _up(depth)
    rows = []
    for name in site.sets:
        directory = site.root / name
        files = sorted(_relative(as_str(d["_path"], "_path"), site.root) for d in load_results([directory]))
        readme = (
            f' <a href="{up}{RESULTS}/{name}/README.md">README</a>'
            if (directory / "README.md").is_file()
            else ""
        )
        rows.append(
            f'<details><summary><a href="{up}sets/{name}.html">{html.escape(name)}</a>: '
            f"{len(files)} result files{readme}</summary>"
            f"<p>Made by:</p>{commands_block(_set_commands(directory))}{files_list(files, depth)}</details>"
        )
    return "<h2>Result sets: their files and the commands that made them</h2>" + "".join(rows)


def write_index(site: Site) -> Path:
    documents = latest_documents(load_results([site.root]))
    page = render_dashboard(build_payload(documents))
    shown = sorted(_relative(as_str(d["_path"], "_path"), site.root) for d in documents)
    section = (
        sets_section(site, 0)
        + f"<h2>The {len(shown)} result files this dashboard shows</h2>"
        + "<p>The latest run of each identity (workload, system, variant, data, machine) under "
        + f"<code>{html.escape(site.root.as_posix())}</code>: a run that a later run of the same "
        + "identity in another result set hides is on that set's page. This page is "
        + f"<code>docbench report --results {html.escape(site.root.as_posix())} --html</code>'s "
        + f"dashboard, written by <code>docbench site {html.escape(site.root.as_posix())} OUT</code>.</p>"
        + f"<details><summary>The {len(shown)} files</summary>{files_list(shown, 0)}</details>"
    )
    nav = navigation(site, "index.html", 0) + findings_box(site)
    out = site.out / "index.html"
    _write(out, _with_site(page, nav, section))
    return out


def findings_box(site: Site) -> str:
    """The findings' titles, linked, above the index's dashboard."""
    if not site.found:
        return ""
    items = "".join(f'<li><a href="findings/{f.slug}.html">{inline(f.title)}</a></li>' for f in site.found)
    return f'<section class="site-files site-findings"><h2>Findings</h2><ul>{items}</ul></section>'


def write_set(site: Site, name: str) -> Path:
    directory = site.root / name
    documents = load_results([directory])
    page = render_dashboard(build_payload(latest_documents(documents)))
    files = sorted(_relative(as_str(d["_path"], "_path"), site.root) for d in documents)
    section = (
        f"<h2>Result set {html.escape(name)}: {len(files)} result files</h2>"
        f"<p>Made by (the directory's README):</p>{commands_block(_set_commands(directory))}"
        f"<p>Shown with <code>docbench report --results {html.escape((site.root / name).as_posix())} "
        "--html</code>.</p>" + files_list(files, 1)
    )
    out = site.out / "sets" / f"{name}.html"
    _write(out, _with_site(page, navigation(site, f"sets/{name}.html", 1), section))
    return out


def write_finding(site: Site, finding: Finding) -> Path:
    directory = site.root / finding.directory
    readme = (
        f' (<a href="../{RESULTS}/{finding.directory}/README.md">its README</a>)'
        if (directory / "README.md").is_file()
        else ""
    )
    where = (
        f'<a href="../sets/{finding.directory}.html">{html.escape(finding.directory)}</a>'
        if finding.directory in site.sets
        else f"<code>{html.escape(finding.directory)}</code>"
    )
    body = (
        f"<h1>{inline(finding.title)}</h1>\n"
        f'<div class="summary">{markdown_html(finding.summary)}</div>\n'
        f"<h2>The figures</h2>\n{markdown_html(finding.details)}\n"
        f"<h2>The command that made them</h2>\n<p>As the result directory {where}{readme} states it:</p>\n"
        f"{commands_block(finding.command)}\n"
        f"<h2>The result files read ({len(finding.files)})</h2>\n{files_list(finding.files, 1)}\n"
        "<p>Every figure above is computed from these files by <code>docbench site</code> "
        "(<code>docbench.report.findings</code>); <code>scripts/readme-findings.py</code> prints "
        "the same summaries.</p>"
    )
    out = site.out / "findings" / f"{finding.slug}.html"
    _write(
        out, _page(f"docbench: {finding.title}", navigation(site, f"findings/{finding.slug}.html", 1), body)
    )
    return out


def write_jsonbench(site: Site) -> Path | None:
    from docbench.report.compare import compare, load_set, published_jsonbench, to_json
    from docbench.report.compare.sets import NoResults

    directory = site.root / "jsonbench"
    try:
        comparison = compare(published_jsonbench("baseline"), load_set([directory], "contender"), 0.1)
    except NoResults:
        return None
    page = render_dashboard({**build_payload([]), "comparison": to_json(comparison)})
    files = sorted({_relative(str(p.contender["_path"]), site.root) for p in comparison.pairs})
    alone = sorted({_relative(str(d["_path"]), site.root) for d in comparison.only_contender})
    published = comparison.baseline.published or {}
    section = (
        "<h2>What this page compares</h2>"
        f"<p>Baseline: JSONBench's published results ({html.escape(str(published.get('source')))} at "
        f"{html.escape(str(published.get('commit'))[:12])}, "
        f"{html.escape(str(published.get('commit_date')))}), "
        "shipped with docbench. Contender: the result files below. Made by:</p>"
        + commands_block(
            [f"docbench compare --against jsonbench {directory.as_posix()} --html jsonbench.html"]
            + [c for c in _set_commands(directory) if not c.startswith("docbench compare")]
        )
        + f"<h2>The {len(files)} result files paired with a published one</h2>"
        + files_list(files, 0)
        + (f"<h2>{len(alone)} with no JSONBench counterpart</h2>" + files_list(alone, 0) if alone else "")
    )
    out = site.out / "jsonbench.html"
    _write(out, _with_site(page, navigation(site, "jsonbench.html", 0), section))
    return out


def write_site(results_root: Path, out: Path) -> tuple[list[Path], float]:
    """Write the site; the pages written and the seconds it took."""
    started = time.monotonic()
    if not results_root.is_dir():
        raise ValueError(f"{results_root}: not a directory")
    site = Site(results_root, out, result_sets(results_root), findings(results_root))
    site.jsonbench = (results_root / "jsonbench").is_dir()
    for generated in (out / RESULTS, out / "findings", out / "sets"):
        if generated.exists():
            shutil.rmtree(generated)
    shutil.copytree(results_root, out / RESULTS, ignore=shutil.ignore_patterns(".*"))
    pages = []
    if site.jsonbench:  # first: the other pages link to it only when it was written
        written = write_jsonbench(site)
        site.jsonbench = written is not None
        pages += [written] if written is not None else []
    pages.insert(0, write_index(site))
    pages += [write_finding(site, finding) for finding in site.found]
    pages += [write_set(site, name) for name in site.sets]
    return pages, time.monotonic() - started
