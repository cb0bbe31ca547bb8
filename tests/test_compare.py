"""`docbench compare`: two sets of results matched by identity and compared figure by figure
(ratio, noise of the tries, threshold, warnings where they measured differently), JSONBench's
published results as a baseline, the JSON schema, exit codes, the HTML view, and two real runs.

The result documents are real ones (docs/results/scale, and runs made here), copied and changed
where a test needs two results to differ in one known way."""

from __future__ import annotations

import copy
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from conftest import EMBEDDED, QUICK
from test_dashboard import Chromium, browser  # noqa: F401  (the browser fixture)

from docbench.cli import main
from docbench.report.compare import ResultSet, compare, load_set, published_jsonbench, to_json
from docbench.report.compare.aa import aa_noise
from docbench.report.compare.command import parse_threshold
from docbench.report.compare.noise import noise_test, t_two_sided_p, welch_p
from docbench.report.compare.pairs import Comparison, Pair
from docbench.report.compare.ratios import MetricComparison
from docbench.report.compare.sets import PUBLISHED_JSONBENCH
from docbench.report.jsonbench_import import import_files
from docbench.systems import adapter_variants
from docbench.systems.jsonbench import COUNTERPARTS, counterpart

ROOT = Path(__file__).resolve().parents[1]
SCALE = ROOT / "docs" / "results" / "scale"
JSONBENCH_RUNS = ROOT / "docs" / "results" / "jsonbench"
SCHEMA = ROOT / "src" / "docbench" / "report" / "compare" / "compare.schema.json"
FIXTURES = Path(__file__).parent / "fixtures" / "jsonbench"
DUCKDB_1M = "analytics.duckdb.default.1m.vm.20261124T121556Z.json"
CLICKHOUSE_1M = "analytics.clickhouse.zstd.1m.vm.20261124T165004Z.json"
CLICKHOUSE_10M = "analytics.clickhouse.zstd.10m.vm.20261124T164620Z.json"
OPENSEARCH_10M = "analytics.opensearch.default.10m.vm.20261124T162620Z.json"
SQLITE_1M = "analytics.sqlite.jsonb.1m.vm.20261124T121651Z.json"
JSONBENCH_CLICKHOUSE_1M = "analytics.clickhouse.jsonbench.1m.vm.20261129T094931Z.json"
JSONBENCH_POSTGRESQL_1M = "analytics.postgresql.jsonbench.1m.vm.20261128T113543Z.json"
AA_NOISE = ROOT / "scripts" / "aa-noise.py"


def real(name: str) -> dict[str, Any]:
    return json.loads((SCALE / name).read_text())


def system_of(name: str) -> str:
    """The system of a real result file."""
    return str(real(name)["system"])


def write(directory: Path, document: dict[str, Any], name: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (name or f"{document['workload']}.{document['system']}.{document['variant']}.json")
    path.write_text(json.dumps(document))
    return path


def sides(
    tmp_path: Path, baseline: list[dict[str, Any]], contender: list[dict[str, Any]]
) -> tuple[Path, Path]:
    for i, document in enumerate(baseline):
        write(tmp_path / "baseline", document, f"b{i}.json")
    for i, document in enumerate(contender):
        write(tmp_path / "contender", document, f"c{i}.json")
    return tmp_path / "baseline", tmp_path / "contender"


def compared(baseline: Path, contender: Path, threshold: float = 0.1) -> Comparison:
    return compare(load_set([baseline], "baseline"), load_set([contender], "contender"), threshold)


def metric(pair: Pair, name: str) -> MetricComparison:
    return next(m for m in pair.metrics if m.metric == name)


def with_query(document: dict[str, Any], q: int, tries: list[float | None]) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    changed["result"][q] = list(tries)
    return changed


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, ["compare", *args], terminal_width=200)


# ----- matching ------------------------------------------------------------------------------


def test_results_match_by_workload_system_variant_scale_and_cluster(tmp_path: Path) -> None:
    on_three_nodes = real(OPENSEARCH_10M) | {
        "cluster": {"nodes": 3, "shards": 3, "replicas": 1, "managed": True}
    }
    other_variant = real(DUCKDB_1M) | {"variant": "other"}
    updates = real(SQLITE_1M) | {"workload": "updates"}  # a workload with no comparison
    baseline, contender = sides(
        tmp_path,
        [real(DUCKDB_1M), real(CLICKHOUSE_1M), real(CLICKHOUSE_10M), on_three_nodes],
        [
            real(DUCKDB_1M),
            real(CLICKHOUSE_10M),
            real(OPENSEARCH_10M),
            other_variant,
            real(SQLITE_1M),
            updates,
        ],
    )
    comparison = compared(baseline, contender)
    assert [p.name for p in comparison.pairs] == [
        "analytics clickhouse/zstd 10m",
        "analytics duckdb/default 1m",
    ]
    only_baseline = [(d["system"], d["dataset_label"]) for d in comparison.only_baseline]
    # 3 nodes: not the 1-node run
    assert only_baseline == [(system_of(CLICKHOUSE_1M), "1m"), (system_of(OPENSEARCH_10M), "10m")]
    only_contender = [(d["system"], d["variant"]) for d in comparison.only_contender]
    assert only_contender == [
        (system_of(DUCKDB_1M), "other"),
        (system_of(OPENSEARCH_10M), "default"),
        (system_of(SQLITE_1M), "jsonb"),
    ]
    assert [(label, n.reason) for label, n in comparison.not_compared] == [
        ("contender", "the updates workload has no comparison")
    ]
    # Identical results: every ratio is 1, nothing flagged, nothing to warn about.
    duckdb = comparison.pairs[1]
    assert all(m.ratio == 1 for m in duckdb.metrics if m.ratio is not None)
    assert not any(m.flagged for m in duckdb.metrics) and duckdb.warnings == []


def test_several_results_of_one_identity_the_latest_complete_is_compared(tmp_path: Path) -> None:
    older = real(CLICKHOUSE_10M) | {"started_at": "2026-11-01T00:00:00+00:00", "load_time": 999.0}
    incomplete = real(CLICKHOUSE_10M) | {"started_at": "2026-12-01T00:00:00+00:00", "complete": False}
    other_data = real(CLICKHOUSE_10M) | {"dataset_fingerprint": "0123456789abcdef"}
    baseline, contender = sides(
        tmp_path, [older, real(CLICKHOUSE_10M), incomplete, other_data], [real(CLICKHOUSE_10M)]
    )
    (pair,) = compared(baseline, contender).pairs
    assert pair.baseline["started_at"] == real(CLICKHOUSE_10M)["started_at"]
    assert metric(pair, "load_time").ratio == 1
    # The older and the incomplete runs are superseded; the run on other data is named.
    assert len(pair.baseline_others) == 1
    assert [w.kind for w in pair.warnings] == ["others"]


