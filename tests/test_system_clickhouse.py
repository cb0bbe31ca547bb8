"""ClickHouse (chDB) adapter against the real embedded engine (no mocks): the shared cases
(tests/analytics_suite.py) and ClickHouse's own.

chDB opens one database directory per process: the module's adapters share the process's one
chDB session (the engine switches directories when asked), and the worker-process test checks
that a directory released by the parent opens in another process and reopens in the parent.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from analytics_suite import AnalyticsAdapterSuite, non_empty_lines, real_files_of
from conftest import small_copy
from test_reliability import post_load_steps

from docbench.contracts.common import BatchRejected
from docbench.core.answers import check_answer
from docbench.dataset.reader import iter_lines
from docbench.systems import open_adapter
from docbench.systems.clickhouse.analytics import ClickHouseAnalytics
from docbench.systems.clickhouse.engine import ClickHouseEngine
from docbench.workloads.load import load_files
from docbench.workloads.query_worker import run_query_in_worker

pytestmark = pytest.mark.skipif(
    not ClickHouseEngine.availability().ok, reason="the chdb package is not installed"
)

BASE = (
    b'{"did":"did:plc:hard","time_us":1732206349000167,"kind":"commit","commit":{"rev":"x",'
    b'"operation":"create","collection":"app.bsky.feed.post","record":'
)


def _post(record: bytes) -> bytes:
    return BASE + record + b"}}"


# Lines ClickHouse refuses (-> BatchRejected), by name.
REFUSED = {
    "invalid_json": b'{"did": "did:plc:x", "kind": ',
    "invalid_utf8": _post(b'{"text": "caf\xc3 \xff\xfe"}'),
    # simdjson (ClickHouse's JSON parser) refuses a high surrogate escape without its pair.
    "lone_surrogate": _post(b'{"text": "a \\ud83d b"}'),
    "not_an_object": b"[1, 2, 3]",
    "duplicate_key": b'{"did": "did:plc:a", "did": "did:plc:b"}',
    # simdjson's depth limit is 1024 levels.
    # 1000 nested arrays: beyond the 300 levels of max_parser_depth once the path lives in
    # the JSON type's shared data (max_dynamic_paths = 0, JSONBench's DDL).
    "deep_1000_arrays": _post(b'{"n": ' + b"[" * 1000 + b"]" * 1000 + b"}"),
    "deep_2000": _post(b'{"n": ' + b"[" * 2000 + b"]" * 2000 + b"}"),
    # time_us is a typed UInt64 path: a value that is not an unsigned integer is refused...
    "time_us_text": b'{"did": "did:plc:x", "time_us": "soon", "kind": "commit"}',
    "time_us_negative": b'{"did": "did:plc:x", "time_us": -5, "kind": "commit"}',
}
# ... and lines it stores.
ACCEPTED = {
    "nul_escape": _post(b'{"text": "a\\u0000b"}'),
    # Beyond 64 bits: kept, as the number's text (the path becomes a String there).
    "int_beyond_64_bits": _post(b'{"size": 340282366920938463463374607431768211457}'),
    # The generator's deep_nesting document: 1000 levels inside the record.
    "deep_1000": _post(b'{"nested": ' + b'{"n": ' * 999 + b"{}" + b"}" * 999 + b"}"),
    "long_text": _post(b'{"text": "' + b"x" * 50_000 + b'"}'),
    "no_collection": b'{"did": "did:plc:id", "time_us": 1732206349000168, "kind": "identity"}',
    # (stored as 1: the typed UInt64 path truncates a fraction)
    "time_us_fraction": b'{"did": "did:plc:frac", "time_us": 1.5, "kind": "commit"}',
}


@pytest.fixture(scope="module")
def good_lines(real_data_dir: Path) -> list[bytes]:
    path = real_data_dir / "jsonbench_file_0001_first1000.jsonl"
    return [line for line in iter_lines(path) if line.strip()]


def _block_methods(system: ClickHouseAnalytics) -> set[int]:
    """The compression method byte of the first block of every column file (0x82 = LZ4,
    0x90 = ZSTD): what is really on disk."""
    methods = set()
    for path in (system.engine.path / "store").rglob("*.bin"):
        with open(path, "rb") as fh:
            header = fh.read(17)
        if len(header) == 17:
            methods.add(header[16])
    return methods


class TestClickHouse(AnalyticsAdapterSuite):
    system_name = "clickhouse"
    engine_type = ClickHouseEngine
    adapter_type = ClickHouseAnalytics
    variant_roles = [
        ("lz4", "default"),
        ("zstd", "best"),
        ("jsonbench", "alt"),
        ("jsonbench_current", "alt"),
        ("string", "representation"),
        ("columns", "representation"),
    ]

    # ----- the shared cases' hooks --------------------------------------------------------
    def check_version(self, version):
        assert version and "chDB" in version

    def check_registration(self):
        assert ClickHouseAnalytics.variant_named("lz4").role == "default"
        assert ClickHouseAnalytics.variant_named("zstd").role == "best"
        assert set(ClickHouseEngine(Path("unused")).versions()) == {"chdb", "clickhouse"}

    def check_outcome(self, number, outcome):
        assert outcome.engine_seconds is not None and outcome.engine_seconds >= 0
        assert outcome.extra.get("storage_rows_read", 1) > 0

    def check_explain(self, system, number, plan):
        assert plan and "ReadFromMergeTree" in plan
        assert system.check_plan(number, plan) is None, plan

    def check_storage(self, system, size):
        assert size.data <= size.total
        assert size.index and size.index > 0
        assert size.on_disk and size.on_disk >= size.total
        assert size.detail["parts"] >= 1  # no forced merge: as the background merges left it
        assert size.detail["outdated_parts"] == 0  # and the replaced parts left the disk
        assert size.detail["rows"] == system.count()
        assert size.detail["codec"] == "CODEC(LZ4)"
        assert _block_methods(system) == {0x82}

    # ----- ClickHouse's own ---------------------------------------------------------------
    def test_plan_warning_without_index(self) -> None:
        plan = "ReadFromMergeTree\n  Indexes:\n    PrimaryKey\n      Condition: true\n    Ranges: 1"
        assert ClickHouseAnalytics.check_plan(None, 2, plan)  # type: ignore[arg-type]
        assert ClickHouseAnalytics.check_plan(None, 2, "ReadFromMergeTree")  # type: ignore[arg-type]
        assert ClickHouseAnalytics.check_plan(None, 1, plan) is None  # type: ignore[arg-type]

    def test_worker_process_opens_released_database(self, loaded, expected) -> None:
        """chDB: one process per database directory. After release() a worker opens it; then
        the parent opens it again."""
        count = loaded.count()
        loaded.release()
        text = loaded.queries()[1]
        spec = {**loaded.session_spec(), "timeout": 60}
        run = run_query_in_worker("clickhouse", spec, 2, text, 2, 60)
        assert run.worker_error is None, run.worker_error
        for attempt in run.tries:
            assert attempt.error is None, attempt.error
            assert check_answer(2, attempt.rows, expected).status == "ok"
            assert attempt.engine_seconds is not None
        assert run.plan and "PrimaryKey" in run.plan
        assert loaded.count() == count  # the parent reopens the directory

    def test_session_timeout_setting(self, loaded) -> None:
        session = ClickHouseAnalytics.open_session({**loaded.session_spec(), "timeout": 12.5})
        try:
            outcome = session.execute(
                0, "SELECT getSetting('max_execution_time'), getSetting('use_query_cache')"
            )
            ((timeout, query_cache),) = outcome.rows
            assert timeout == 13 and not query_cache
        finally:
            session.close()

    def test_zstd_variant_and_native_load(self, tmp_path: Path, real_files: list[Path]) -> None:
        system = open_adapter("clickhouse", "analytics", tmp_path, "zstd")
        system.create()
        try:
            system.native_load(real_files)
            system.finish_load()
            assert system.count() == len(non_empty_lines(real_files))
            size = system.storage()
            assert size.total and size.data and size.index and size.on_disk
            assert size.detail["codec"] == "CODEC(ZSTD(3))"
            assert _block_methods(system) == {0x90}
            # create() starts again from an empty table
            system.create()
            assert system.count() == 0
        finally:
            system.release()


@pytest.mark.parametrize("variant", ["jsonbench", "jsonbench_current"])
def test_jsonbench_variants_create_jsonbench_tables(
    tmp_path: Path, real_data_dir: Path, variant: str
) -> None:
    """jsonbench: JSONBench's DDL its sizes were measured with (the default dynamic paths,
    ZSTD(1)), merges of at most 5 parts; jsonbench_current: its current DDL (no dynamic paths,
    the v3 and 'advanced' serializations). The real events load and are counted in both."""
    real_files = real_files_of(real_data_dir)
    system = open_adapter("clickhouse", "analytics", tmp_path, variant)
    system.create()
    try:
        system.native_load(real_files)
        system.finish_load()
        assert system.count() == len(non_empty_lines(real_files))
        (table,) = system.engine.query(
            "SELECT create_table_query FROM system.tables WHERE database = 'docbench' AND name = 'bluesky'"
        ).splitlines()
        size = system.storage()
        assert size.detail["codec"] == "CODEC(ZSTD(1))"
        created_at_types = system.engine.query(
            "SELECT DISTINCT dynamicType(data.commit.record.createdAt) FROM docbench.bluesky "
            "WHERE data.commit.record.createdAt IS NOT NULL"
        ).split()
        if variant == "jsonbench":
            assert "max_dynamic_paths" not in table and "max_parts_to_merge_at_once = 5" in table
            # the events' paths are dynamic paths (files of their own), not shared data
            assert "commit.record.text" in system.engine.query(
                "SELECT arrayJoin(JSONDynamicPaths(data)) AS p FROM docbench.bluesky GROUP BY p"
            )
            # ClickHouse 25.11's defaults, the published run's: timestamps stay strings
            assert system.engine.query("SELECT getSetting('compatibility')").strip() == "25.11"
            assert created_at_types == ["String"]
            assert "string_serialization_version = 'single_stream'" in table
        else:
            assert "max_dynamic_paths = 0" in table and "max_parts_to_merge_at_once = 20" in table
            assert "object_shared_data_serialization_version = 'advanced'" in table
            assert size.detail["table_settings"].startswith("object_serialization_version = 'v3'")
            # 26.9's date_time_input_format 'best_effort': the JSON type reads them as dates
            # (DateTime64(9), or DateTime without fractional seconds)
            assert created_at_types and all(t.startswith("DateTime") for t in created_at_types)
    finally:
        system.release()


def test_refused_and_accepted_lines(tmp_path: Path) -> None:
    system = open_adapter("clickhouse", "analytics", tmp_path, "lz4")
    system.create()
    loader = system.loader()
    try:
        for name, line in REFUSED.items():
            with pytest.raises(BatchRejected) as refusal:
                loader.load_batch([line])
            assert "Exception" in str(refusal.value), (name, str(refusal.value))
            assert system.count() == 0, name
        for count, (name, line) in enumerate(ACCEPTED.items(), start=1):
            loader.load_batch([line])
            assert system.count() == count, name
    finally:
        loader.close()
        system.release()
    assert not (tmp_path / "load-batch.ndjson").exists()


def test_invalid_utf8_message_is_clickhouses(tmp_path: Path) -> None:
    """ClickHouse quotes the refused document; chDB cannot decode that into a str and raises
    UnicodeDecodeError: the adapter still reports ClickHouse's own message."""
    system = open_adapter("clickhouse", "analytics", tmp_path, "lz4")
    system.create()
    loader = system.loader()
    try:
        with pytest.raises(BatchRejected, match="Cannot parse JSON object"):
            loader.load_batch([REFUSED["invalid_utf8"]])
    finally:
        loader.close()
        system.release()


