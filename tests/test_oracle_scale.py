"""The oracle at scale: per-file partials (cached, merged, computed in parallel) and the
byte-level fast path (templates), checked against the line-by-line parse.

Every expectation here is a computation compared with another computation that does not
share the part under test: a cold compute without any cache, the same lines with the fast
path off (``fast=False``: orjson and its fallbacks, line by line), one process against two.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
from pathlib import Path

import numpy as np
import pytest
import zstandard

from docbench.dataset import native_scan, oracle
from docbench.dataset.oracle import ComputeLog, Partial, compute_answers, finalize, scan_batches
from docbench.dataset.reader import dataset_files, iter_line_batches

POST = "app.bsky.feed.post"
LIKE = "app.bsky.feed.like"
REPOST = "app.bsky.feed.repost"
FOLLOW = "app.bsky.graph.follow"
B32 = "abcdefghijklmnopqrstuvwxyz234567"
T0 = 1732206349000167
KEYS = ("documents", "invalid_lines", "empty_lines", "q1", "q2", "q3", "q4", "q5", "q4_ties", "q5_ties")


@pytest.fixture(autouse=True)
def _isolated(tmp_path):
    """docbench's cache in the test's tmp, nothing remembered from another test, and the
    templates learned afresh."""
    before = os.environ.get("DOCBENCH_HOME")
    os.environ["DOCBENCH_HOME"] = str(tmp_path / "home")
    oracle._MEMO.clear()
    oracle._TEMPLATES = oracle.TemplateStore()
    yield
    oracle._MEMO.clear()
    oracle._TEMPLATES = oracle.TemplateStore()
    if before is None:
        del os.environ["DOCBENCH_HOME"]
    else:
        os.environ["DOCBENCH_HOME"] = before


def _did(rng: random.Random, population: int) -> str:
    r = random.Random(rng.randrange(population))
    return "did:plc:" + "".join(r.choice(B32) for _ in range(24))


def _tid(rng: random.Random) -> str:
    return "3l" + "".join(rng.choice(B32) for _ in range(11))


def _cid(rng: random.Random) -> str:
    return "bafyrei" + "".join(rng.choice(B32) for _ in range(52))


def events(seed: int, n: int, population: int = 300) -> list[bytes]:
    """Lines shaped like Jetstream's (compact, fixed widths, so templates take most of
    them), with posts of varying text, deletes, identity events and a few odd lines."""
    rng = random.Random(seed)
    out = []
    t = T0 + seed * 10**9
    for _ in range(n):
        t += rng.randrange(1, 400_000_000)
        did = _did(rng, population)
        r = rng.random()
        if r < 0.03:
            ev = {
                "did": did,
                "time_us": t,
                "kind": "identity",
                "identity": {
                    "did": did,
                    "handle": "x.bsky.social",
                    "seq": rng.randrange(10**9),
                    "time": "2024-11-21T16:25:19.445Z",
                },
            }
        else:
            coll = rng.choice([LIKE, LIKE, LIKE, FOLLOW, FOLLOW, REPOST, POST])
            op = "delete" if rng.random() < 0.05 else "create"
            commit = {"rev": _tid(rng), "operation": op, "collection": coll, "rkey": _tid(rng)}
            if op == "create":
                if coll == POST:
                    text = " ".join(
                        rng.choice(["hi", "bluesky", "a", "post", "ok"]) for _ in range(rng.randrange(1, 9))
                    )
                    record = {
                        "$type": coll,
                        "createdAt": "2024-11-21T16:25:19.445Z",
                        "langs": ["en"],
                        "text": text,
                    }
                elif coll == FOLLOW:
                    record = {
                        "$type": coll,
                        "createdAt": "2024-11-21T16:25:19.445Z",
                        "subject": _did(rng, population),
                    }
                else:
                    record = {
                        "$type": coll,
                        "createdAt": "2024-11-21T16:25:19.445Z",
                        "subject": {"cid": _cid(rng), "uri": f"at://{did}/{POST}/{_tid(rng)}"},
                    }
                commit["record"] = record
                commit["cid"] = _cid(rng)
            ev = {"did": did, "time_us": t, "kind": "commit", "commit": commit}
        out.append(json.dumps(ev, separators=(",", ":")).encode())
    return out


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def cold(files: list[Path], **kw) -> dict:
    """The answers without any cache (and without templates learned before)."""
    oracle._TEMPLATES = oracle.TemplateStore()
    doc = compute_answers(files, **kw)
    doc.pop("compute_seconds")
    return doc


def computed(data_dir: Path, **kw) -> tuple[dict, ComputeLog]:
    log = ComputeLog()
    doc, source = oracle._load_or_compute(data_dir, log=log, **kw)
    assert source == "computed"
    doc = dict(doc)
    doc.pop("compute_seconds")
    return doc, log


def answers(doc: dict) -> dict:
    """The answers and the files' identity (not their mtimes)."""
    return {"files": [(f["name"], f["sha256"], f["size"]) for f in doc["files"]], **{k: doc[k] for k in KEYS}}