# ----- ratios, noise, threshold --------------------------------------------------------------


def test_ratios_of_totals_and_per_document_bytes(tmp_path: Path) -> None:
    base = real(CLICKHOUSE_10M)
    bigger = base | {
        "total_size": base["total_size"] * 2,
        "num_loaded_documents": base["num_loaded_documents"] // 2,
    }
    baseline, contender = sides(tmp_path, [base], [bigger])
    (pair,) = compared(baseline, contender).pairs
    assert metric(pair, "storage.total_bytes").ratio == 2
    per_document = metric(pair, "storage.total_bytes_per_document")
    assert per_document.baseline == base["total_size"] / base["num_loaded_documents"]
    assert per_document.ratio == pytest.approx(4, rel=1e-6)
    assert per_document.regression and per_document.direction == "worse"
    loaded = metric(pair, "documents_loaded")
    assert loaded.ratio == pytest.approx(0.5, rel=1e-6) and loaded.regression  # fewer documents: worse
    assert not metric(pair, "storage.total_bytes").machine_bound
    assert metric(pair, "q1.hot").machine_bound


def test_a_time_is_flagged_when_its_samples_differ_beyond_the_noise(tmp_path: Path) -> None:
    tight = with_query(real(DUCKDB_1M), 1, [3.0, 1.00, 1.01, 1.02])
    noisy = with_query(real(DUCKDB_1M), 1, [3.0, 1.00, 1.20])
    slower = with_query(real(DUCKDB_1M), 1, [3.0, 1.30, 1.31, 1.32])
    faster = with_query(real(DUCKDB_1M), 1, [3.0, 0.70, 0.71, 0.72])
    separated = with_query(real(DUCKDB_1M), 1, [3.0, 1.30, 1.32])
    for base, document, noise, flagged, direction in (
        (tight, slower, "separated", True, "worse"),
        (tight, faster, "separated", True, "better"),
        # The ranges of the tries do not overlap (the rule before the test flagged it), but two
        # tries 20% apart say the noise is as big as the difference: p = 0.23.
        (noisy, separated, "separated", False, "worse"),
    ):
        baseline = write(tmp_path / f"b{id(base)}", base)
        contender = write(tmp_path / f"c{id(document)}", document)
        hot = metric(compared(baseline, contender, threshold=0).pairs[0], "q2.hot")
        assert (hot.noise, hot.flagged, hot.direction) == (noise, flagged, direction), hot
        assert hot.noise_estimate and hot.significant is flagged and hot.p_value is not None
        assert hot.regression == (flagged and direction == "worse")
        assert hot.baseline_spread is not None and hot.contender_spread is not None
    # Beyond the threshold, within the noise: shown so, never flagged.
    hot = metric(compared(write(tmp_path / "n", noisy), write(tmp_path / "s", separated)).pairs[0], "q2.hot")
    assert hot.ratio == pytest.approx(1.30) and hot.beyond_threshold and not hot.flagged
    assert hot.p_value == pytest.approx(0.23, abs=0.01)
    # The cold time is one try a side: no noise estimate, never flagged (x0.5 or x2 alike).
    halved = with_query(real(DUCKDB_1M), 1, [1.5, 1.0, 1.01, 1.02])
    cold = metric(compared(write(tmp_path / "t", tight), write(tmp_path / "h", halved)).pairs[0], "q2.cold")
    assert cold.ratio == 0.5 and cold.beyond_threshold and cold.noise == "unknown"
    assert not cold.noise_estimate and cold.p_value is None and not cold.flagged and cold.unjudged
    # Sizes and counts are exact: the threshold alone decides.
    bigger = real(DUCKDB_1M) | {"total_size": real(DUCKDB_1M)["total_size"] * 1.2}
    size = metric(
        compared(write(tmp_path / "t", tight), write(tmp_path / "big", bigger)).pairs[0],
        "storage.total_bytes",
    )
    assert size.flagged and size.regression and size.p_value is None and not size.noise_estimate


def test_one_hot_try_a_side_is_no_noise_estimate(tmp_path: Path) -> None:
    """Issue #46, item 6: `docbench run --tries 2` twice, then compare: one hot try a side
    gives no range and no estimate of the noise; x1.12 to x1.17 are not flagged, not a
    regression, and --fail-on-regression passes."""
    document = real(CLICKHOUSE_1M) | {"tries": 2}
    first = copy.deepcopy(document)
    first["result"] = [row[:2] for row in first["result"]]
    second = copy.deepcopy(first)
    for q, factor in ((0, 1.12), (1, 1.11), (2, 1.17)):
        second["result"][q] = [first["result"][q][0], first["result"][q][1] * factor]
    baseline, contender = sides(tmp_path, [first], [second])
    (pair,) = compared(baseline, contender).pairs
    for q in (1, 2, 3):
        hot = metric(pair, f"q{q}.hot")
        assert hot.beyond_threshold and not hot.flagged and not hot.regression and hot.unjudged
    outcome = invoke(str(baseline), str(contender), "--fail-on-regression")
    assert outcome.exit_code == 0, outcome.output
    text = " ".join(outcome.output.split())
    assert "no noise estimate" in text and "▲ worse" not in text
    assert "0 flagged beyond 10% (0 worse, 0 better); 3 times beyond it without a noise estimate" in text


def test_one_try_a_side_is_no_noise_estimate_and_a_real_slowdown_is_caught(tmp_path: Path) -> None:
    """Noise is not called a regression: a time with one try a side (two runs of --tries 2:
    one hot try each) is shown with "no noise estimate", never flagged; an injected 20%
    slowdown measured with tries (every try 20% slower) is flagged worse."""
    base = with_query(real(DUCKDB_1M), 0, [3.0, 1.00, 1.02])
    baseline = write(tmp_path / "b", base)
    one_try = write(tmp_path / "one", with_query(real(DUCKDB_1M), 0, [3.6, 1.25]))
    single = metric(
        compared(write(tmp_path / "b1", with_query(real(DUCKDB_1M), 0, [3.0, 1.0])), one_try).pairs[0],
        "q1.hot",
    )
    assert (
        single.noise == "unknown" and single.beyond_threshold and not single.flagged and not single.regression
    )
    cold = metric(compared(baseline, one_try).pairs[0], "q1.cold")
    assert cold.ratio == pytest.approx(1.2) and not cold.flagged
    text = " ".join(invoke(str(tmp_path / "b1"), str(one_try)).output.split())
    assert "no noise estimate" in text and "▲ worse" not in text
    slowed = write(tmp_path / "slow", with_query(real(DUCKDB_1M), 0, [3.6, 1.20, 1.224]))
    hot = metric(compared(baseline, slowed).pairs[0], "q1.hot")
    assert hot.ratio == pytest.approx(1.2) and hot.noise == "separated" and hot.regression