@pytest.mark.parametrize("position", [0, 2500, 4999])
def test_batch_is_all_or_nothing(tmp_path: Path, good_lines: list[bytes], position: int) -> None:
    batch = (good_lines * 5)[:5000]
    system = open_adapter("clickhouse", "analytics", tmp_path, "lz4")
    system.create()
    loader = system.loader()
    try:
        loader.load_batch(batch[:100])
        for bad in (REFUSED["invalid_json"], REFUSED["time_us_text"], REFUSED["invalid_utf8"]):
            broken = list(batch)
            broken[position] = bad
            with pytest.raises(BatchRejected):
                loader.load_batch(broken)
            assert system.count() == 100
        loader.load_batch(batch)
        assert system.count() == 5100
    finally:
        loader.close()
        system.release()


def test_driver_isolates_refused_lines(tmp_path: Path, good_lines: list[bytes]) -> None:
    good = good_lines[:300]
    lines = list(good)
    bad_positions = {17: "invalid_json", 150: "lone_surrogate", 299: "invalid_utf8"}
    for position, name in bad_positions.items():
        lines.insert(position, REFUSED[name])
    data = tmp_path / "data.jsonl"
    data.write_bytes(b"\n".join(lines) + b"\n")
    system = open_adapter("clickhouse", "analytics", tmp_path / "work", "zstd")
    system.create()
    try:
        report = load_files(system.loader(), [data], 64)
        assert sorted(r.line for r in report.refused) == [p + 1 for p in sorted(bad_positions)]
        assert all(r.reason for r in report.refused)
        assert system.count() == len(good)
    finally:
        system.release()