def slow_answers(lines: list[bytes]) -> dict:
    part = scan_batches([lines], Partial(), fast=False)
    return finalize(part, [])


def fast_answers(lines: list[bytes], batch: int = 5000) -> dict:
    part = scan_batches([lines[i : i + batch] for i in range(0, len(lines), batch)], Partial())
    return finalize(part, [])


# --------------------------------------------------------------------------------------------
# Per-file partials


def test_adding_a_file_scans_only_that_file(tmp_path):
    d = tmp_path / "ds"
    files = [write_lines(d / f"file_000{i}.json", events(i, 400)) for i in (1, 2, 3)]
    doc3, log = computed(d)
    assert sorted(log.scanned) == [f.name for f in files] and log.reused == []
    partials = oracle.PartialCache.for_dataset(d).dir
    assert partials.is_relative_to(tmp_path / "home")  # not docbench's directory: not in it
    assert sorted(p.name for p in partials.glob("*.npz")) == [f"{f.name}.npz" for f in files]
    assert doc3 == cold(files)

    fourth = write_lines(d / "file_0004.json", events(4, 400))
    doc4, log = computed(d)
    assert log.scanned == ["file_0004.json"]
    assert sorted(log.reused) == [f.name for f in files] and log.hashed == []
    assert doc4 == cold([*files, fourth])
    assert doc4["documents"] == doc3["documents"] + 400


def test_removing_a_file_needs_no_scan(tmp_path):
    d = tmp_path / "ds"
    files = [write_lines(d / f"file_000{i}.json", events(i, 300)) for i in (1, 2, 3)]
    computed(d)
    files[1].unlink()
    doc, log = computed(d)
    assert log.scanned == [] and sorted(log.reused) == ["file_0001.json", "file_0003.json"]
    assert doc == cold([files[0], files[2]])
    # the partial of the file that went is gone too
    partials = oracle.PartialCache.for_dataset(d).dir
    assert sorted(p.name for p in partials.glob("*.npz")) == ["file_0001.json.npz", "file_0003.json.npz"]


def _forget(d: Path) -> None:
    """As in a new process, without answers.json: only the per-file partials remain."""
    import docbench.dataset.reader as reader

    oracle._MEMO.clear()
    reader._SHA_CACHE.clear()
    oracle.answers_cache_path(d).unlink(missing_ok=True)