def test_the_threshold_decides_beyond_the_noise(tmp_path: Path) -> None:
    base = with_query(real(DUCKDB_1M), 0, [3.0, 1.00, 1.01, 1.02])
    contender = write(tmp_path / "c", with_query(real(DUCKDB_1M), 0, [3.0, 1.25, 1.26, 1.27]))
    baseline = write(tmp_path / "b", base)
    for threshold, flagged in ((0.30, False), (0.25, False), (0.10, True)):
        hot = metric(compared(baseline, contender, threshold).pairs[0], "q1.hot")
        assert hot.significant and hot.ratio == pytest.approx(1.25)
        assert hot.flagged is flagged, threshold
    # Symmetric: x0.8 is as far below as x1.25 is above.
    faster = write(tmp_path / "f", with_query(real(DUCKDB_1M), 0, [3.0, 0.80, 0.801, 0.802]))
    assert not metric(compared(baseline, faster, 0.26).pairs[0], "q1.hot").flagged
    assert metric(compared(baseline, faster, 0.24).pairs[0], "q1.hot").flagged


def test_a_query_that_failed_in_the_contender_is_a_regression(tmp_path: Path) -> None:
    failed = with_query(real(DUCKDB_1M), 4, [None, None, None])
    failed["answers"][4] = {"query": 5, "status": "error", "detail": "timeout"}
    baseline, contender = sides(tmp_path, [real(DUCKDB_1M)], [failed])
    (pair,) = compared(baseline, contender).pairs
    hot = metric(pair, "q5.hot")
    assert hot.contender is None and hot.regression and hot.direction == "worse"
    assert "contender: answer error" in hot.note and "no figure in the contender (failed)" in hot.note
    # A figure a side never measures (JSONBench publishes no load time) is never flagged.
    # (JSONBench's DuckDB has its counterpart, duckdb113/jsonbench: the 1m DuckDB result in its place)
    duckdb = counterpart("DuckDB")
    assert duckdb is not None
    as_113 = write(tmp_path / "as113", real(DUCKDB_1M) | {"system": duckdb.system, "variant": duckdb.variant})
    published = compare(published_jsonbench(), load_set([as_113], "contender"), 0.1)
    load = metric(published.pairs[0], "load_time")
    assert load.baseline is None and load.contender is not None and not load.flagged


def test_threshold_values() -> None:
    assert parse_threshold("10%") == pytest.approx(0.1)
    assert parse_threshold("5") == pytest.approx(0.05)
    assert parse_threshold(" 2.5 % ") == pytest.approx(0.025)
    assert parse_threshold("0%") == 0
    for text in ("abc", "-1%", "nan", "inf"):
        with pytest.raises(ValueError, match="not a percentage"):
            parse_threshold(text)


# ----- warnings -----------------------------------------------------------------------------


def test_warnings_where_the_two_measured_differently(tmp_path: Path) -> None:
    base = real(CLICKHOUSE_10M)
    changed = base | {
        "dataset_fingerprint": "0123456789abcdef",
        "variant_settings": base["variant_settings"] | {"codec": "CODEC(LZ4)"},
        "version": "27.1",
        "machine": "64 cores, 256 GiB, Other CPU",
        "tries": 5,
    }
    baseline, contender = sides(tmp_path, [base], [changed])
    (pair,) = compared(baseline, contender).pairs
    messages = {w.kind: w.message for w in pair.warnings}
    assert set(messages) == {"dataset", "settings", "machine", "version", "tries"}
    assert (
        messages["dataset"]
        == "dataset: not the same data (baseline 7413da714995a86c, contender 0123456789abcdef)"
    )
    assert messages["settings"] == "variant settings differ: codec: 'CODEC(ZSTD(3))' -> 'CODEC(LZ4)'"
    assert (
        "'2 cores, 24 GiB, AMD EPYC', the contender on '64 cores, 256 GiB, Other CPU'" in messages["machine"]
    )
    assert messages["version"] == "engine version: baseline '26.9.2.1 (chDB 4.4.0)', contender '27.1'"
    # Each alone: exactly its own warning.
    for key, value, kind in (
        ("dataset_fingerprint", "0123456789abcdef", "dataset"),
        ("version", "27.1", "version"),
        ("machine", "another machine", "machine"),
        ("variant_settings", {}, "settings"),
        ("complete", False, "incomplete"),
    ):
        one = write(tmp_path / kind, base | {key: value})
        (pair,) = compared(baseline, one).pairs
        assert [w.kind for w in pair.warnings] == [kind]


# ----- JSONBench's published results -----------------------------------------------------------


def test_the_published_jsonbench_results_are_shipped_with_their_source() -> None:
    shipped = json.loads(PUBLISHED_JSONBENCH.read_text())
    assert shipped["source"] == "https://github.com/ClickHouse/JSONBench"
    assert len(shipped["commit"]) == 40 and shipped["commit_date"][:4] >= "2025"
    systems = {r["system"] for r in shipped["results"]}
    for name in ("ClickHouse", "DuckDB", "PostgreSQL", "MongoDB", "Elasticsearch", "VictoriaLogs"):
        assert name in systems
    # JSONBench's directories: its systems' names in lower case (and its own _files_json)
    assert {r["path"].split("/")[0] for r in shipped["results"]} >= {
        "ClickHouse".lower(),
        "PostgreSQL".lower(),
        "_files_json",
    }
    assert all(r["path"].count("/") == 2 and "/results/" in r["path"] for r in shipped["results"])
    scales = {r["dataset_size"] for r in shipped["results"]}
    assert scales >= {1_000_000, 10_000_000, 100_000_000, 1_000_000_000}
    published = published_jsonbench()
    assert published.published and published.published["commit"] == shipped["commit"]
    mapped = {(d["system"], d["variant"], d["dataset_label"]) for d in published.documents}
    clickhouse, postgresql = counterpart("ClickHouse"), counterpart("PostgreSQL")
    assert clickhouse is not None and postgresql is not None
    assert (clickhouse.system, "jsonbench", "10m") in mapped and (
        postgresql.system,
        "jsonbench",
        "1000m",
    ) in mapped
    # Nothing is dropped silently: what has no counterpart is listed, with the reason.
    assert len(published.documents) + len(published.not_compared) == len(shipped["results"])
    unmatched = {n.name for n in published.not_compared}
    assert {"Apache Doris", "SingleStore", "data.json.zstd"} <= unmatched


