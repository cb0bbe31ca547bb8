"""The dataset generator: determinism, well-formed documents, hard documents, dirty lines,
compression, manifest merging, and the 1M acceptance figures (methodology §3)."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import sys
import time
from pathlib import Path

import orjson
import pytest

from docbench.dataset import faithfulness
from docbench.dataset.generate import GeneratorError, generate_dataset, parse_file_selection
from docbench.dataset.manifest import read_manifest

DPF = 20_000  # documents per file in the small datasets
N_SMALL = 3 * DPF

DID = re.compile(r"^did:(plc:[a-z2-7]{24}|web:[a-z0-9.-]+)$")
TID = re.compile(r"^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$")
CID = re.compile(r"^bafyrei[a-z2-7]{52}$")
BLOB_CID = re.compile(r"^bafkrei[a-z2-7]{52}$")
T0 = 1_732_206_349_000_167


def small(out: Path, **kw):
    kw.setdefault("docs_per_file", DPF)
    kw.setdefault("quiet", True)
    kw.setdefault("answers", False)
    return generate_dataset(kw.pop("n_docs", N_SMALL), out, **kw)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def loads(line: bytes):
    """Parse like a lenient reader: orjson, else Python's json (lone surrogates, big ints)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 10_000))
        try:
            return json.loads(line.decode("utf-8"))
        finally:
            sys.setrecursionlimit(old)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "a"
    small(out, jobs=1)
    return out


def test_file_selection_parsing():
    assert parse_file_selection(None, 3) == [1, 2, 3]
    assert parse_file_selection("1,3-5", 9) == [1, 3, 4, 5]
    with pytest.raises(ValueError):
        parse_file_selection("4", 3)


def test_layout_and_manifest(dataset: Path):
    m = read_manifest(dataset)
    assert m is not None and m.is_complete()
    assert [f.name for f in m.files] == ["file_0001.json", "file_0002.json", "file_0003.json"]
    assert m.docs == N_SMALL and m.docs_present() == N_SMALL and m.files_total == 3
    assert m.seed == 1 and m.hard_rate == pytest.approx(1e-6) and m.dirty_rate == 0
    for f in m.files:
        p = dataset / f.name
        assert p.stat().st_size == f.bytes
        assert sha(p) == f.sha256
        assert f.docs == DPF and f.lines == DPF
    # Time windows: file 1 starts at T0, each file after the one before, at the stream's rate
    # at its start (~1230 events/s; the rate model varies it with the hour of the day).
    assert m.files[0].first_time_us == T0
    for before, after in zip(m.files, m.files[1:], strict=False):
        assert before.first_time_us < before.last_time_us < after.first_time_us
    seconds = (m.files[-1].last_time_us - T0) / 1e6
    assert 1_150 < N_SMALL / seconds < 1_300


def test_same_bytes_whatever_jobs(dataset: Path, tmp_path: Path):
    b = tmp_path / "b"
    small(b, jobs=3)
    for name in ("file_0001.json", "file_0002.json", "file_0003.json"):
        assert (dataset / name).read_bytes() == (b / name).read_bytes()
    ma, mb = read_manifest(dataset), read_manifest(b)
    assert [f.sha256 for f in ma.files] == [f.sha256 for f in mb.files]
    assert ma.hard_documents == mb.hard_documents


def test_piecewise_generation_merges_manifest(dataset: Path, tmp_path: Path):
    c = tmp_path / "c"
    small(c, only_files="2")
    m = read_manifest(c)
    assert [f.number for f in m.files] == [2] and not m.is_complete()
    assert sha(c / "file_0002.json") == sha(dataset / "file_0002.json")
    small(c, only_files="1,3", jobs=2)
    m = read_manifest(c)
    full = read_manifest(dataset)
    assert m.is_complete()
    assert [(f.name, f.sha256, f.docs) for f in m.files] == [(f.name, f.sha256, f.docs) for f in full.files]
    assert m.hard_documents == full.hard_documents
    # A different dataset cannot be merged into a partial one.
    with pytest.raises(GeneratorError):
        small(c, seed=2, only_files="1")


def test_last_file_is_a_prefix(dataset: Path, tmp_path: Path):
    d = tmp_path / "d"
    small(d, n_docs=DPF + 5_000)
    full = (dataset / "file_0002.json").read_bytes().splitlines(keepends=True)
    part = (d / "file_0002.json").read_bytes().splitlines(keepends=True)
    assert len(part) == 5_000 and part == full[:5_000]
    assert read_manifest(d).files[-1].docs == 5_000