def test_a_changed_file_is_scanned_again_a_touched_one_only_hashed(tmp_path):
    d = tmp_path / "ds"
    files = [write_lines(d / f"file_000{i}.json", events(i, 300)) for i in (1, 2)]
    computed(d)
    # same size, other content (a collection renamed with as many letters)
    data = files[0].read_bytes()
    files[0].write_bytes(data.replace(b"app.bsky.feed.like", b"app.bsky.feed.lik3", 1))
    doc, log = computed(d)
    assert log.scanned == ["file_0001.json"] and log.reused == ["file_0002.json"]
    assert doc == cold(files)
    assert ["app.bsky.feed.lik3", 1] in doc["q1"]
    # same content, new mtime: hashed, found unchanged, not scanned
    st = files[1].stat()
    os.utime(files[1], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    _forget(d)
    doc2, log = computed(d)
    assert log.scanned == [] and log.hashed == ["file_0002.json"]
    assert answers(doc2) == answers(doc)
    # ... and the new mtime is recorded: not even hashed the next time
    _forget(d)
    doc3, log = computed(d)
    assert log.scanned == [] and log.hashed == [] and doc3 == doc2


def test_refresh_scans_everything_but_does_not_hash_again(tmp_path):
    d = tmp_path / "ds"
    files = [write_lines(d / f"file_000{i}.json", events(i, 200)) for i in (1, 2)]
    doc, _ = computed(d)
    import docbench.dataset.reader as reader

    reader._SHA_CACHE.clear()  # a new process: the sha256 comes from the recorded size+mtime
    doc2, log = computed(d, refresh=True)
    assert sorted(log.scanned) == [f.name for f in files] and log.hashed == []
    assert doc2 == doc


def test_compressed_files_cached_per_file(tmp_path):
    d = tmp_path / "ds"
    raw = [b"\n".join(events(i, 300)) + b"\n" for i in (1, 2, 3)]
    (d).mkdir()
    (d / "file_0001.json.gz").write_bytes(gzip.compress(raw[0]))
    (d / "file_0002.json.zst").write_bytes(zstandard.ZstdCompressor().compress(raw[1]))
    (d / "file_0003.json").write_bytes(raw[2])
    doc, log = computed(d, jobs=2)
    assert len(log.scanned) == 3
    plain = tmp_path / "plain"
    for i, data in enumerate(raw, 1):
        write_lines(plain / f"file_000{i}.json", data.split(b"\n")[:-1])
    assert {k: doc[k] for k in KEYS} == {k: v for k, v in cold(dataset_files(plain)).items() if k in KEYS}
    (d / "file_0003.json").unlink()
    doc2, log = computed(d)
    assert log.scanned == [] and doc2["documents"] == 600


def test_jobs_1_and_2_give_identical_answers(tmp_path, monkeypatch):
    d = tmp_path / "ds"
    files = [write_lines(d / f"file_000{i}.json", events(i, 1500)) for i in (1, 2, 3)]
    files.append(write_lines(d / "file_0004.json", events(4, 20) + [b"not json", b""]))
    one = cold(files, jobs=1)
    two = cold(files, jobs=2)
    assert two == one
    monkeypatch.setattr(oracle, "SPLIT_MIN_BYTES", 50_000)  # byte ranges among the workers
    tasks = oracle._plan_tasks(files, 2)
    assert sum(1 for t in tasks if t[0] == "scan" and t[3] is not None) > 3
    import docbench.dataset.reader as reader

    reader._SHA_CACHE.clear()
    log = ComputeLog()
    seen = []
    split = compute_answers(files, jobs=2, progress=seen.append, log=log)
    split.pop("compute_seconds")
    assert split == one
    assert sum(seen) == sum(len(b) for f in files for b in iter_line_batches(f))
    assert sorted(log.hashed) == [f.name for f in files[:3]]  # split files: hashed apart
    assert len(log.worker_peaks) == 1 and log.worker_peaks[0] > 0


def _tree(path: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(path)), p.stat().st_mtime_ns) for p in path.rglob("*"))


def test_a_read_only_data_directory_is_never_written(tmp_path):
    for owned in (False, True):
        d = tmp_path / f"ro{owned}"
        for i in (1, 2):
            write_lines(d / f"file_000{i}.json", events(i, 200))
        if owned:  # looks generated by docbench: its cache would be the directory itself
            (d / "dataset.json").write_text("{}")
        before = _tree(d)
        d.chmod(0o555)
        try:
            doc, log = computed(d, jobs=2)
            assert len(log.scanned) == 2
            _forget(d)
            _, log = computed(d)
            assert _tree(d) == before
            if owned:  # nowhere to keep partials: scanned again
                assert len(log.scanned) == 2
            else:  # kept in docbench's home instead
                assert log.scanned == [] and len(log.reused) == 2
        finally:
            d.chmod(0o755)


def test_cached_partial_round_trip_keeps_odd_values(tmp_path):
    lines = [
        b'{"did":"did:sur\\ud83d","time_us":5,"kind":"commit","commit":{"operation":"create",'
        b'"collection":"app.bsky.feed.post"}}',
        b'{"did":7,"time_us":-3,"kind":"commit","commit":{"operation":"create","collection":{"a":1}}}',
        b'{"time_us":9,"kind":"commit","commit":{"operation":"create","collection":"x\\u0000"}}',
        *events(1, 50),
    ]
    d = tmp_path / "ds"
    write_lines(d / "a.jsonl", lines)
    doc, _ = computed(d)
    _forget(d)
    doc2, log = computed(d)
    assert log.reused == ["a.jsonl"] and doc2 == doc
    assert ["did:sur\ud83d", 5] in doc2["q4"]


