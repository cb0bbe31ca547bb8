"""``docbench bench generate --faithfulness SCALE``: the generated stream at 10m, 100m or 1000m
against the published figures of the real one, with nothing written to disk.

Each file of the dataset ``docbench generate --docs SCALE`` would write (same seed, same hard
documents) is generated into a pipe that the oracle's native scanner reads; the per-file
aggregates are merged as the oracle merges them. Figures (issue #15's, from the first N events
of the public JSONBench files; at 10m JSONBench's published VictoriaLogs query results):
creates and distinct users per collection, all events per collection (Q1), the time span
(max - min ``time_us``), and the hour-of-day profile of the creates (Q3's collections). The
span counts the documents the scanner takes (all but the hard ones, which have no say on it).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from docbench.core.console import report_console
from docbench.core.jsontypes import as_int, optional_str
from docbench.dataset import native_scan, oracle
from docbench.dataset.faithfulness import PUBLISHED_1M
from docbench.dataset.generate import DEFAULT_HARD_RATE, docs_per_file_default, ensure_binary
from docbench.dataset.oracle.document import answer_rows

HOUR_US = 3_600_000_000

# Creates and distinct users (dids) of the eight big collections, per scale. 10m (and list
# blocks at 1m): JSONBench's published VictoriaLogs query results (Q1, Q2) of the first 10m.
PUBLISHED_CREATES: dict[int, dict[str, tuple[int, int]]] = {
    1_000_000: {**PUBLISHED_1M["creates_users"], "app.bsky.graph.listblock": (860, 449)},
    10_000_000: {
        "app.bsky.feed.like": (4_631_335, 694_849),
        "app.bsky.graph.follow": (3_220_534, 463_192),
        "app.bsky.feed.post": (895_614, 327_190),
        "app.bsky.feed.repost": (582_487, 188_549),
        "app.bsky.graph.block": (139_918, 45_808),
        "app.bsky.graph.listitem": (72_005, 7_097),
        "app.bsky.actor.profile": (57_530, 54_333),
        "app.bsky.graph.listblock": (9_994, 5_104),
    },
    100_000_000: {
        "app.bsky.feed.like": (44_526_587, 2_576_215),
        "app.bsky.graph.follow": (34_272_827, 2_389_002),
        "app.bsky.feed.post": (8_377_929, 1_346_617),
        "app.bsky.feed.repost": (5_466_952, 829_331),
        "app.bsky.graph.block": (1_407_243, 273_510),
        "app.bsky.graph.listitem": (739_276, 37_824),
        "app.bsky.actor.profile": (500_177, 415_188),
        "app.bsky.graph.listblock": (81_692, 34_441),
    },
    1_000_000_000: {
        "app.bsky.feed.like": (466_968_931, 6_706_985),
        "app.bsky.graph.follow": (305_309_503, 8_451_054),
        "app.bsky.feed.post": (89_872_104, 3_941_525),
        "app.bsky.feed.repost": (57_256_309, 2_537_616),
        "app.bsky.graph.block": (15_886_733, 1_335_278),
        "app.bsky.graph.listitem": (7_058_495, 163_053),
        "app.bsky.actor.profile": (3_176_569, 3_091_389),
        "app.bsky.graph.listblock": (750_417, 238_996),
    },
}
# All events per collection (Q1; None: no collection), per scale.
PUBLISHED_EVENTS: dict[int, dict[str | None, int]] = {
    1_000_000: {**PUBLISHED_1M["collections"], None: PUBLISHED_1M["no_collection"]},
    10_000_000: {
        "app.bsky.feed.like": 4_673_017,
        "app.bsky.graph.follow": 3_387_006,
        "app.bsky.feed.post": 930_269,
        "app.bsky.feed.repost": 597_193,
        "app.bsky.graph.block": 142_218,
        "app.bsky.actor.profile": 118_646,
        "app.bsky.graph.listitem": 75_984,
        None: 53_826,
        "app.bsky.graph.listblock": 10_467,
        "app.bsky.graph.starterpack": 3_619,
        "app.bsky.graph.list": 3_414,
        "app.bsky.feed.threadgate": 2_554,
        "app.bsky.feed.postgate": 1_076,
        "app.bsky.feed.generator": 686,
        "app.bsky.labeler.service": 13,
        "app.kollective.catalog": 6,
    },
    100_000_000: {
        "app.bsky.feed.like": 44_994_712,
        "app.bsky.graph.follow": 36_362_556,
        "app.bsky.feed.post": 8_740_921,
        "app.bsky.feed.repost": 5_625_691,
        "app.bsky.graph.block": 1_433_188,
        "app.bsky.actor.profile": 1_118_161,
        "app.bsky.graph.listitem": 913_702,
        None: 603_435,
        "app.bsky.graph.listblock": 86_211,
        "app.bsky.graph.list": 35_906,
        "app.bsky.graph.starterpack": 35_656,
        "app.bsky.feed.threadgate": 28_676,
        "app.bsky.feed.postgate": 12_751,
        "app.bsky.feed.generator": 7_636,
        "app.top8.theme": 684,
        "app.bsky.labeler.service": 40,
        "app.kollective.catalog": 39,
        "app.kollective.profile": 3,
    },
}
# max - min time_us of the first N events, in hours.
PUBLISHED_SPAN_HOURS: dict[int, float] = {
    1_000_000: 13.55 / 60,
    10_000_000: 2.2,
    100_000_000: 18.5,
    1_000_000_000: 12.34 * 24,
}


@dataclass
class Figure:
    name: str
    generated: float
    published: float | None

    @property
    def error(self) -> float | None:
        if not self.published:
            return None
        return self.generated / self.published - 1.0


def generated_stream(
    docs: int, jobs: int, seed: int = 1, progress=None
) -> tuple[oracle.Partial, int | None, int | None, float]:
    """The merged partial of the ``docs`` documents, their time span, and the seconds."""
    scanner = native_scan.find_scanner()
    if scanner is None:
        raise RuntimeError("the oracle's native scanner is not built: run `make native`")
    generator = ensure_binary(quiet=True)
    per_file = docs_per_file_default()
    files = -(-docs // per_file)
    total = oracle.Partial()
    span: list[int] = []
    started = time.perf_counter()

    def one(k: int) -> native_scan.NativeResult:
        count = min(per_file, docs - (k - 1) * per_file)
        command = [
            str(generator),
            "--file",
            str(k),
            "--seed",
            str(seed),
            "--docs-per-file",
            str(per_file),
            "--count",
            str(count),
            "--out",
            "-",
            "--hard-rate",
            repr(float(DEFAULT_HARD_RATE)),
            "--progress-every",
            str(10**12),
        ]
        return native_scan.scan_output_of(scanner, command, oracle.POST)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for result in pool.map(one, range(1, files + 1)):
            total.merge(oracle.native_partial(result))
            for key in ("time_min", "time_max"):
                if result.header.get(key) is not None:
                    span.append(result.header[key])
            if progress is not None:
                progress(result.header["lines"])
    return total, min(span, default=None), max(span, default=None), time.perf_counter() - started


def figures(
    docs: int, part: oracle.Partial, t_min: int | None, t_max: int | None
) -> tuple[list[Figure], list[float]]:
    """The figures against the published ones (where there are some), and the share of the
    timed creates (Q3's collections) per UTC hour."""
    answers = oracle.finalize(part, [])
    q1 = {optional_str(coll, "collection"): as_int(n, "count") for coll, n in answer_rows(answers, "q1")}
    q2 = {
        optional_str(coll, "collection"): (as_int(n, "creates"), as_int(users, "users"))
        for coll, n, users in answer_rows(answers, "q2")
    }
    out: list[Figure] = []
    creates = PUBLISHED_CREATES.get(docs, {})
    for coll in creates or list(q2)[:8]:
        n, users = q2.get(coll, (0, 0))
        real = creates.get(coll) if coll is not None else None
        out.append(Figure(f"{coll} creates", n, real[0] if real else None))
        out.append(Figure(f"{coll} distinct users", users, real[1] if real else None))
    events = PUBLISHED_EVENTS.get(docs)
    if events:
        for coll, published in events.items():
            out.append(Figure(f"Q1 {coll or '(no collection)'}", q1.get(coll, 0), published))
        out.append(Figure("Q1 groups", len(q1), len(events)))
    if t_min is not None and t_max is not None:
        out.append(Figure("time span (hours)", (t_max - t_min) / HOUR_US, PUBLISHED_SPAN_HOURS.get(docs)))
    hours = [0] * 24
    for _, hour, count in answer_rows(answers, "q3"):
        if hour is not None:
            hours[as_int(hour, "hour")] += as_int(count, "count")
    total = sum(hours) or 1
    return out, [h / total for h in hours]


def _number(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def print_faithfulness(docs: int, jobs: int, console: Console | None = None) -> list[Figure]:
    console = console or report_console()
    part, t_min, t_max, seconds = generated_stream(docs, jobs)
    out, profile = figures(docs, part, t_min, t_max)
    table = Table(title=f"Generated {docs:,} documents vs the real stream (published figures)")
    for column in ("figure", "generated", "published", "error"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for fig in out:
        error = fig.error
        shown = "" if error is None else f"{error:+.1%}"
        if error is not None and abs(error) > 0.10:
            shown = f"[red]{shown}[/red]"
        table.add_row(fig.name, _number(fig.generated), _number(fig.published), shown)
    console.print(table)
    console.print(
        "creates per UTC hour (post/repost/like, share of the day): "
        + " ".join(f"{h:02d}:{share:.3f}" for h, share in enumerate(profile))
    )
    rate = docs / seconds if seconds else 0.0
    console.print(
        f"{docs:,} documents generated and counted in {seconds:.1f} s "
        f"({rate:,.0f} docs/s, jobs={jobs}); nothing written to disk"
    )
    return out


__all__ = [
    "PUBLISHED_CREATES",
    "PUBLISHED_EVENTS",
    "PUBLISHED_SPAN_HOURS",
    "Figure",
    "figures",
    "generated_stream",
    "print_faithfulness",
]