def test_every_counterpart_is_a_variant_of_its_system() -> None:
    for row in COUNTERPARTS:
        variants = {v.name: v for v in adapter_variants(row.system, "analytics")}
        assert row.variant in variants, row
        if row.settings is not None:  # the variant's own keys, so that a difference is one of value
            assert set(row.settings) <= set(variants[row.variant].settings), row


def test_the_documented_table_is_the_table_in_code() -> None:
    text = (ROOT / "docs" / "compare.md").read_text()
    table = text.split("| JSONBench `system` | docbench | settings |", 1)[1].split("\n\n", 1)[0]
    cells = [line.split("|")[1:3] for line in table.splitlines()[2:]]
    rows = [(name.strip(), target.strip().strip("`")) for name, target in cells]
    assert rows == [(r.jsonbench, f"{r.system}/{r.variant}") for r in COUNTERPARTS]


def test_scale_results_against_jsonbench(tmp_path: Path) -> None:
    outcome = invoke("--against", "jsonbench", str(JSONBENCH_RUNS), "--json")
    assert outcome.exit_code == 0, outcome.output
    document = json.loads(outcome.stdout)
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    assert (
        document["baseline"]["published"]["commit"] == json.loads(PUBLISHED_JSONBENCH.read_text())["commit"]
    )
    pair = next(p for p in document["pairs"] if p["name"] == "analytics clickhouse/jsonbench 10m")
    figures = {m["metric"]: m for m in pair["metrics"]}
    # docbench's clickhouse/jsonbench at 10m (JSONBench's DDL of its published sizes, on
    # ClickHouse 25.11's defaults) stores 1.003x JSONBench's: within the threshold, no regression.
    for name in ("storage.data_bytes", "storage.data_bytes_per_document", "storage.total_bytes"):
        assert 1.0 < figures[name]["ratio"] < 1.05, name
        assert not figures[name]["regression"] and not figures[name]["machine_bound"]
    assert figures["documents_loaded"]["ratio"] == 1  # both loaded 9,999,994 of 10,000,000
    kinds = {w["kind"] for w in pair["warnings"]}
    assert kinds == {"dataset", "settings", "machine", "version", "counterpart"}
    settings = next(w["message"] for w in pair["warnings"] if w["kind"] == "settings")
    assert settings.startswith("variant settings differ: max_parts_to_merge_at_once: 100 -> 5; ")
    assert "compatibility=25.11" in settings and "string_serialization_version" in settings
    assert pair["baseline"]["path"].endswith("clickhouse/results/m6i.8xlarge_bluesky_10m.json")
    assert pair["baseline"]["imported_from"] == "JSONBench"
    reasons = {(n["name"], n["reason"]) for n in document["not_compared"]}
    assert ("Apache Doris", "no docbench system or variant corresponds (systems/jsonbench.py)") in reasons
    # The terminal says the same.
    text = " ".join(invoke("--against", "jsonbench", str(JSONBENCH_RUNS)).output.split())  # any width
    assert "analytics clickhouse/jsonbench 10m" in text and "×1.00" in text
    assert "variant settings differ: max_parts_to_merge_at_once: 100 -> 5;" in text
    assert "no docbench system or variant corresponds (systems/jsonbench.py): Apache Doris (4)" in text


def test_a_configuration_far_from_jsonbench_is_a_regression(tmp_path: Path) -> None:
    """docbench's zstd variant at 10m (max_dynamic_paths = 0, ZSTD(3)) in the jsonbench
    variant's place: 1.64x JSONBench's bytes, flagged, and every setting that differs named."""
    mdp0 = real(CLICKHOUSE_10M) | {"variant": "jsonbench"}
    outcome = invoke("--against", "jsonbench", str(write(tmp_path / "runs", mdp0)), "--json")
    (pair,) = [p for p in json.loads(outcome.stdout)["pairs"] if p["name"].startswith("analytics clickhouse")]
    figures = {m["metric"]: m for m in pair["metrics"]}
    for name in ("storage.data_bytes", "storage.data_bytes_per_document", "storage.total_bytes"):
        assert 1.6 < figures[name]["ratio"] < 1.7, name
        assert figures[name]["regression"] and not figures[name]["machine_bound"]
    settings = next(w["message"] for w in pair["warnings"] if w["kind"] == "settings")
    assert "json_parameters: '' -> 'max_dynamic_paths = 0,'" in settings
    assert "codec: 'CODEC(ZSTD(1))' -> 'CODEC(ZSTD(3))'" in settings


def test_jsonbench_result_files_as_a_side(tmp_path: Path) -> None:
    baseline = tmp_path / "jsonbench"
    baseline.mkdir()
    for path in FIXTURES.iterdir():
        (baseline / path.name).write_text(path.read_text())
    (baseline / "other.json").write_text(
        json.dumps({"system": "Apache Doris", "dataset_size": 10, "result": []})
    )
    comparison = compared(baseline, JSONBENCH_RUNS)
    assert {p.name for p in comparison.pairs} == {
        "analytics clickhouse/jsonbench 1m",
        "analytics clickhouse/jsonbench 10m",
        "analytics postgresql/jsonbench 1m",  # JSONBench's lz4 table, docbench's run of its DDL
    }
    assert comparison.only_baseline == []
    assert [n.name for _, n in comparison.not_compared] == ["Apache Doris"]
    # The same files imported by `docbench import-jsonbench` (variant imported-<machine>) match alike.
    imported, _ = import_files([baseline], tmp_path / "imported")
    assert len(imported) == 3
    again = compared(tmp_path / "imported", JSONBENCH_RUNS)
    assert [p.name for p in again.pairs] == [p.name for p in comparison.pairs]
    assert [metric(p, "storage.total_bytes").ratio for p in again.pairs] == [
        metric(p, "storage.total_bytes").ratio for p in comparison.pairs
    ]


def test_update_script_regenerates_the_shipped_file(tmp_path: Path) -> None:
    """From a (tiny) JSONBench repository: its results at the commit, with that commit."""
    repo = tmp_path / "JSONBench"
    fixture = FIXTURES / "m6i.8xlarge_bluesky_1m_clickhouse.json"
    jsonbench_system = json.loads(fixture.read_text())["system"]  # JSONBench's ClickHouse
    directory = jsonbench_system.lower()  # JSONBench's directory of that system
    (repo / directory / "results" / "_query_results").mkdir(parents=True)
    (repo / directory / "results" / "m.json").write_text(fixture.read_text())
    (repo / directory / "results" / "_query_results" / "x.json").write_text("{}")
    (repo / directory / "ddl.sql").write_text("CREATE TABLE t")

    def git(*args: str) -> str:
        names = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)} | dict.fromkeys(names, "t")
        return subprocess.run(
            ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
        ).stdout

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "results")
    out = tmp_path / "jsonbench.json"
    script = ROOT / "scripts" / "update-jsonbench-published.py"
    subprocess.run(
        [sys.executable, str(script), str(repo), "--out", str(out)], check=True, capture_output=True
    )
    shipped = json.loads(out.read_text())
    assert shipped["commit"] == git("rev-parse", "HEAD").strip()
    assert [r["path"] for r in shipped["results"]] == [f"{directory}/results/m.json"]
    assert shipped["results"][0]["total_size"] == 99012345
    published = published_jsonbench(path=out)
    row = counterpart(jsonbench_system)
    assert row is not None
    assert [(d["system"], d["variant"], d["dataset_label"]) for d in published.documents] == [
        (row.system, "jsonbench", "1m")
    ]