def _check_sorted_keys(obj, where: str) -> None:
    if isinstance(obj, dict):
        keys = list(obj)
        if obj.get("$type") == "blob":  # Jetstream writes blobs as $type, ref, mimeType, size
            assert keys == ["$type", "ref", "mimeType", "size"], where
            assert BLOB_CID.match(obj["ref"]["$link"]), where
        else:
            assert keys == sorted(keys, key=lambda k: k.encode()), f"{where}: {keys}"
        for k, v in obj.items():
            if k != "nested":
                _check_sorted_keys(v, where)
    elif isinstance(obj, list):
        for v in obj:
            _check_sorted_keys(v, where)


def test_documents_are_well_formed(dataset: Path):
    m = read_manifest(dataset)
    kinds: dict[str, int] = {}
    ops: dict[str, int] = {}
    prev_t = 0
    n = 0
    for f in m.files:
        for i, line in enumerate((dataset / f.name).open("rb"), start=1):
            where = f"{f.name}:{i}"
            assert line.endswith(b"\n") and b"\n" not in line[:-1], where
            doc = loads(line)
            n += 1
            kind = doc["kind"]
            kinds[kind] = kinds.get(kind, 0) + 1
            assert list(doc) == ["did", "time_us", "kind", kind], where
            assert DID.match(doc["did"]), where
            assert isinstance(doc["time_us"], int) and doc["time_us"] > prev_t, where
            prev_t = doc["time_us"]
            body = doc[kind]
            if kind == "commit":
                op = body["operation"]
                ops[op] = ops.get(op, 0) + 1
                if op == "delete":
                    assert list(body) == ["rev", "operation", "collection", "rkey"], where
                else:
                    assert list(body) == ["rev", "operation", "collection", "rkey", "record", "cid"], where
                    assert CID.match(body["cid"]), where
                    rec = body["record"]
                    assert rec["$type"] == body["collection"], where
                    _check_sorted_keys(rec, where)
                assert TID.match(body["rev"]), where
                assert body["collection"].startswith("app.bsky."), where
                assert (
                    TID.match(body["rkey"])
                    or body["rkey"] == "self"
                    or body["collection"] == "app.bsky.feed.generator"
                ), where
            elif kind == "identity":
                assert list(body)[:1] == ["did"] and body["did"] == doc["did"], where
                assert isinstance(body["seq"], int) and body["time"].endswith("Z"), where
            else:
                assert kind == "account", where
                assert list(body)[:2] == ["active", "did"] and body["did"] == doc["did"], where
    assert n == N_SMALL
    assert set(kinds) == {"commit", "identity", "account"}
    assert set(ops) == {"create", "update", "delete"}
    assert ops["create"] / kinds["commit"] > 0.9


HARD_CHECKS = {
    "nul_escape": lambda rec, raw: "\x00" in rec["text"] and b"\\u0000" in raw,
    "lone_surrogate": lambda rec, raw: "\ud83d" in rec["text"] and b"\\ud83d" in raw,
    "bigint": lambda rec, raw: rec["embed"]["images"][0]["image"]["size"] > 2**64,
    "deep_nesting": lambda rec, raw: _depth(rec["nested"]) >= 1000,
    "long_text": lambda rec, raw: len(rec["text"].encode()) >= 50_000,
}


def _depth(obj) -> int:
    d = 0
    while isinstance(obj, dict) and obj:
        obj = next(iter(obj.values()))
        d += 1
    return d + 1


