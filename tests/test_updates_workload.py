"""The updates workload on the real engines, small: every system with an updates module loads
YCSB documents, adds field11 in each bulk style, and runs point reads and updates; everything
is verified by reading back (the runner's own checks, asserted here)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from docbench.systems import REGISTERED, system_class
from docbench.workloads.updates import documents as ycsb
from docbench.workloads.updates.runner import run_variant, updates_module

DOCS = 2_000
OPS = 500
# FerretDB v1 over SQLite does not use its index for these lookups and its $set takes ~20 ms
# per document: a smaller run keeps the module quick.
SMALL = {"ferretdb": (300, 30), "clickhouse": (DOCS, 150)}


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
        module = updates_module(name)
        if module is None:
            continue
        for variant in module.UPDATE_VARIANTS:
            cases.append(pytest.param(name, variant.name, id=f"{name}-{variant.name}"))
    return cases


@pytest.mark.parametrize(("name", "variant_name"), _cases())
def test_updates_on_real_engine(name: str, variant_name: str) -> None:
    availability = system_class(name).availability()
    if not availability.ok:
        pytest.skip(f"{name}: {availability.reason}")
    module = updates_module(name)
    variant = next(v for v in module.UPDATE_VARIANTS if v.name == variant_name)
    docs, ops = SMALL.get(name, (DOCS, OPS))
    lines = ycsb.document_lines(docs)
    # A work directory the unprivileged server user can reach (pytest's tmp is 0700 root).
    base = Path(tempfile.mkdtemp(prefix=f"docbench-updates-{name}-"))
    os.chmod(base, 0o711)
    try:
        result = run_variant(name, module, variant, docs, 1, ops, ["zipfian"], base / "work",
                             lines)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert not result["errors"], result["errors"]
    assert result["styles"], "no bulk update style ran"
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
    point = result["point"]
    for operation in ("read", "update"):
        summary = point["zipfian"][operation]
        assert summary["ops"] == ops and summary["errors"] == 0 and summary["not_found"] == 0
        assert summary["p50_us"] > 0 and summary["histogram"]
    assert point["verify"]["verdict"] == "ok" and point["verify"]["checked"] > 0
    if name == "postgresql":
        stats = result["styles"][0]["stats_after"]
        assert stats["n_tup_upd"] == docs
        assert stats["hot_share"] is not None  # reported (0 here: the index covers `data`)
        assert result["point_stats_after"]["n_tup_upd"] >= stats["n_tup_upd"]