# ----- JSON, exit codes --------------------------------------------------------------------------


def test_json_schema_is_the_output_and_is_live(tmp_path: Path) -> None:
    slower = with_query(real(DUCKDB_1M), 0, [3.0, 2.0, 2.1])
    baseline, contender = sides(tmp_path, [real(DUCKDB_1M)], [slower])
    outcome = invoke(str(baseline), str(contender), "--json", "--threshold", "5%")
    assert outcome.exit_code == 0, outcome.output
    document = json.loads(outcome.stdout)
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(document, schema)
    assert document["schema"] == "docbench-compare/1" and document["threshold"] == pytest.approx(0.05)
    assert document["summary"]["pairs"] == 1 and document["summary"]["regressions"] >= 1
    assert document["regression"] is True
    hot = next(m for m in document["pairs"][0]["metrics"] if m["metric"] == "q1.hot")
    assert hot["baseline_tries"] == real(DUCKDB_1M)["result"][0][1:] and hot["contender_tries"] == [2.0, 2.1]
    assert document == json.loads(json.dumps(to_json(compared(baseline, contender, 0.05)))) | {
        "generated_at": document["generated_at"]
    }
    broken = copy.deepcopy(document)
    broken["pairs"][0]["metrics"][0]["noise"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_a_generated_1m_of_another_seed_is_jsonbench_1m_with_a_warning(tmp_path: Path) -> None:
    """A Bluesky dataset of 1,000,000 documents is JSONBench's 1m whatever its seed or its
    directory: the pair is made on the document count and the dataset's kind, and the seed is
    a warning (issue 46: `docbench generate --docs 1m --seed 11`, label gen-1m-s11)."""
    run = real(CLICKHOUSE_1M) | {"variant": "jsonbench", "dataset_label": "gen-1m-s11"}
    run["dataset"] = dict(run["dataset"], label="gen-1m-s11", kind="bluesky")
    run["dataset"]["manifest"] = dict(run["dataset"].get("manifest") or {}, seed=11)
    outcome = invoke("--against", "jsonbench", str(write(tmp_path / "runs", run)), "--json")
    assert outcome.exit_code == 0, outcome.output
    document = json.loads(outcome.stdout)
    (pair,) = [p for p in document["pairs"] if p["name"] == "analytics clickhouse/jsonbench 1m"]
    dataset = next(w["message"] for w in pair["warnings"] if w["kind"] == "dataset")
    assert "contender generated, seed 11" in dataset and "not the same documents" in dataset
    # Other documents (not Bluesky events) keep their label: nothing of JSONBench's matches,
    # and the command says why for each result, and fails.
    other = run | {"dataset_label": "licensedb"}
    other["dataset"] = dict(run["dataset"], kind="documents", label="licensedb")
    unmatched = invoke("--against", "jsonbench", str(write(tmp_path / "other", other)))
    text = " ".join(unmatched.output.split())
    assert unmatched.exit_code == 1, unmatched.output
    assert "Nothing compared" in text and "Why nothing matched, per contender result:" in text
    assert (
        "analytics clickhouse/jsonbench licensedb: closest baseline: analytics clickhouse/jsonbench" in text
    )
    assert "differs in scale licensedb against" in text


def test_exit_codes(tmp_path: Path) -> None:
    slower = with_query(real(DUCKDB_1M), 0, [3.0, 2.0, 2.1])
    baseline, contender = sides(tmp_path, [real(DUCKDB_1M)], [slower])
    assert invoke(str(baseline), str(contender)).exit_code == 0  # regressions are shown, not fatal
    failing = invoke(str(baseline), str(contender), "--fail-on-regression")
    assert failing.exit_code == 1
    # Q1 hot (two tries a side, separated); Q1 cold is one try a side: no noise estimate, no flag
    assert "--fail-on-regression: 1 regression(s) beyond 10%: exit 1" in failing.output
    assert invoke(str(baseline), str(baseline), "--fail-on-regression").exit_code == 0
    nothing = write(tmp_path / "nothing", real(SQLITE_1M))
    empty = invoke(str(baseline), str(nothing), "--fail-on-regression")
    assert empty.exit_code == 1 and "Nothing compared" in empty.output
    assert invoke(str(baseline), str(nothing)).exit_code == 1  # nothing compared fails without it too
    assert "Nothing compared: exit 1" in empty.output  # on standard error, under --json too:
    as_json = invoke(str(baseline), str(nothing), "--json")
    assert as_json.exit_code == 1 and "Nothing compared: exit 1" in as_json.output
    for args, message in (
        ((str(baseline),), "give two paths, BASELINE and CONTENDER, or --against jsonbench (1 given)"),
        (("--against", "jsonbench", str(baseline), str(contender)), "--against jsonbench takes one path"),
        ((str(baseline), str(tmp_path / "missing")), "does not exist"),
        (
            (str(baseline), str(contender), "--threshold", "ten"),
            "'ten' is not a percentage (use e.g. 10% or 5)",
        ),
    ):
        outcome = invoke(*args)
        assert outcome.exit_code == 2 and message in outcome.output, (args, outcome.output)
    (tmp_path / "empty").mkdir()
    outcome = invoke(str(baseline), str(tmp_path / "empty"))
    assert outcome.exit_code == 2
    assert (
        f"contender {tmp_path / 'empty'} holds no docbench or JSONBench result file (*.json)"
        in outcome.output
    )


# ----- real runs ------------------------------------------------------------------------------------


def docbench(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"DOCBENCH_HOME": str(home / "home"), "DOCBENCH_DATA": str(home / "data")}
    return subprocess.run(
        [sys.executable, "-m", "docbench.cli", *args], env=env, capture_output=True, text=True, timeout=600
    )


def test_two_real_duckdb_runs_compared(tmp_path: Path) -> None:
    for name in ("first", "second"):
        run = docbench(
            tmp_path,
            "run",
            "--systems",
            EMBEDDED.system,
            "--variants",
            EMBEDDED.variant,
            "--scale",
            "2k",
            "--results",
            str(tmp_path / name),
        )
        assert run.returncode == 0, run.stdout + run.stderr
    outcome = docbench(tmp_path, "compare", str(tmp_path / "first"), str(tmp_path / "second"), "--json")
    assert outcome.returncode == 0, outcome.stderr
    document = json.loads(outcome.stdout)
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    (pair,) = document["pairs"]
    assert pair["key"] == {
        "workload": "analytics",
        "system": EMBEDDED.system,
        "variant": EMBEDDED.variant,
        "scale": "2k",
        "cluster": "",
    }
    assert pair["warnings"] == []  # same data, settings, version, machine, tries
    figures = {m["metric"]: m for m in pair["metrics"]}
    assert figures["documents_loaded"]["ratio"] == 1 and figures["documents_loaded"]["baseline"] == 2000
    assert all(figures[f"q{q}.hot"]["ratio"] for q in range(1, 6))
    assert len(figures["q1.hot"]["baseline_tries"]) == 2  # tries 2 and 3
    table = docbench(tmp_path, "compare", str(tmp_path / "first"), str(tmp_path / "second"))
    assert f"analytics {EMBEDDED.system}/{EMBEDDED.variant} 2k" in table.stdout and "1 pairs" in table.stdout


def test_two_real_throughput_runs_compared_with_their_intervals(tmp_path: Path) -> None:
    for name in ("first", "second"):
        run = docbench(
            tmp_path, "run", "throughput", "--systems", QUICK.system, "--docs", "2k", "--clients", "1",
            "--duration", "1.5", "--warmup", "0", "--progress", "0.5", "--mix", "read-only",
            "--scenario", "cpu", "--no-ceiling", "--no-native", "--results", str(tmp_path / name),
        )  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
    comparison = compared(tmp_path / "first", tmp_path / "second")
    (pair,) = comparison.pairs
    tps = metric(pair, "cpu-read-only-uniform-c1.tps")
    assert tps.higher_is_better and tps.baseline and tps.contender
    assert len(tps.baseline_tries) >= 2 and tps.noise in ("overlap", "separated")
    assert {m.metric.rsplit(".", 1)[1] for m in pair.metrics} == {
        "tps",
        "p50_ms",
        "p95_ms",
        "p99_ms",
        "p999_ms",
    }
    # The second run made half as fast as the first, in all and in every interval: separated,
    # flagged, worse.
    result = next((tmp_path / "second").glob("throughput.*[0-9]Z.json"))
    series = next((tmp_path / "second").glob("*.intervals.json"))
    halved = tmp_path / "halved"
    halved.mkdir()
    document = json.loads(result.read_text())
    document["runs"][0]["summary"]["tps"] = tps.baseline / 2
    intervals = json.loads(series.read_text())
    for interval in intervals["intervals"]:
        interval["tps"] = min(tps.baseline_tries) / 3
    (halved / result.name).write_text(json.dumps(document))
    (halved / series.name).write_text(json.dumps(intervals))
    slower = metric(compared(tmp_path / "first", halved).pairs[0], "cpu-read-only-uniform-c1.tps")
    assert slower.ratio == pytest.approx(0.5)
    assert slower.noise == "separated" and slower.regression and slower.direction == "worse"


# ----- the HTML view -------------------------------------------------------------------------------


def test_compare_view_in_chromium(tmp_path: Path, browser: Chromium) -> None:  # noqa: F811
    page = tmp_path / "compare.html"
    # (docbench's zstd variant at 10m in the jsonbench variant's place: 1.64x JSONBench's bytes)
    runs = write(tmp_path / "runs", real(CLICKHOUSE_10M) | {"variant": "jsonbench"}).parent
    outcome = invoke("--against", "jsonbench", str(runs), "--html", str(page))
    assert outcome.exit_code == 0, outcome.output
    expected = to_json(compare(published_jsonbench(), load_set([runs], "contender"), 0.1))
    browser.open(page.as_uri())
    assert browser.js("[...document.querySelectorAll('#tabs button')].map(b => b.textContent)") == ["Compare"]
    assert browser.js("document.getElementById('view-compare').hidden") is False
    shown = browser.js("[...document.querySelectorAll('section.compare-pair')].map(s => s.dataset.pair)")
    assert shown == [p["name"] for p in expected["pairs"]]
    in_pair = 'section.compare-pair[data-pair="analytics clickhouse/jsonbench 10m"]'
    rows = browser.js(
        f"""[...document.querySelectorAll('{in_pair} tr.metric-row')].map(tr => ({{metric: tr.dataset.metric,
        ratio: tr.dataset.ratio, flag: tr.dataset.flag, text: tr.querySelector('td.ratio').textContent,
        noise: tr.querySelector('td.noise').textContent}}))"""
    )
    # The noise column as the terminal's: none for sizes, "no noise estimate" for one try a side.
    noise = {r["metric"]: r["noise"] for r in rows}
    assert noise["storage.data_bytes"] == "" and noise["q1.cold"] == "no noise estimate"
    assert noise["q2.hot"].startswith("±") and " p" in noise["q2.hot"]
    data = next(r for r in rows if r["metric"] == "storage.data_bytes")
    assert data["text"] == "×1.64" and data["flag"] == "worse" and 1.6 < float(data["ratio"]) < 1.7
    pair = next(p for p in expected["pairs"] if p["name"] == "analytics clickhouse/jsonbench 10m")
    assert [r["metric"] for r in rows] == [m["metric"] for m in pair["metrics"]]
    warnings = browser.js(
        f"[...document.querySelectorAll('{in_pair} ul.warnings li')].map(li => li.dataset.kind)"
    )
    assert warnings == [w["kind"] for w in pair["warnings"]]
    assert "Apache Doris" in browser.js("document.getElementById('view-compare').textContent")
    browser.screenshot(tmp_path / "compare.png")


# ----- the noise model: A/A pairs and an injected slowdown -------------------------------------


def test_t_distribution_and_welch_test() -> None:
    """The standard library's Student t against its tables, and Welch's test against a
    textbook example (Wikipedia's "Welch's t-test", example 1: t = -2.46, df = 24.99, p = 0.021)."""
    for t, df, p in ((12.7062, 1, 0.05), (4.302653, 2, 0.05), (2.570582, 5, 0.05), (2.0, 10, 0.07339)):
        assert t_two_sided_p(t, df) == pytest.approx(p, abs=2e-5), (t, df)
    assert t_two_sided_p(1.959964, math.inf) == pytest.approx(0.05, abs=1e-6)
    a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
    b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]

    def moments(x: list[float]) -> tuple[float, float, int]:
        mean = sum(x) / len(x)
        return mean, sum((v - mean) ** 2 for v in x) / (len(x) - 1), len(x)

    assert welch_p(*moments(a), *moments(b)) == pytest.approx(0.021, abs=1e-3)
    # No estimate with one sample a side; on log times, so x1.2 is x1.2 on any scale.
    assert not noise_test([1.0], [1.0, 1.1]).estimate and noise_test([1.0], [1.0, 1.1]).p_value is None
    fast, slow = noise_test([0.01, 0.0102], [0.012, 0.0121]), noise_test([10, 10.2], [12, 12.1])
    assert fast.p_value == pytest.approx(slow.p_value) and fast.shift == pytest.approx(slow.shift)
    # The floor: the run-to-run spread tries cannot show. Without it, two tight runs 12% apart
    # are certain to differ; with 5%, they are within the noise of two runs.
    tight = [1.00, 1.002], [1.12, 1.122]
    assert noise_test(*tight, floor=0).p_value < 0.01  # type: ignore[operator]
    assert noise_test(*tight, floor=0.05).p_value > 0.05  # type: ignore[operator]


