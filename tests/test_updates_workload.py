"""The updates workload on the real engines, small: every system with an updates module loads
YCSB documents, adds field11 in each bulk style, and runs point reads and updates; everything
is verified by reading back (the runner's own checks, asserted here)."""

from __future__ import annotations

import importlib
import importlib.util
import multiprocessing
import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import SEARCH, SEARCH_OTHER, broad_systems

from docbench.contracts import ycsb
from docbench.systems import REGISTERED, adapter_module, engine_class, open_adapter
from docbench.workloads.updates.runner import run_variant

DOCS = 2_000
OPS = 500
# The search engines (the maintenance after an update style waits for their retention lease).
SEARCH_ENGINES = (SEARCH.system, SEARCH_OTHER.system)


def _own(name: str, attribute: str, default: Any = None) -> Any:
    """What a system's own tests/test_system_<name>.py says of its run of this workload:
    UPDATES_OPS (fewer operations than OPS), UPDATES_STYLES (the bulk styles it must run; more
    may run: the search engines ask their node), check_updates(result, docs) (its own facts)."""
    if importlib.util.find_spec(f"test_system_{name}") is None:  # e.g. another version of one
        return default
    return getattr(importlib.import_module(f"test_system_{name}"), attribute, default)


def test_documents_are_deterministic_and_keys_unique() -> None:
    assert ycsb.document(5, seed=3) == ycsb.document(5, seed=3)
    doc = ycsb.document(0)
    assert set(doc) == {"ycsb_key", *ycsb.FIELDS}
    assert all(len(doc[f]) == ycsb.FIELD_LENGTH for f in ycsb.FIELDS)
    keys = [ycsb.key_of(i) for i in range(50_000)]
    assert len(set(keys)) == len(keys)
    assert all(k.startswith("user") and len(k) == 24 and k[4:].isdigit() for k in keys[:100])


def test_zipfian_is_skewed_and_in_range() -> None:
    pick = ycsb.chooser("zipfian", 1_000, seed=1)
    draws = [pick.next_index() for _ in range(20_000)]
    assert min(draws) >= 0 and max(draws) < 1_000
    top10 = sum(c for _, c in Counter(draws).most_common(10)) / len(draws)
    assert top10 > 0.25  # theta 0.99: the 10 hottest of 1000 items take ~39% of the draws
    assert ycsb.top_share("uniform", 1_000) < 0.05


def _cases() -> list:
    cases = []
    for name in REGISTERED:
        module = adapter_module(name, "updates")
        if module is None or name not in broad_systems():  # another version: its smoke test
            continue
        for variant in module.VARIANTS:
            cases.append(pytest.param(name, variant.name, id=f"{name}-{variant.name}"))
    return cases