def test_hard_documents_where_the_manifest_says(dataset: Path):
    m = read_manifest(dataset)
    first = [h for h in m.hard_documents if h.file == "file_0001.json"]
    # The documented rule: one of each kind in file 1 at index floor(D*(2j+1)/10).
    expected = {(DPF * (2 * j + 1) // 10 + 1, k) for j, k in enumerate(HARD_CHECKS)}
    assert expected <= {(h.line, h.kind) for h in first}
    for h in m.hard_documents:
        lines = (dataset / h.file).read_bytes().split(b"\n")
        raw = lines[h.line - 1]
        doc = loads(raw)  # valid JSON
        assert list(doc) == ["did", "time_us", "kind", "commit"]
        c = doc["commit"]
        assert c["operation"] == "create" and c["collection"] == "app.bsky.feed.post"
        assert HARD_CHECKS[h.kind](c["record"], raw), (h, raw[:300])
    # No other line of the dataset is hard: all others parse with orjson.
    hard_at = {(h.file, h.line) for h in m.hard_documents}
    for f in m.files:
        for i, line in enumerate((dataset / f.name).open("rb"), start=1):
            if (f.name, i) not in hard_at:
                orjson.loads(line)


def test_no_hard_documents_at_rate_zero(tmp_path: Path):
    out = tmp_path / "z"
    m = small(out, n_docs=DPF, hard_rate=0)
    assert m.hard_documents == []
    for line in (out / "file_0001.json").open("rb"):
        orjson.loads(line)


def test_dirty_lines_counted(tmp_path: Path):
    out = tmp_path / "dirty"
    m = small(out, n_docs=DPF, dirty_rate=0.005)
    f = m.files[0]
    dirty = {d.line: d.kind for d in m.dirty_lines}
    assert 40 <= len(dirty) <= 200
    assert set(dirty.values()) == {"truncated", "invalid_utf8", "empty"}
    assert f.lines == f.docs + len(dirty) and f.docs == DPF
    lines = (out / f.name).read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) - 1 == f.lines
    valid = 0
    for i, line in enumerate(lines[:-1], start=1):
        if i in dirty:
            if dirty[i] == "empty":
                assert line == b""
            else:
                with pytest.raises((ValueError, UnicodeDecodeError)):
                    json.loads(line.decode("utf-8"))
        else:
            loads(line)
            valid += 1
    assert valid == DPF


@pytest.mark.parametrize("compress,opener", [("gzip", "gz"), ("zstd", "zst")])
def test_compressed_files_hold_the_same_documents(dataset: Path, tmp_path: Path, compress, opener):
    out = tmp_path / compress
    m = small(out, n_docs=DPF, compress=compress)
    f = m.files[0]
    assert f.name == f"file_0001.json.{opener}"
    data = (out / f.name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == f.sha256 and len(data) == f.bytes
    if compress == "gzip":
        plain = gzip.decompress(data)
    else:
        import zstandard

        plain = zstandard.ZstdDecompressor().stream_reader(data).read()
    assert plain == (dataset / "file_0001.json").read_bytes()
    assert f.uncompressed_bytes == len(plain)


@pytest.mark.server  # a server or a 1m dataset: not the quick loop's
def test_acceptance_at_1m(tmp_path: Path):
    """The generated 1m dataset matches the published JSONBench 1M figures (methodology §3)."""
    out = tmp_path / "1m"
    started = time.perf_counter()
    m = generate_dataset(1_000_000, out, jobs=2, quiet=True, answers=False)
    gen_seconds = time.perf_counter() - started
    assert m.is_complete() and m.docs_present() == 1_000_000
    assert {h.kind for h in m.hard_documents} == set(HARD_CHECKS)
    try:
        measured = faithfulness.measure(m.file_paths(out), gzip_sample_bytes=48 << 20)
    finally:
        shutil.rmtree(out, ignore_errors=True)  # 480 MB
    checks = faithfulness.compare(measured)
    report = "\n".join(
        f"{'ok ' if c.ok else 'BAD'} {c.name:28s} {c.measured:12.3f} "
        f"{c.published:12.3f} {100 * (c.deviation or 0):+6.1f}%"
        for c in checks
    )
    print(f"\ngenerated in {gen_seconds:.2f} s\n{report}")
    assert faithfulness.acceptance_ok(checks), report
    assert measured["time_strictly_increasing"]
    assert measured["invalid_lines"] == 0
    assert 13.0 <= measured["span_minutes"] <= 14.0
    assert measured["kinds"]["commit"] / measured["docs"] == pytest.approx(0.9947, abs=0.002)
    assert 0.94 <= measured["create_share_of_commits"] <= 0.97
    assert 5 <= measured["delete_to_update"] <= 9
    assert measured["max_batch"] == 20
    post = measured["post"]
    assert 45 <= post["text_median_bytes"] <= 65
    assert post["reply_share"] == pytest.approx(0.53, abs=0.03)
    assert post["embed_share"] == pytest.approx(0.34, abs=0.03)
    assert post["facets_share"] == pytest.approx(0.19, abs=0.03)
    assert post["langs_share"] == pytest.approx(0.94, abs=0.02)
    assert set(post["embed_types"]) == {"images", "external", "record", "recordWithMedia", "video"}
    assert 15 <= measured["created_lag_median_s"] <= 40


def test_growing_and_shrinking_keep_matching_files(dataset: Path, tmp_path: Path):
    g = tmp_path / "grow"
    small(g, n_docs=2 * DPF)
    first = sha(g / "file_0001.json")
    m = small(g, n_docs=3 * DPF)  # grows: files 1-2 kept, file 3 generated
    assert m.is_complete() and m.docs == 3 * DPF
    assert sha(g / "file_0001.json") == first == sha(dataset / "file_0001.json")
    assert sha(g / "file_0003.json") == sha(dataset / "file_0003.json")
    m = small(g, n_docs=DPF + 100)  # shrinks: file 2 is cut to 100 docs, file 3 goes away
    assert [(f.number, f.docs) for f in m.files] == [(1, DPF), (2, 100)]
    assert not (g / "file_0003.json").exists()
    assert read_manifest(g).docs == DPF + 100