def synthetic(
    document: dict[str, Any], rng: random.Random, factor: float = 1.0, tries: int = 5, spread: float = 0.03
) -> dict[str, Any]:
    """A result of the same shape as a real one: every query's tries drawn around the real
    hot time (the cold one around the real cold time), each with ``spread`` of log-normal
    noise, all times x ``factor``; sizes and counts as they are (the loads are deterministic)."""
    made = copy.deepcopy(document) | {"tries": tries}
    for q, row in enumerate(made["result"]):
        cold, hot = row[0], min(row[1:])
        made["result"][q] = [
            round(t * factor * math.exp(rng.gauss(0, spread)), 6) for t in [cold] + [hot] * (tries - 1)
        ]
    made["load_time"] = round(document["load_time"] * factor * math.exp(rng.gauss(0, spread)), 3)
    return made


def in_memory(label: str, documents: list[dict[str, Any]]) -> ResultSet:
    return ResultSet(label, [label], [d | {"_path": f"{label}/{i}.json"} for i, d in enumerate(documents)])


def test_an_injected_20_percent_slowdown_is_flagged_and_an_aa_pair_is_not(tmp_path: Path) -> None:
    """Real-shaped results (JSONBench's ClickHouse and PostgreSQL at 1m, as docbench ran them)
    with 5 tries: an A/A pair (the same distribution, other samples) flags nothing; the same
    pair with every time 20% slower flags every hot time as a regression (the cold times and
    the load time are one sample a side: no noise estimate)."""
    rng = random.Random(46)
    originals = [
        json.loads((JSONBENCH_RUNS / n).read_text())
        for n in (JSONBENCH_CLICKHOUSE_1M, JSONBENCH_POSTGRESQL_1M)
    ]
    baseline = [synthetic(d, rng) for d in originals]
    same = [synthetic(d, rng) for d in originals]
    slower = [synthetic(d, rng, factor=1.2) for d in originals]
    for i, (b, a, s) in enumerate(zip(baseline, same, slower, strict=True)):
        write(tmp_path / "baseline", b, f"{i}.json")
        write(tmp_path / "same", a, f"{i}.json")
        write(tmp_path / "slower", s, f"{i}.json")
    aa = invoke(str(tmp_path / "baseline"), str(tmp_path / "same"), "--json", "--fail-on-regression")
    assert aa.exit_code == 0, aa.output
    document = json.loads(aa.stdout)
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    assert document["summary"]["pairs"] == 2 and document["summary"]["flagged"] == 0
    assert document["alpha"] == 0.05 and document["noise_floor"] == 0.05
    ab = invoke(str(tmp_path / "baseline"), str(tmp_path / "slower"), "--json", "--fail-on-regression")
    assert ab.exit_code == 1
    for pair in json.loads(ab.stdout)["pairs"]:
        flagged = {m["metric"] for m in pair["metrics"] if m["regression"]}
        assert flagged == {f"q{q}.hot" for q in range(1, 6)}, pair["name"]
        cold = next(m for m in pair["metrics"] if m["metric"] == "q1.cold")
        assert cold["ratio"] > 1.1 and not cold["noise_estimate"] and not cold["flagged"]