@pytest.mark.parametrize(("name", "variant_name"), _cases())
def test_updates_on_real_engine(name: str, variant_name: str, server_url) -> None:
    # Servers by URL: the session's one per system (the mongodb system: a real MongoDB if
    # given, else FerretDB 2); the workload's steps are the same on a managed server.
    url = server_url(name)
    availability = engine_class(name).availability(url)
    if not availability.ok:
        pytest.skip(f"{name}: {availability.reason}")
    docs, ops = DOCS, _own(name, "UPDATES_OPS", OPS)
    lines = ycsb.document_lines(docs)
    # A work directory the unprivileged server user can reach (pytest's tmp is 0700 root).
    base = Path(tempfile.mkdtemp(prefix=f"docbench-updates-{name}-"))
    os.chmod(base, 0o711)
    try:
        target = open_adapter(name, "updates", base / "work", variant_name, url=url)
        result = run_variant(name, target, docs, 1, ops, ["zipfian"], lines)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert not result["errors"], result["errors"]
    assert result["styles"], "no bulk update style ran"
    assert _own(name, "UPDATES_STYLES", set()) <= {s["style"] for s in result["styles"]}
    for style in result["styles"]:
        assert "error" not in style, style.get("traceback")
        check = style["check"]
        assert check["count"] == docs == style["count_before"]
        assert check["with_new_field"] == docs
        assert check["sample_mismatches"] == 0, check["mismatch_examples"]
        assert check["verdict"] == "ok"
        if style["rows_changed"] >= 0:
            assert style["rows_changed"] == docs
        assert style["sizes_before"].get("total") or style["sizes_before"].get("on_disk")
        if name in SEARCH_ENGINES:
            # The maintenance waits for the retention lease, so the merge reclaims every
            # deleted copy the update left behind.
            assert style["sizes_maintained"]["detail"]["deleted_docs"] == 0, style["maintenance"]
            assert style["sizes_maintained"]["total"] <= style["sizes_after"]["total"]
    point = result["point"]
    for operation in ("read", "update"):
        summary = point["zipfian"][operation]
        assert summary["ops"] == ops and summary["errors"] == 0 and summary["not_found"] == 0
        assert summary["p50_us"] > 0 and summary["histogram"]
    assert point["verify"]["verdict"] == "ok" and point["verify"]["checked"] > 0
    check = _own(name, "check_updates")
    if check is not None:
        check(result, docs)


def _read_and_update_in_child(target_cls, spec: dict, key: str, value: str) -> tuple:
    """What a throughput client does: a session opened from the picklable spec in another
    process."""
    session = target_cls.open_session(spec)
    try:
        return session.read(key), session.update_field(key, "field3", value)
    finally:
        session.close()


@pytest.mark.parametrize("name", SEARCH_ENGINES)
def test_search_engine_sessions(name: str, server_url) -> None:
    """Sessions by _id: from another process, missing keys, noop updates, inserts, and the
    sizes/stats the workload records (on the session's node of each engine)."""
    url = server_url(name)
    docs = 300
    base = Path(tempfile.mkdtemp(prefix=f"docbench-sessions-{name}-"))
    os.chmod(base, 0o711)
    target = open_adapter(name, "updates", base / "work", url=url)
    try:
        target.engine.start()
        target.create()
        target.load(ycsb.document_lines(docs))
        target.create_key_index()
        assert target.count() == docs
        expected = ycsb.document(7)
        key = expected["ycsb_key"]
        spawn = multiprocessing.get_context("spawn")
        with spawn.Pool(1) as pool:
            got, changed = pool.apply(
                _read_and_update_in_child, (type(target), target.session_spec(), key, "x" * 160)
            )
        assert got == expected  # no _id or other system field
        assert changed == 1
        session = target.open_session(target.session_spec())
        try:
            assert session.read(key)["field3"] == "x" * 160  # realtime GET: no refresh needed
            assert session.update_field(key, "field3", "x" * 160) == 1  # a noop still matched
            assert session.read("user-missing") is None
            assert session.update_field("user-missing", "field1", "y") == 0
            extra = ycsb.document(docs)
            session.insert(extra)
            assert session.read(extra["ycsb_key"]) == extra
            with pytest.raises(Exception, match="409"):
                session.insert(extra)  # _create: the key is unique
        finally:
            session.close()
        assert target.count() == docs + 1
        assert target.count_field("ycsb_key", key) == 1
        sizes = target.sizes()
        assert sizes.total and sizes.detail["docs"] == docs + 1
        stats = target.extra_stats()
        assert stats["docs"] == docs + 1 and stats["noop_update_total"] >= 1
        # A missing index is an error, not a missing document.
        target.client().request("DELETE", "/docbench_ycsb")
        session = target.open_session(target.session_spec())
        try:
            for operation in (lambda: session.read(key), lambda: session.update_field(key, "field1", "z")):
                with pytest.raises(Exception, match="index_not_found"):
                    operation()
        finally:
            session.close()
    finally:
        target.engine.release()
        target.engine.stop()
        shutil.rmtree(base, ignore_errors=True)