# --------------------------------------------------------------------------------------------
# The fast path: templates


def test_templates_take_most_lines_and_change_nothing():
    lines = events(7, 6000)
    slow = slow_answers(lines)
    store = oracle._TEMPLATES
    assert fast_answers(lines, batch=500) == slow  # (learned from the first blocks)
    taken = sum(t.hits for ts in store.by_len.values() for t in ts)
    assert taken > 0.7 * len(lines)  # (not the posts: their text varies in length)
    # once learned, the templates take the same lines again
    assert fast_answers(lines) == slow


def test_real_events_fast_equals_slow(real_data_dir):
    lines = [ln for f in sorted(real_data_dir.glob("*.jsonl")) for b in iter_line_batches(f) for ln in b]
    assert fast_answers(lines * 3) == slow_answers(lines * 3)


MUTANTS = [
    b'"',
    b"\\",
    b"\x00",
    b"\x1f",
    b"\x7f",
    b"\x80",
    b"\xff",
    b" ",
    b"0",
    b"9",
    b"-",
    b"a",
    b"}",
    b",",
    b":",
    b"e",
    b".",
]
ESCAPES = [b'\\"', b"\\\\", b"\\/", b"\\n", b"\\u"]


def test_every_mutation_of_a_template_line_gives_the_parse_answer():
    """Each byte of template lines replaced by a tricky byte (or a two-byte escape), each
    mutated line alone through the fast path and through the parse: the same document or
    the same refusal, always."""
    base = events(11, 3000)
    fast_answers(base, batch=300)  # learn the templates
    store = oracle._TEMPLATES
    rng = random.Random(3)
    samples = {}
    for line in base:
        tpls = store.by_len.get(len(line), [])
        for tpl in tpls:
            if tpl.match(np.frombuffer(line, np.uint8)[None]) is None and id(tpl) not in samples:
                samples[id(tpl)] = line
    assert len(samples) >= 5
    mutated = []
    for line in samples.values():
        for i in range(len(line)):
            for m in rng.sample(MUTANTS, 3) + [rng.choice(ESCAPES)]:
                mut = line[:i] + m + line[i + len(m) :]
                if len(mut) == len(line):
                    mutated.append(mut)
    assert len(mutated) > 3000
    documents = 0
    hits = sum(t.hits for ts in store.by_len.values() for t in ts)
    for mut in mutated:
        got = fast_answers([mut, mut])  # (twice: a template sees rows in bulk)
        assert got == slow_answers([mut, mut]), mut
        documents += got["documents"]
    assert documents > len(mutated)  # many mutants are still documents
    taken = sum(t.hits for ts in store.by_len.values() for t in ts) - hits
    assert len(mutated) / 10 < taken / 2 < len(mutated)  # templates took many, not all


def test_hard_lines_shaped_like_templates():
    """Lines of a template's length and shape with escapes, non-ASCII, big numbers,
    duplicate keys, deep nesting: never read through a template, same answers."""
    base = events(5, 200)
    like = next(ln for ln in base if b'"app.bsky.feed.like","rkey"' in ln)
    post = next(ln for ln in base if b'"app.bsky.feed.post","rkey"' in ln)
    doc = json.loads(like)
    did, t = doc["did"].encode(), str(doc["time_us"]).encode()

    def compact(ev) -> bytes:
        return json.dumps(ev, separators=(",", ":")).encode()

    lines = [
        like.replace(did, did[:-6] + b"\\u0041", 1),  # an escape in the did: same length
        like.replace(did, did[:-2] + b"\\/", 1),
        like.replace(did, did[:-6] + b"\\ud83d", 1),  # a lone surrogate
        like.replace(did, did[:-6] + b"\\u0000", 1),
        like.replace(did, did[:-1] + b"\xc3", 1),  # invalid UTF-8
        like.replace(did, did[:-2] + "\u00e9".encode(), 1),  # valid UTF-8
        like.replace(t, b"9" * len(t), 1),
        like.replace(t, b"0" + t[1:], 1),  # a leading zero: not JSON
        like.replace(t, b"-" + t[1:], 1),
        like.replace(b'"kind":"commit"', b'"did":"commitx"', 1),  # a second "did", no kind
        like.replace(b'"createdAt"', b'"$type"    ', 1),  # a duplicate key in the record
        like.replace(b'"rev":"', b'"rev":[', 1).replace(b'","operation"', b'],"operation"', 1),
        like.replace(b'"operation":"create"', b'"operation":"crea\\u0074e"', 1),
        compact({**doc, "commit": {**doc["commit"], "record": {"x": [[[[[[[[[[1]]]]]]]]]]}}}),
        compact({**doc, "time_us": 2**70}),
        compact({**doc, "time_us": 2**63}),
        compact({**doc, "time_us": 1e15}),
        like[:-1] + b" ",  # truncated
        like + b" ",
        like.replace(b"{", b"[", 1),
        post.replace(b" ", b"\t", 1),
    ]
    lines += [post, like] * 5
    assert fast_answers(lines * 3) == slow_answers(lines * 3)
    assert fast_answers(lines * 3) == slow_answers(lines * 3)  # (templates learned now)


