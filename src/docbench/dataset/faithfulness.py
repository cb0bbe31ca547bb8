"""How faithful a generated dataset is to the real JSONBench stream.

``measure(files)`` reads ndjson files (plain, .gz or .zst) and computes the figures that
methodology §3 publishes for the first 1M documents of JSONBench; ``compare(measured)`` turns
them into checks with the acceptance bound of each (docbench generator issue, point 2).
"""

from __future__ import annotations

import gzip
import io
import json
import statistics
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import orjson

# --------------------------------------------------------------------------- published figures

PUBLISHED_1M: dict = {
    "docs": 1_000_000,
    "mean_doc_bytes": 480.8,
    "gzip_ratio": 3.56,
    "span_minutes": 13.6,
    "events_per_second": 1230.0,
    "no_collection": 5_328,
    "create_share_of_commits": 0.955,
    "delete_to_update": 7.0,
    "collections": {
        "app.bsky.feed.like": 448_944,
        "app.bsky.graph.follow": 360_374,
        "app.bsky.feed.post": 90_816,
        "app.bsky.feed.repost": 58_540,
        "app.bsky.graph.block": 14_040,
        "app.bsky.actor.profile": 11_762,
        "app.bsky.graph.listitem": 8_103,
        "app.bsky.graph.listblock": 895,
        "app.bsky.graph.starterpack": 405,
        "app.bsky.graph.list": 356,
        "app.bsky.feed.threadgate": 255,
        "app.bsky.feed.postgate": 104,
        "app.bsky.feed.generator": 74,
        "app.bsky.labeler.service": 4,
    },
    # (creates, distinct users among creates)
    "creates_users": {
        "app.bsky.feed.like": (444_523, 117_617),
        "app.bsky.graph.follow": (337_978, 63_957),
        "app.bsky.feed.post": (86_812, 50_464),
        "app.bsky.feed.repost": (56_993, 26_581),
        "app.bsky.graph.block": (13_838, 5_785),
        "app.bsky.graph.listitem": (7_568, 1_078),
        "app.bsky.actor.profile": (5_337, 5_337),
    },
    "doc_bytes": {
        "like": 503,
        "repost": 507,
        "follow": 396,
        "block": 393,
        "delete": 198,
        "identity": 227,
        "post": 770,
    },
    "post": {
        "text_median_bytes": 54,
        "reply_share": 0.53,
        "embed_share": 0.34,
        "facets_share": 0.19,
        "langs_share": 0.94,
        "en_share_of_langs": 0.71,
        "non_ascii_share": 0.41,
    },
    "created_lag_median_s": 26.0,
    "created_lag_p90_s": 960.0,
    # Documents of LARGE_DOC_BYTES and more per million. Not published as such: inferred from
    # JSONBench's DuckDB 1.1.3 sizes (about 1.0x the raw ndjson at every scale), which need one
    # such document in nearly every row group; about 2% of row groups compressed at 100m and
    # 0.8% at 1000m give 32-40 per million (native/docbench-gen/README.md, "DuckDB").
    "large_docs_per_million": 35.0,
}

#: DuckDB 1.1.3 stores a whole row group's string column uncompressed when one of its strings
#: is this long or longer (its FSST and dictionary analysis refuse it).
LARGE_DOC_BYTES = 4096
#: Rows of a DuckDB row group.
DUCKDB_ROW_GROUP = 122_880

#: Collections whose share and distinct users are acceptance checks.
TOP7 = [
    "app.bsky.feed.like",
    "app.bsky.graph.follow",
    "app.bsky.feed.post",
    "app.bsky.feed.repost",
    "app.bsky.graph.block",
    "app.bsky.actor.profile",
    "app.bsky.graph.listitem",
]
#: Q2 distinct-user figures that are acceptance checks (within 20%).
Q2_CHECKED = [
    "app.bsky.feed.like",
    "app.bsky.graph.follow",
    "app.bsky.feed.post",
    "app.bsky.feed.repost",
    "app.bsky.graph.block",
]


# --------------------------------------------------------------------------- reading


