"""FerretDB v1 (managed server, SQLite backend) running the mongodb system's pipelines.

Real server processes: the session fixture builds FerretDB once (``docbench setup ferretdb``,
idempotent) and each module starts and stops its own servers. FerretDB v1's known defects
must be DETECTED by the answer checker: the queries it cannot compute end as ``error`` with
FerretDB's own message, the others must be ``ok``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docbench.answers import AnswerCheck, check_answer
from docbench.contracts.common import BatchRejected
from docbench.dataset.oracle import compute_answers
from docbench.dataset.reader import iter_lines
from docbench.systems import engine_class, server
from docbench.systems.ferretdb.analytics import FerretDBAnalytics
from docbench.systems.ferretdb.engine import FerretDBEngine, FerretDBServer
from docbench.systems.mongodb.analytics import escape_dollar_keys

pytest.importorskip("pymongo")

# What FerretDB v1.24.0 does with the five pipelines (found by running them): Q1 is right; the
# others use operators FerretDB v1 has not implemented and fail with its NotImplemented error.
EXPECTED_STATUS = {1: "ok", 2: "error", 3: "error", 4: "error", 5: "error"}
EXPECTED_DETAIL = {
    2: "$cond is not implemented",
    3: "$hour is not implemented",
    4: '"$min" is not implemented',
    5: '"$min" is not implemented',
}

GOOD = (b'{"did":"did:plc:a","time_us":1732206349000167,"kind":"commit","commit":{"operation":'
        b'"create","collection":"app.bsky.feed.post","record":{"$type":"app.bsky.feed.post",'
        b'"text":"$5 off"}}}')
# name -> (line, refused?)
BAD_LINES = {
    "invalid_json": (b'{"did": "x", ', True),
    "invalid_utf8": (b'{"did": "\xff\xfe"}', True),
    "nul_escape_in_value": (b'{"did": "a\\u0000b"}', False),
    "nul_escape_in_key": (b'{"a\\u0000b": 1}', True),
    "integer_beyond_64_bits": (b'{"n": 123456789012345678901234567890}', True),
    "integer_2_pow_64": (b'{"n": 18446744073709551616}', True),
    "integer_2_pow_63": (b'{"n": 9223372036854775808}', True),
    "nesting_1000_deep": (b'{"a":' + b"[" * 1000 + b"]" * 1000 + b"}", True),
    "dotted_key": (b'{"a.b": 1}', True),  # FerretDB v1 refuses '.' in keys
    "nested_array": (b'{"a": [[1, 2], [3]]}', True),  # and arrays in arrays
}


def real_files(data_dir: Path) -> list[Path]:
    """The real events: *.jsonl only (other files may sit beside them)."""
    files = sorted(data_dir.glob("*.jsonl"))
    assert files
    return files


@pytest.fixture(scope="session")
def ferretdb_installed() -> None:
    from docbench.setup import setup_systems

    assert setup_systems(["ferretdb"]) == 0
    availability = FerretDBEngine.availability()
    assert availability.ok, availability.reason
    assert availability.version == "FerretDB v1.24.0"


@pytest.fixture(scope="module")
def real_lines(real_data_dir: Path) -> list[bytes]:
    return [line for path in real_files(real_data_dir) for line in iter_lines(path)
            if line.strip()]


@pytest.fixture(scope="module")
def oracle(real_data_dir: Path) -> dict:
    return compute_answers(real_files(real_data_dir))


@pytest.fixture(scope="module")
def loaded(ferretdb_installed, tmp_path_factory, real_lines):
    system = FerretDBAnalytics(FerretDBEngine(tmp_path_factory.mktemp("ferretdb")),
                               FerretDBAnalytics.variant_named("escaped-keys"))
    system.engine.start()
    try:
        system.create()
        loader = system.loader()
        size = system.load_batch_size
        for start in range(0, len(real_lines), size):
            loader.load_batch(real_lines[start:start + size])
        loader.close()
        system.finish_load()
        yield system
    finally:
        system.engine.stop()
    assert not system.engine.server.running()


def run_query(system, number: int, text: str, expected: dict) -> AnswerCheck:
    session = type(system).open_session(system.session_spec())
    try:
        outcome = session.execute(number, text)
        return check_answer(number, outcome.rows, expected,
                            time_precision_us=type(system).time_precision_us)
    except Exception as error:  # noqa: BLE001 - a failed query is an `error` answer
        return AnswerCheck.error(f"{type(error).__name__}: {error}")
    finally:
        session.close()


def test_registered_and_not_default():
    cls = engine_class("ferretdb")
    assert cls is FerretDBEngine
    assert cls.embedded is False and cls.runs_by_default is False
    assert [v.name for v in FerretDBAnalytics.variants] == ["default", "escaped-keys"]


def test_default_variant_stores_documents_as_offered(ferretdb_installed, tmp_path, real_lines):
    """FerretDB v1 refuses '$' keys; the default variant must not hide that by rewriting."""
    system = FerretDBAnalytics(FerretDBEngine(tmp_path), FerretDBAnalytics.variant_named("default"))
    system.engine.start()
    try:
        system.create()
        loader = system.loader()
        with_dollar = next(line for line in real_lines if b'"$type"' in line)
        without = b'{"did": "did:plc:x", "time_us": 1, "kind": "identity"}'
        with pytest.raises(BatchRejected):
            loader.load_batch([with_dollar])
        loader.load_batch([without])
        loader.close()
        assert system.count() == 1
    finally:
        system.engine.stop()


def test_count_equals_lines(loaded, real_lines):
    assert loaded.count() == len(real_lines)


def test_known_defects_are_detected(loaded, oracle):
    statuses = {}
    for number, text in enumerate(loaded.queries(), 1):
        check = run_query(loaded, number, text, oracle)
        statuses[number] = check.status
        if number in EXPECTED_DETAIL:
            assert EXPECTED_DETAIL[number] in check.detail, check.detail
        else:
            assert check.status == "ok", check.detail
    assert statuses == EXPECTED_STATUS


def test_first_accumulator_defect_still_there(loaded):
    """FerretDB v1 computes only the first accumulator of a $group (the others are 0): the
    reason a fixed FerretDB would have to be re-checked, kept visible here."""
    pipeline = [{"$match": {"kind": "commit"}},
                {"$group": {"_id": None, "n": {"$sum": 1}, "again": {"$sum": 1}}}]
    rows = list(loaded.collection().aggregate(pipeline))
    assert rows[0]["n"] > 0 and rows[0]["again"] == 0


def test_plans(loaded):
    session = FerretDBAnalytics.open_session(loaded.session_spec())
    try:
        for number, text in enumerate(loaded.queries(), 1):
            plan = session.explain(number, text)
            warning = loaded.check_plan(number, plan)
            if number == 1:
                assert warning is None
            else:  # FerretDB v1 does not push dotted-path filters down: a full SQLite scan
                assert warning and "does not use the index" in warning
    finally:
        session.close()


def test_storage(loaded):
    size = loaded.storage()
    assert size.total and size.total > 0
    assert size.data and size.data > 0
    assert size.index and size.index > 0
    assert size.on_disk and size.on_disk > 0
    assert size.detail["documents"] == loaded.count()
    assert size.detail["dollar_keys_escaped"] is True


def test_dollar_keys_stored_escaped(loaded):
    doc = loaded.collection().find_one({"commit.collection": "app.bsky.feed.post",
                                         "commit.operation": "create"})
    assert "\uff04type" in doc["commit"]["record"]
    assert "$type" not in doc["commit"]["record"]


def test_escape_only_touches_keys():
    line = b'{"$a": "$b", "c": {"$d" :1, "e": "\\"$f\\": 1"}, "g": ["$h"]}'
    out = escape_dollar_keys(line)
    assert out == ('{"\uff04a": "$b", "c": {"\uff04d" :1, "e": "\\"$f\\": 1"}, "g": ["$h"]}'
                   .encode())


def test_bad_lines(ferretdb_installed, tmp_path):
    system = FerretDBAnalytics(FerretDBEngine(tmp_path), FerretDBAnalytics.variant_named("escaped-keys"))
    system.engine.start()
    try:
        system.create()
        loader = system.loader()
        refused = set()
        for name, (line, _) in BAD_LINES.items():
            before = system.count()
            try:
                loader.load_batch([GOOD, line, GOOD])
            except BatchRejected as error:
                assert str(error)
                refused.add(name)
                assert system.count() == before, f"{name}: part of a refused batch was kept"
            else:
                assert system.count() == before + 3
        loader.close()
        assert refused == {name for name, (_, bad) in BAD_LINES.items() if bad}
    finally:
        system.engine.stop()


def test_restart_same_port_and_pid_measured(ferretdb_installed, tmp_path):
    system = FerretDBAnalytics(FerretDBEngine(tmp_path), FerretDBAnalytics.variant_named("escaped-keys"))
    system.engine.start()
    try:
        assert system.engine.can_restart
        system.create()
        loader = system.loader()
        loader.load_batch([GOOD, GOOD])
        loader.close()
        port, pid = system.engine.server.port, system.engine.server.pid
        system.engine.restart()
        assert system.engine.server.port == port and system.engine.server.pid != pid
        assert system.engine.is_alive() and system.count() == 2
        session = FerretDBAnalytics.open_session(system.session_spec())
        try:
            assert session.engine_pids() == [system.engine.server.pid]
        finally:
            session.close()
    finally:
        system.engine.stop()
    assert not system.engine.is_alive()
    assert system.engine.server.process is None


def test_no_server_left(ferretdb_installed, tmp_path):
    server_ = FerretDBServer(tmp_path)
    server_.start()
    pid = server_.pid
    assert pid in server.running_pids()
    server_.stop()
    server_.stop()  # twice is fine
    assert pid not in server.running_pids()
    assert not Path(f"/proc/{pid}").exists()