def test_native_load_skips_bad_rows_like_jsonbench(tmp_path: Path, good_lines: list[bytes]) -> None:
    """JSONBench's second attempt (input_format_allow_errors_num) for a file that fails."""
    good = good_lines[:50]
    data = tmp_path / "data.jsonl"
    data.write_bytes(b"\n".join(good[:20] + [REFUSED["duplicate_key"]] + good[20:]) + b"\n")
    system = open_adapter("clickhouse", "analytics", tmp_path / "work", "lz4")
    system.create()
    try:
        system.native_load([data])
        assert system.count() == 50
    finally:
        system.release()


@pytest.mark.server  # a server or a 1m dataset: not the quick loop's
def test_every_post_load_step_is_timed_on_its_own(
    real_data_dir: Path, tmp_path: Path, own_home: Path
) -> None:
    """(From tests/test_reliability.py, which times every system's steps.) ClickHouse forces no
    merge (OPTIMIZE FINAL grew faster than the data): it lets the background merges settle and
    says so."""
    by_system = post_load_steps(
        ["clickhouse"], ["lz4"], small_copy(real_data_dir, tmp_path), tmp_path / "results"
    )
    assert [s["step"] for s in by_system["clickhouse"]] == [
        "let the background merges settle (no OPTIMIZE FINAL)",
        "wait for replaced parts to be removed",
    ]