def open_lines(path: Path) -> Iterator[bytes]:
    """Yield raw lines (with newline) of a plain, .gz or .zst ndjson file."""
    name = path.name
    if name.endswith(".gz"):
        with gzip.open(path, "rb") as f:
            yield from f
    elif name.endswith(".zst"):
        import zstandard

        with open(path, "rb") as raw:
            reader = zstandard.ZstdDecompressor().stream_reader(raw)
            yield from io.BufferedReader(reader, buffer_size=1 << 20)
    else:
        with open(path, "rb", buffering=1 << 20) as f:
            yield from f


def _parse(line: bytes) -> dict | None:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        pass
    try:  # lone surrogates, integers beyond 64 bits: valid JSON that orjson refuses
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _iso_us(s: str) -> int | None:
    try:
        return int(datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() * 1_000_000)
    except ValueError:
        return None


# --------------------------------------------------------------------------- measuring


@dataclass
class Measured:
    docs: int = 0
    invalid_lines: int = 0
    doc_bytes: int = 0
    gzip_in: int = 0
    gzip_out: int = 0
    first_time_us: int | None = None
    last_time_us: int | None = None
    time_strictly_increasing: bool = True
    kinds: Counter = field(default_factory=Counter)
    operations: Counter = field(default_factory=Counter)
    collections: Counter = field(default_factory=Counter)
    creates: Counter = field(default_factory=Counter)
    users: dict = field(default_factory=dict)  # collection -> set of dids among creates
    all_users: set = field(default_factory=set)
    size_sum: Counter = field(default_factory=Counter)
    size_n: Counter = field(default_factory=Counter)
    post_text_bytes: list = field(default_factory=list)
    post_counts: Counter = field(default_factory=Counter)
    created_lag_s: list = field(default_factory=list)
    max_batch: int = 0
    did_web: int = 0
    large_docs: int = 0
    row_groups: int = 0
    row_groups_with_large_doc: int = 0

    def as_dict(self) -> dict:
        span_us = (self.last_time_us or 0) - (self.first_time_us or 0)
        commits = self.kinds.get("commit", 0)
        posts = self.post_counts.get("posts", 0) or 1
        with_langs = self.post_counts.get("langs", 0) or 1
        lags = sorted(self.created_lag_s)
        return {
            "docs": self.docs,
            "invalid_lines": self.invalid_lines,
            "mean_doc_bytes": self.doc_bytes / self.docs if self.docs else 0.0,
            "gzip_ratio": self.gzip_in / self.gzip_out if self.gzip_out else None,
            "gzip_sample_bytes": self.gzip_in,
            "first_time_us": self.first_time_us,
            "last_time_us": self.last_time_us,
            "span_minutes": span_us / 60e6,
            "events_per_second": (self.docs - 1) / (span_us / 1e6) if span_us else None,
            "time_strictly_increasing": self.time_strictly_increasing,
            "kinds": dict(self.kinds),
            "operations": dict(self.operations),
            "create_share_of_commits": self.operations.get("create", 0) / commits if commits else 0,
            "delete_to_update": (
                self.operations.get("delete", 0) / self.operations["update"]
                if self.operations.get("update")
                else None
            ),
            "no_collection": self.docs - sum(self.collections.values()),
            "collections": dict(self.collections.most_common()),
            "creates_users": {c: (n, len(self.users.get(c, ()))) for c, n in self.creates.most_common()},
            "distinct_dids": len(self.all_users),
            "did_web_events": self.did_web,
            "doc_bytes": {k: self.size_sum[k] / self.size_n[k] for k in self.size_n},
            "post": {
                "count": self.post_counts.get("posts", 0),
                "text_median_bytes": (
                    statistics.median(self.post_text_bytes) if self.post_text_bytes else None
                ),
                "text_max_bytes": max(self.post_text_bytes) if self.post_text_bytes else None,
                "reply_share": self.post_counts["reply"] / posts,
                "embed_share": self.post_counts["embed"] / posts,
                "facets_share": self.post_counts["facets"] / posts,
                "langs_share": self.post_counts["langs"] / posts,
                "en_share_of_langs": self.post_counts["en"] / with_langs,
                "non_ascii_share": self.post_counts["non_ascii"] / posts,
                "embed_types": {k[6:]: v for k, v in self.post_counts.items() if k.startswith("embed:")},
            },
            "created_lag_median_s": lags[len(lags) // 2] if lags else None,
            "created_lag_p90_s": lags[int(len(lags) * 0.9)] if lags else None,
            "max_batch": self.max_batch,
            "large_docs_per_million": 1e6 * self.large_docs / self.docs if self.docs else 0.0,
            "row_groups_with_large_doc": (
                self.row_groups_with_large_doc / self.row_groups if self.row_groups else None
            ),
        }


def measure(files: Iterable[Path], gzip_sample_bytes: int | None = None, lag_sample_every: int = 10) -> dict:
    """Figures of a set of ndjson files (in order). ``gzip_sample_bytes`` limits how many bytes
    (from the start) the gzip ratio is computed on (None: everything; level 6 like gzip's
    default). createdAt lags are sampled on every ``lag_sample_every``-th create."""
    m = Measured()
    comp = zlib.compressobj(6, zlib.DEFLATED, 31)
    gz_limit = gzip_sample_bytes if gzip_sample_bytes is not None else 1 << 62
    chunk: list[bytes] = []
    chunk_len = 0
    prev_t = -1
    prev_key = None
    run = 0
    max_batch = 0
    increasing = True
    first_t = None
    t = None
    docs = 0
    invalid = 0
    doc_bytes = 0
    kinds: dict = {}
    ops: dict = {}
    colls: dict = {}
    creates: dict = {}
    users: dict = {}
    size_sum: dict = {}
    size_n: dict = {}
    all_users = m.all_users
    did_web = 0
    loads = orjson.loads
    short_of: dict = {}
    n_creates = 0
    large = large_in_group = groups = groups_with_large = 0
    for path in files:
        for line in open_lines(Path(path)):
            n = len(line)
            if m.gzip_in < gz_limit:
                chunk.append(line)
                chunk_len += n
                m.gzip_in += n
                if chunk_len >= 1 << 22:
                    m.gzip_out += len(comp.compress(b"".join(chunk)))
                    chunk, chunk_len = [], 0
            try:
                doc = loads(line)
            except orjson.JSONDecodeError:
                doc = _parse(line) if line.strip() else None
            if not isinstance(doc, dict) or "time_us" not in doc:
                invalid += 1
                continue
            if line[-1:] != b"\n":
                n += 1
            docs += 1
            doc_bytes += n
            if n - 1 >= LARGE_DOC_BYTES:
                large += 1
                large_in_group += 1
            if docs % DUCKDB_ROW_GROUP == 0:
                groups += 1
                groups_with_large += large_in_group > 0
                large_in_group = 0
            t = doc["time_us"]
            if first_t is None:
                first_t = t
            elif t <= prev_t:
                increasing = False
            prev_t = t
            did = doc.get("did", "")
            all_users.add(did)
            if did[:8] == "did:web:":
                did_web += 1
            kind = doc.get("kind")
            kinds[kind] = kinds.get(kind, 0) + 1
            c = doc.get("commit") if kind == "commit" else None
            if c is None:
                size_sum[kind] = size_sum.get(kind, 0) + n
                size_n[kind] = size_n.get(kind, 0) + 1
                prev_key = None
                run = 1
                continue
            key = (did, c.get("rev"))
            if key == prev_key:
                run += 1
                if run > max_batch:
                    max_batch = run
            else:
                run = 1
            prev_key = key
            op = c.get("operation")
            coll = c.get("collection")
            ops[op] = ops.get(op, 0) + 1
            colls[coll] = colls.get(coll, 0) + 1
            if op == "create":
                creates[coll] = creates.get(coll, 0) + 1
                u = users.get(coll)
                if u is None:
                    u = users[coll] = set()
                u.add(did)
                short = short_of.get(coll)
                if short is None:
                    short = short_of[coll] = coll.rsplit(".", 1)[-1] if coll else "?"
                size_sum[short] = size_sum.get(short, 0) + n
                size_n[short] = size_n.get(short, 0) + 1
                n_creates += 1
                rec = c.get("record")
                if isinstance(rec, dict):
                    if n_creates % lag_sample_every == 0:
                        created = rec.get("createdAt")
                        cu = _iso_us(created) if isinstance(created, str) else None
                        if cu is not None:
                            m.created_lag_s.append((t - cu) / 1e6)
                    if coll == "app.bsky.feed.post":
                        _post(m, rec)
            else:
                size_sum[op] = size_sum.get(op, 0) + n
                size_n[op] = size_n.get(op, 0) + 1
    if chunk:
        m.gzip_out += len(comp.compress(b"".join(chunk)))
    m.gzip_out += len(comp.flush())
    m.docs, m.invalid_lines, m.doc_bytes = docs, invalid, doc_bytes
    m.first_time_us, m.last_time_us, m.time_strictly_increasing = first_t, t, increasing
    m.kinds.update(kinds)
    m.operations.update(ops)
    m.collections.update({k: v for k, v in colls.items() if k is not None})
    m.creates.update(creates)
    m.users = users
    m.size_sum.update(size_sum)
    m.size_n.update(size_n)
    m.max_batch = max(max_batch, 1 if docs else 0)
    m.did_web = did_web
    m.large_docs, m.row_groups, m.row_groups_with_large_doc = large, groups, groups_with_large
    return m.as_dict()


def _post(m: Measured, rec: dict) -> None:
    pc = m.post_counts
    pc["posts"] += 1
    text = rec.get("text", "")
    m.post_text_bytes.append(len(text.encode("utf-8", "surrogatepass")))
    if "reply" in rec:
        pc["reply"] += 1
    embed = rec.get("embed")
    if isinstance(embed, dict):
        pc["embed"] += 1
        pc["embed:" + str(embed.get("$type", "?")).rsplit(".", 1)[-1]] += 1
    if "facets" in rec:
        pc["facets"] += 1
    langs = rec.get("langs")
    if langs:
        pc["langs"] += 1
        if "en" in langs:
            pc["en"] += 1
    if not text.isascii():
        pc["non_ascii"] += 1


# --------------------------------------------------------------------------- checks


@dataclass
class Check:
    name: str
    measured: float | None
    published: float
    bound: float  # allowed relative deviation
    note: str = ""

    @property
    def deviation(self) -> float | None:
        if self.measured is None or not self.published:
            return None
        return (self.measured - self.published) / self.published

    @property
    def ok(self) -> bool:
        d = self.deviation
        return d is not None and abs(d) <= self.bound


def compare(measured: dict, scale_docs: int | None = None) -> list[Check]:
    """Acceptance checks of a 1M-document dataset against the published figures. Counts are
    scaled to ``scale_docs`` documents (default: the measured count) so a smaller sample can be
    compared for shares; distinct-user checks are only meaningful at exactly 1M documents."""
    p = PUBLISHED_1M
    docs = measured["docs"] or 1
    factor = 1_000_000 / docs if scale_docs is None else 1_000_000 / scale_docs
    checks = [
        Check("mean document size (B)", measured["mean_doc_bytes"], p["mean_doc_bytes"], 0.05),
        Check("gzip ratio", measured["gzip_ratio"], p["gzip_ratio"], 0.10),
    ]
    for coll in TOP7:
        share = measured["collections"].get(coll, 0) / docs
        checks.append(
            Check(f"share {coll.rsplit('.', 1)[-1]}", share, p["collections"][coll] / p["docs"], 0.10)
        )
    for coll in Q2_CHECKED:
        n_users = measured["creates_users"].get(coll, (0, 0))[1]
        checks.append(
            Check(
                f"distinct users {coll.rsplit('.', 1)[-1]}",
                n_users * 1.0,
                p["creates_users"][coll][1] / factor,
                0.20,
                "Q2 distinct did among creates",
            )
        )
    checks.append(
        Check("span (minutes)", measured["span_minutes"], p["span_minutes"] / factor, 0.05, "13-14 min at 1M")
    )
    checks.append(
        Check(
            "no-collection events",
            measured["no_collection"] * 1.0,
            p["no_collection"] / factor,
            0.10,
            "identity + account",
        )
    )
    checks.append(
        Check(
            f"docs >= {LARGE_DOC_BYTES} B per million",
            measured["large_docs_per_million"],
            p["large_docs_per_million"],
            0.5,
            "inferred from DuckDB 1.1.3's published sizes",
        )
    )
    return checks


def acceptance_ok(checks: list[Check]) -> bool:
    return all(c.ok for c in checks)