def test_false_positive_rate_and_power_over_many_pairs() -> None:
    """The rule on 100 A/A pairs of each real-shaped result, with the default tries (3: two
    hot a side) and the tries' noise alone: at most 5% of the figures flagged; and a 20%
    slowdown, 5 tries a side, caught in at least 90% of the hot times."""
    originals = [
        json.loads((JSONBENCH_RUNS / n).read_text())
        for n in (JSONBENCH_CLICKHOUSE_1M, JSONBENCH_POSTGRESQL_1M)
    ]
    rng = random.Random(7)
    figures = flagged = hot = caught = 0
    for _ in range(100):
        aa = compare(
            in_memory("baseline", [synthetic(d, rng, tries=3) for d in originals]),
            in_memory("contender", [synthetic(d, rng, tries=3) for d in originals]),
            0.1,
        )
        metrics = [m for p in aa.pairs for m in p.metrics if m.ratio is not None]
        figures, flagged = figures + len(metrics), flagged + sum(m.flagged for m in metrics)
        ab = compare(
            in_memory("baseline", [synthetic(d, rng) for d in originals]),
            in_memory("contender", [synthetic(d, rng, factor=1.2) for d in originals]),
            0.1,
        )
        hots = [m for p in ab.pairs for m in p.metrics if m.metric.endswith(".hot")]
        hot, caught = hot + len(hots), caught + sum(m.regression for m in hots)
    assert figures == 100 * 2 * 18 and flagged / figures <= 0.05, flagged
    assert caught / hot >= 0.9, caught