# ----- the storage workload (from tests/test_storage_workload.py) -----------------------------


def check_storage_cells(results: Path) -> None:
    """test_storage_workload.py's embedded engines' run: zstd1 shrinks one repeated character
    to almost nothing, random printable characters hardly."""
    from test_storage_workload import _cells

    clickhouse = _cells(results, "clickhouse", "zstd1")
    assert clickhouse[(9000, "repetitive")]["bytes_per_input_byte"] < 0.05
    assert clickhouse[(9000, "random")]["bytes_per_input_byte"] > 0.7


# ----- the fidelity workload (from tests/test_fidelity.py: its run of every engine calls this) ---


def check_fidelity(documents: dict[str, dict], report: str) -> None:
    from test_fidelity import _outcomes, only

    # Text kept as it came: every document byte for byte; what the JSON reader refuses aside.
    only(
        documents,
        "clickhouse/string",
        "identical",
        {"lone_surrogate": "refused", "float_overflow": "refused"},
    )
    # ClickHouse's JSON type refuses duplicate paths and returns the typed paths it added.
    lz4 = _outcomes(documents["clickhouse/lz4"])
    assert lz4["duplicate_keys"] == lz4["dotted_key"] == "refused"
    assert lz4["key_order"] == "changed"


# ----- the representation labels (moved from tests/test_representations.py) ------------------


@pytest.mark.parametrize(
    ("variant_name", "beyond"),
    [
        (
            "jsonbench",
            {
                "codec": "CODEC(ZSTD(1))",
                "max_parts_to_merge_at_once": 5,
                "server_settings": "background_merges_mutations_concurrency_ratio=1&compatibility=25.11",
                "table_settings": ", string_serialization_version = 'single_stream'",
            },
        ),
        ("string", {"codec": "CODEC(ZSTD(1))", "max_parts_to_merge_at_once": 20}),
    ],
    ids=["clickhouse-jsonbench", "clickhouse-string"],
)
def test_labels_name_the_settings_beyond_the_engine_defaults(variant_name, beyond, tmp_path: Path):
    from test_representations import labels_beyond_defaults

    assert labels_beyond_defaults("clickhouse", variant_name, tmp_path) == beyond


# ----- the updates workload (from tests/test_updates_workload.py: its run reads this) ---------

UPDATES_OPS = 150  # point operations of its run (of 2,000 documents)
