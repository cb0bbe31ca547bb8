"""JSONBench's Filebeat, as docbench reproduces it for the Elasticsearch variants ``jsonbench``
and ``jsonbench_no_source`` (docbench/systems/searchengine/filebeat.py): its processors on real
events, JavaScript's number strings, Go's map order. No engine: the bytes Filebeat would send."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import orjson
import pytest

from docbench.dataset.reader import dataset_files, iter_lines
from docbench.systems.searchengine.filebeat import FilebeatEvents, go_map_order, js_number_string

STAMP = "2025-01-14T10:11:12.345Z"


@pytest.fixture(scope="module")
def real_events(real_data_dir: Path) -> list[bytes]:
    return [line for path in dataset_files(real_data_dir) for line in iter_lines(path) if line.strip()]


def test_every_real_event_as_filebeat_sent_it(real_events: list[bytes]) -> None:
    events = FilebeatEvents(seed=3)
    renamed = 0
    for line in real_events:
        raw = json.loads(line)
        event = events.event(line, STAMP)
        sent = json.loads(event)
        assert list(sent)[0] == "@timestamp" and sent.pop("@timestamp") == STAMP
        assert sent.pop("time_us") == js_number_string(raw.pop("time_us") / 1000)
        subject = raw.get("commit", {}).get("record", {}).get("subject")
        if isinstance(subject, str):  # follows, blocks: renamed so that one mapping holds all
            raw["commit"]["record"]["subject"] = {"value": subject}
            renamed += 1
        assert sent == raw  # nothing else changed but the order of the keys
    assert renamed > 10


def test_js_number_strings() -> None:
    # What JavaScript's Number.prototype.toString() prints for these.
    assert js_number_string(1732206349000167 / 1000) == "1732206349000.167"
    assert js_number_string(1732206349000000 / 1000) == "1732206349000"
    assert js_number_string(-1.5) == "-1.5"
    assert js_number_string(1.5e-8) == "1.5e-8"
    assert js_number_string(2e21) == "2e+21"
    assert js_number_string(float(123456789012345678)) == "123456789012345680"
    assert js_number_string(1e16 + 2) == "10000000000000002"


def test_odd_time_us_as_the_script_leaves_it() -> None:
    events = FilebeatEvents()
    assert json.loads(events.event(b'{"time_us": "17"}', STAMP))["tags"] == ["_js_exception"]
    assert json.loads(events.event(b'{"time_us": null}', STAMP))["time_us"] is None
    assert "time_us" not in json.loads(events.event(b'{"did": "x"}', STAMP))
    # Go decodes an integer beyond 64 bits as a float64; a lone surrogate as U+FFFD
    odd = json.loads(events.event(b'{"n": 123456789012345678901234567890, "t": "a\\ud83d"}', STAMP))
    assert odd["n"] == 1.2345678901234568e29 and odd["t"] == "a\ufffd"


def test_lines_filebeat_cannot_read_go_on_unchanged() -> None:
    events = FilebeatEvents()
    deep = b'{"a":' + b"[" * 1000 + b"]" * 1000 + b"}"
    for line in (b'{"did": ', b"[1, 2]", b"\xff\xfe", deep):
        assert events.event(line, STAMP) == line


def test_go_map_order_of_a_small_map_is_a_rotation() -> None:
    """Up to 8 keys: one bucket, visited from a random slot of 8 (empty ones skipped)."""
    rng = random.Random(5)
    keys = ["did", "time_us", "kind", "commit"]
    seen = Counter(tuple(go_map_order(keys, rng)) for _ in range(8000))
    rotations = {tuple(keys[i:] + keys[:i]) for i in range(len(keys))}
    assert set(seen) == rotations
    # the insertion order from offsets 0 and 4-7 (5 of 8), each other rotation from one (1 of 8)
    assert 0.58 < seen[tuple(keys)] / 8000 < 0.67
    assert all(0.10 < seen[order] / 8000 < 0.15 for order in rotations - {tuple(keys)})


def test_go_map_order_of_a_large_map_keeps_every_key() -> None:
    rng = random.Random(6)
    keys = [f"k{i}" for i in range(40)]
    orders = {tuple(go_map_order(keys, rng)) for _ in range(50)}
    assert all(sorted(order) == sorted(keys) for order in orders)
    assert len(orders) == 50  # buckets by a random hash seed: (almost) never the same twice


def test_a_batch_gets_one_read_time_and_orjson_bytes(real_events: list[bytes]) -> None:
    sent = FilebeatEvents().events(real_events[:100])
    stamps = {orjson.loads(event)["@timestamp"] for event in sent}
    assert len(sent) == 100 and len(stamps) == 1
    assert stamps.pop().endswith("Z")