def test_simdjson_reads_long_lines_exactly_as_the_full_parse(monkeypatch):
    """Post-like lines long enough for simdjson's path (each mutated so that a lazy reader
    could get it wrong: duplicate keys at the levels read, a BOM, refusals of every kind,
    odd times) give exactly the answers of orjson and its fallbacks alone."""
    base = events(7, 400)
    post = next(ln for ln in base if b'"app.bsky.feed.post","rkey"' in ln)
    doc = json.loads(post)
    doc["commit"]["record"]["text"] = "x" * 600  # long enough for simdjson's path
    did, t = doc["did"], doc["time_us"]

    def compact(ev, **top) -> bytes:
        return json.dumps({**ev, **top}, separators=(",", ":"), ensure_ascii=False).encode()

    long_post = compact(doc)
    assert len(long_post) >= oracle.SIMD_MIN_BYTES
    commit = doc["commit"]
    lines = [
        long_post,
        long_post.replace(b'"kind":"commit"', b'"did":"did:plc:zzz"', 1),  # did twice, no kind
        long_post[:-1] + b',"did":"did:plc:last"}',  # did twice: the last one counts
        long_post.replace(b'"rkey":', b'"collection":', 1),  # collection twice in commit
        long_post.replace(b'"rev":', b'"operation":', 1),  # operation twice
        long_post[:-1] + b',"kind":"identity"}',  # 5 top-level entries: kind twice
        b"\xef\xbb\xbf" + long_post,  # a BOM: not JSON
        long_post.replace(b"xxxx", b"\\ud83d", 1),  # a lone surrogate: json takes it
        long_post.replace(b"xxxx", b"\xc3(", 1),  # invalid UTF-8
        long_post.replace(b"xxxx", b"\\u0000", 1),
        long_post.replace(b"xxxx", b"\x01", 1),  # a raw control character
        long_post.replace(b"xxxx", b'",1e400,"', 1)
        .replace(b'"text":"', b'"text":["', 1)
        .replace(b'x","createdAt"', b'x"],"createdAt"', 1),  # 1e400 in an array
        long_post + b" x",  # trailing garbage
        long_post[:-2],  # truncated
        long_post.replace(b'"did":"', b'"d\\u0069d":"', 1),  # an escaped key name: still "did"
        compact(doc, time_us=2**64 - 1),
        compact(doc, time_us=2**70),
        compact(doc, time_us=-1),
        compact(doc, time_us=float(t)),
        compact(doc, time_us=str(t)),
        compact(doc, did=None),
        compact(doc, did=7),
        compact(doc, kind=None),
        compact(doc, commit={**commit, "collection": {"x": 1}}),
        compact(doc, commit={**commit, "record": {"x": [[[[1]]]], "n": 2**80}}),
        compact(doc, commit={**commit, "record": "[" * 2000 + "]" * 2000}),
        json.dumps({"x": "y" * 600, "did": did}).encode(),  # another layout
        b"[" + long_post + b"]",
    ]
    lines = lines * 2 + base
    monkeypatch.setattr(oracle, "_SIMD", False)  # orjson and its fallbacks only
    reference = slow_answers(lines)
    monkeypatch.setattr(oracle, "_SIMD", None)
    assert oracle._simd_parse() is not None  # (simdjson is installed: its path is tested)
    assert slow_answers(lines) == reference
    assert fast_answers(lines) == reference