def test_aa_noise_script_measures_the_false_positive_rate(tmp_path: Path) -> None:
    """scripts/aa-noise.py on four runs (two A/A pairs, 1-2 and 3-4) of two systems: per
    system the figures, flags and rate; one run 30% slower makes a pair flag, over the bar."""
    rng = random.Random(3)
    originals = [
        json.loads((JSONBENCH_RUNS / n).read_text())
        for n in (JSONBENCH_CLICKHOUSE_1M, JSONBENCH_POSTGRESQL_1M)
    ]
    for run in range(1, 5):
        for i, document in enumerate(originals):
            write(tmp_path / "aa" / f"run-{run}", synthetic(document, rng), f"{i}.json")
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, str(AA_NOISE), str(tmp_path / "aa" / "run-*")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line.split()}
    assert lines["clickhouse/jsonbench"][2:5] == ["2", "36", "0"]  # 1m, 2 pairs, 36 figures, 0 flagged
    assert lines["postgresql/jsonbench"][2:5] == ["2", "36", "0"]
    assert lines["all"][1:4] == ["4", "72", "0"]
    tallies = aa_noise(sorted((tmp_path / "aa").iterdir()), 0.1, all_pairs=True)
    assert tallies["all"].pairs == 6 * 2  # every two of 4 runs, 2 systems each
    # Run 2 30% slower: pair 1-2 flags its hot times, over the 5% bar: exit 1.
    for path in (tmp_path / "aa" / "run-2").iterdir():
        write(path.parent, synthetic(json.loads(path.read_text()), rng, factor=1.3), path.name)
    over = subprocess.run(
        [sys.executable, str(AA_NOISE), str(tmp_path / "aa" / "run-*"), "--json"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert over.returncode == 1, over.stdout + over.stderr
    record = json.loads(over.stdout)
    assert record["systems"]["all"]["rate"] > 0.05 and record["noise_floor"] == 0.05
    assert set(record["systems"]["clickhouse/jsonbench 1m"]["flagged_metrics"]) >= {"q2.hot", "q3.hot"}


# ----- identity: a Bluesky dataset of N documents ----------------------------------------------


def generated(
    document: dict[str, Any], seed: int, directory: str, documents: int = 1_000_000
) -> dict[str, Any]:
    """``document`` as if run on ``docbench generate --docs N --seed S --out <directory>``."""
    made = copy.deepcopy(document)
    made["dataset_label"] = made["dataset"]["label"] = directory
    made["dataset"]["manifest"] |= {"seed": seed, "docs": documents}
    made["dataset_size"] = documents
    made["dataset_fingerprint"] = made["dataset"]["fingerprint"] = f"{seed:04d}{documents:012d}"
    return made


def test_a_generated_1m_of_another_seed_is_jsonbench_1m(tmp_path: Path) -> None:
    """Issue #46, item 7: `docbench generate --docs 1m --seed 11` (label gen-1m-s11) is
    JSONBench's 1m: compared, with the seed and directory in the dataset warning; here from a
    result that does not record `dataset.kind` (written before it did): its docbench-gen
    manifest says it is Bluesky events."""
    seed11 = generated(json.loads((JSONBENCH_RUNS / JSONBENCH_CLICKHOUSE_1M).read_text()), 11, "gen-1m-s11")
    runs = write(tmp_path / "runs", seed11).parent
    outcome = invoke("--against", "jsonbench", str(runs), "--json")
    assert outcome.exit_code == 0, outcome.output
    document = json.loads(outcome.stdout)
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    (pair,) = document["pairs"]
    assert pair["name"] == "analytics clickhouse/jsonbench 1m"
    assert pair["baseline"]["path"].endswith("clickhouse/results/m6i.8xlarge_bluesky_1m.json")
    dataset = next(w["message"] for w in pair["warnings"] if w["kind"] == "dataset")
    assert "not the same documents (baseline JSONBench's Bluesky dataset" in dataset
    assert "contender generated, seed 11 in 'gen-1m-s11')" in dataset
    # Between two docbench runs: the seed and the directory that differ.
    seed1 = write(tmp_path / "seed1", json.loads((JSONBENCH_RUNS / JSONBENCH_CLICKHOUSE_1M).read_text()))
    (pair_,) = compared(seed1.parent, runs).pairs
    assert pair_.name == "analytics clickhouse/jsonbench 1m"
    (warning,) = [w.message for w in pair_.warnings if w.kind == "dataset"]
    assert "(baseline generated, seed 1 in '1m', contender generated, seed 11 in 'gen-1m-s11')" in warning


def test_nothing_compared_says_why_for_each_contender_result(tmp_path: Path) -> None:
    """A 2m against JSONBench (which publishes 1m, 10m, 100m, 1000m) and against a docbench
    1m: nothing compared, each contender result set against the closest baseline one, exit 1
    with or without --fail-on-regression."""
    original = json.loads((JSONBENCH_RUNS / JSONBENCH_CLICKHOUSE_1M).read_text())
    two = write(tmp_path / "2m", generated(original, 1, "gen-2m", 2_000_000)).parent
    outcome = invoke("--against", "jsonbench", str(two))
    assert outcome.exit_code == 1
    text = " ".join(outcome.output.split())
    assert "Nothing compared: no result of the contender has the identity of one of the baseline." in text
    assert (
        "Why nothing matched, per contender result: analytics clickhouse/jsonbench 2m: "
        "closest baseline: analytics clickhouse/jsonbench 1m (JSONBench@"
    ) in text
    assert (
        "differs in scale 2m against 1m (Bluesky (generated, seed 1), 2,000,000 documents in "
        "'gen-2m' against JSONBench's Bluesky dataset, 1,000,000 documents)"
    ) in text
    assert "Nothing compared: exit 1" in text
    document = json.loads(invoke("--against", "jsonbench", str(two), "--json").stdout)
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    (only,) = document["only_contender"]
    assert only["key"]["scale"] == "2m" and only["closest"]["key"]["scale"] == "1m"
    assert "differs in scale 2m against 1m" in only["why"]
    # docbench against docbench: 2m against a 1m of another variant: both differences named.
    one = write(tmp_path / "1m", original | {"variant": "jsonbench_current"}).parent
    outcome = invoke(str(one), str(two), "--fail-on-regression")
    assert outcome.exit_code == 1
    text = " ".join(outcome.output.split())
    assert "closest baseline: analytics clickhouse/jsonbench_current 1m" in text
    assert (
        "differs in variant jsonbench against jsonbench_current; "
        "scale 2m against 1m (Bluesky (generated, seed 1), 2,000,000" in text
    )


def test_data_that_is_not_bluesky_keeps_its_label() -> None:
    from docbench.workloads.analytics.measures import data

    bluesky = real(DUCKDB_1M)
    assert data(bluesky).scale == "1m" and data(bluesky).kind == "bluesky"
    assert data(bluesky | {"dataset_label": "my-copy"}).scale == "1m"  # the directory's name
    own_queries = bluesky | {"dataset_label": "logs-1m", "portable": {"set": "mine"}}
    assert data(own_queries).scale == "logs-1m" and data(own_queries).kind is None
    unknown = {k: v for k, v in bluesky.items() if k not in ("dataset", "answers", "dataset_size")}
    assert data(unknown | {"dataset_label": "x"}).scale == "x"
    # What the result records (dataset.kind) decides over what its manifest suggests.
    documents = bluesky | {"dataset_label": "licensedb"}
    documents["dataset"] = dict(bluesky["dataset"], kind="documents")
    assert data(documents).scale == "licensedb" and data(documents).kind == "documents"
    real_events = unknown | {"dataset_label": "bluesky-real", "dataset_size": 2_000_000}
    real_events["dataset"] = {"kind": "bluesky", "label": "bluesky-real"}
    assert data(real_events).scale == "2m"
    assert data(real_events).origin == "not generated by docbench in 'bluesky-real'"