def test_derive_template_refuses_what_it_cannot_prove():
    like = events(5, 40)
    ok = [ln for ln in like if oracle.derive_template(ln) is not None]
    assert ok
    line = ok[0]
    assert oracle.derive_template(line.replace(b"commit", b"comm\\u0069t", 1)) is None
    assert oracle.derive_template(line[:-1] + b"\xc3\xa9}") is None
    assert oracle.derive_template(b'{"did":"a","did":"b","kind":"commit"}') is None
    assert oracle.derive_template(b"[1,2,3]") is None
    assert oracle.derive_template(b'{"a":1} x') is None
    tpl = oracle.derive_template(line)
    assert tpl.match(np.frombuffer(line, np.uint8)[None]) is None


def test_a_bad_or_foreign_partial_is_recomputed(tmp_path, monkeypatch):
    d = tmp_path / "ds"
    files = [write_lines(d / f"file_000{i}.json", events(i, 200)) for i in (1, 2)]
    doc, _ = computed(d)
    partials = oracle.PartialCache.for_dataset(d).dir
    (partials / "file_0001.json.npz").write_bytes(b"not a zip")
    _forget(d)
    doc2, log = computed(d)
    assert log.scanned == ["file_0001.json"] and answers(doc2) == answers(doc)
    np.load(partials / "file_0001.json.npz")  # rewritten
    # computed by another version of the oracle: not trusted
    monkeypatch.setattr(oracle, "_VERSION", "another")
    _forget(d)
    doc3, log = computed(d)
    assert sorted(log.scanned) == [f.name for f in files] and answers(doc3) == answers(doc)
    assert not list(partials.glob(".*"))  # no temporary file left behind


def test_an_error_in_a_worker_reaches_the_caller(tmp_path):
    good = write_lines(tmp_path / "good.jsonl", events(1, 50))
    tasks = [
        ("scan", str(tmp_path / "missing.jsonl"), 0, None, True),  # (the worker's)
        ("scan", str(good), 0, None, True),
    ]
    with pytest.raises(FileNotFoundError):
        oracle._execute(tasks, 2, lambda result: None, None, ComputeLog())


# --------------------------------------------------------------------------------------------
# The native scanner (docbench-scan): the same answers as the Python scan, always


@pytest.fixture()
def scanner():
    binary = native_scan.find_scanner()
    assert binary is not None, "docbench-scan is not built: run scripts/build-native.sh"
    return binary


def _hard_lines() -> list[bytes]:
    """The lines of the tests above that try the fast paths hardest, and more."""
    base = events(5, 300)
    like = next(ln for ln in base if b'"app.bsky.feed.like","rkey"' in ln)
    doc = json.loads(like)
    did = doc["did"].encode()

    def compact(ev, **top) -> bytes:
        return json.dumps({**ev, **top}, separators=(",", ":"), ensure_ascii=False).encode()

    commit = doc["commit"]
    return (
        base
        + [
            like.replace(did, did[:-6] + b"\\u0041", 1),  # escapes in the did
            like.replace(did, did[:-6] + b"\\ud83d", 1),  # a lone surrogate: json takes it
            like.replace(did, did[:-1] + b"\xc3", 1),  # invalid UTF-8
            like.replace(did, did.upper(), 1),  # not a did:plc the packing takes
            like.replace(b'"record":{', b'"record":{"z":"\xed\xa0\x80",', 1),  # UTF-8 surrogate
            like.replace(b'"record":{', b'"record":{"z":"\\ud800",', 1),  # in the skipped part
            like.replace(b'"record":{', b'"record":{"z":1e400,"y":123456789012345678901234,', 1),
            like.replace(b'"record":{', b'"record":{"z":NaN,', 1),
            like.replace(b'"record":{', b'"record":{"z":"\x01",', 1),  # a raw control character
            like.replace(b'"record":{', b'"record":{"z":"\\x",', 1),  # a bad escape
            like[:-1] + b',"did":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa"}',  # did twice
            like[:-1] + b',"kind":"identity"}',  # kind twice
            like.replace(b'"rkey":', b'"collection":', 1),  # collection twice
            like.replace(b'"did":"', b'"d\\u0069d":"', 1),  # an escaped key name
            like.replace(b'"operation":"create"', b'"operation":"crea\\u0074e"', 1),
            like + b"\r",
            like + b" \t",
            b" " + like,
            b"\xef\xbb\xbf" + like,
            like + b" x",
            like[:-2],
            b"[" + like + b"]",
            b"",
            b"   ",
            b"\r",
            b"null",
            b"{}",
            compact(doc, time_us=2**63),
            compact(doc, time_us=2**63 - 1),
            compact(doc, time_us=-1),
            compact(doc, time_us=-(2**63)),
            compact(doc, time_us=float(doc["time_us"])),
            compact(doc, time_us=str(doc["time_us"])),
            compact(doc, time_us=-0.0),
            compact(doc, did=None),
            compact(doc, did=7),
            compact(doc, kind=None),
            compact(doc, did="did:web:example.com"),
            compact(doc, did="é"),
            compact(doc, commit={**commit, "collection": {"x": 1}}),
            compact(doc, commit={**commit, "collection": "app.bsky.feed.post"}),
            compact(doc, commit={**commit, "collection": "app.bsky.feed.post"}, did="x"),
            compact(doc, commit={**commit, "collection": "é\u2028"}),
            compact(doc, commit={**commit, "record": "[" * 200 + "]" * 200}),
            compact(doc, commit={**commit, "record": json.loads("[" * 100 + "]" * 100)}),
            compact(doc, commit=None),
            compact(doc, commit=[1]),
            compact({k: v for k, v in doc.items() if k != "kind"}),
            compact({k: v for k, v in doc.items() if k != "time_us"}),
        ]
    )


def _native_and_python(files: list[Path], monkeypatch, **kw) -> tuple[dict, dict]:
    native = cold(files, **kw)
    monkeypatch.setenv(native_scan.DISABLE_ENV, "0")
    python = cold(files, **kw)
    monkeypatch.delenv(native_scan.DISABLE_ENV)
    return native, python


def test_native_scanner_gives_the_python_answers(tmp_path, monkeypatch, scanner, real_data_dir):
    """Hard lines, real events, plain and compressed files: the same document, the same
    refusals, the same sha256 as the Python scan."""
    real = [ln for f in sorted(real_data_dir.glob("*.jsonl")) for b in iter_line_batches(f) for ln in b]
    lines = _hard_lines() * 2 + real
    plain = write_lines(tmp_path / "d" / "a.json", lines)
    (tmp_path / "d" / "b.json.gz").write_bytes(gzip.compress(plain.read_bytes()))
    (tmp_path / "d" / "c.json.zst").write_bytes(zstandard.compress(plain.read_bytes()))
    (tmp_path / "d" / "e.json").write_bytes(b"\n".join(lines[:50]))  # no final newline
    files = dataset_files(tmp_path / "d")
    native, python = _native_and_python(files, monkeypatch)
    assert native == python
    assert native["invalid_lines"] > 10 and native["empty_lines"] > 2
    assert native == python | {"files": native["files"]}


def test_native_scanner_byte_ranges_and_jobs(tmp_path, monkeypatch, scanner):
    """Big plain files cut into byte ranges among jobs (sha256 from a task of its own):
    the answers of one job, with the native scanner and without."""
    monkeypatch.setattr(oracle, "SPLIT_MIN_BYTES", 64 << 10)
    for k in range(3):
        write_lines(tmp_path / "d" / f"f{k}.json", events(20 + k, 4000) + _hard_lines())
    files = dataset_files(tmp_path / "d")
    tasks = oracle._plan_tasks(files, 2)
    assert any(t[0] == "scan" and t[2] > 0 for t in tasks)  # (ranges were planned)
    native, python = _native_and_python(files, monkeypatch, jobs=2)
    assert native == python == cold(files, jobs=1)


def test_native_scanner_takes_the_usual_lines(tmp_path, scanner):
    """It takes every usual event and hands back only the odd ones."""
    path = write_lines(tmp_path / "a.json", events(3, 2000) + [b"[1]", b"", b'{"did":1}'])
    result = native_scan.scan_file(scanner, path, "none", oracle.POST, want_sha=True)
    assert result.header["documents"] == 2000
    assert result.handed_back == [b"[1]", b"", b'{"did":1}']
    assert result.header["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
