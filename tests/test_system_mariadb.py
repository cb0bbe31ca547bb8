"""MariaDB adapter against real servers that the tests start (no mocks).

The server binaries are installed by ``docbench setup mariadb`` (idempotent) in a session
fixture. One managed server (variant default) is shared by the module; the URL-mode test
starts a second one with the adapter's own MariaDBServer class and points an engine with
url=... (variant compressed) at it.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

import pytest

from docbench.answers import check_answer
from docbench.contracts.common import BatchRejected
from docbench.dataset.oracle import compute_answers
from docbench.dataset.reader import dataset_files, iter_lines
from docbench.systems import adapter_class, engine_class
from docbench.systems.mariadb import server as mserver
from docbench.systems.mariadb.analytics import MariaDBAnalytics
from docbench.systems.mariadb.engine import MariaDBEngine, connect
from docbench.workloads.analytics.load import load_files

# Lines MariaDB refuses (-> BatchRejected) and lines it stores, by name.
REFUSED = {
    "invalid_json": b'{"did": "did:plc:x", "kind": ',
    "invalid_utf8": b'{"did": "did:plc:\xff\xfe", "kind": "commit"}',
    "lone_surrogate": b'{"did": "did:plc:x", "text": "\\ud83d"}',
    # JSON_VALID's depth limit: 32 levels of nesting and more are refused
    "deep_1000": b'{"did": "did:plc:x", "a": ' + b"[" * 1000 + b"]" * 1000 + b"}",
    "deep_32": b'{"did": "did:plc:x", "a": ' + b"[" * 31 + b"]" * 31 + b"}",
    # the LOAD DATA field terminator: a raw control character, invalid JSON
    "raw_control_01": b'{"did": "did:plc:\x01x"}',
    "raw_nul": b'{"did": "did:plc:\x00x"}',
    "null_word": b"NULL",
}
ACCEPTED = {
    "nul_escape": b'{"did": "did:plc:nul", "text": "a\\u0000b"}',
    "int_beyond_64_bits": b'{"did": "did:plc:big", "kind": "commit", "n": 123456789012345678901234567890}',
    "overflowing_number": b'{"did": "did:plc:over", "n": 1e1000000}',
    "deep_31": b'{"did": "did:plc:deep", "a": ' + b"[" * 30 + b"]" * 30 + b"}",
    "time_us_fraction": b'{"did": "did:plc:frac", "kind": "commit", "time_us": 1.5}',
    "time_us_beyond_64_bits": b'{"did": "did:plc:huge", "time_us": 123456789012345678901234567890}',
    "raw_carriage_return": b'{"did": "did:plc:cr",\r"kind": "identity"}',
    "backslashes": b'{"did": "did:plc:bs", "text": "a\\\\b \\"q\\" \\n \\t \\u00e9 \\ud83d\\ude00"}',
}
HARD_DIDS = ["did:plc:nul", "did:plc:big", "did:plc:over", "did:plc:deep", "did:plc:frac",
             "did:plc:huge", "did:plc:cr", "did:plc:bs"]


@pytest.fixture(scope="session", autouse=True)
def installed():
    """`docbench setup mariadb` (does nothing when the binaries are there)."""
    from docbench.setup import setup_systems

    if not MariaDBEngine.availability().ok:
        setup_systems(["mariadb"])
    if not MariaDBEngine.availability().ok:
        pytest.skip(f"MariaDB not installable here: {MariaDBEngine.availability().reason}")


def _workdir(name: str) -> Path:
    """A work directory the unprivileged server user can reach (pytest's tmp is 0700 root)."""
    base = Path(tempfile.mkdtemp(prefix=f"docbench-mtest-{name}-"))
    os.chmod(base, 0o711)
    return base


@pytest.fixture(scope="module")
def real_files(real_data_dir: Path) -> list[Path]:
    return dataset_files(real_data_dir)


@pytest.fixture(scope="module")
def managed(real_files: list[Path]):
    """A managed server with every real event loaded and the index built."""
    base = _workdir("managed")
    system = MariaDBAnalytics(MariaDBEngine(base / "work"), MariaDBAnalytics.variant_named("default"))
    try:
        system.engine.start()
        system.create()
        report = load_files(system.loader(), real_files, MariaDBAnalytics.load_batch_size)
        assert report.refused_count == 0, report.refused
        system.finish_load()
        yield system
    finally:
        system.engine.stop()
        shutil.rmtree(base, ignore_errors=True)


def _non_empty_lines(files: list[Path]) -> list[bytes]:
    return [line for path in files for line in iter_lines(path) if line.strip()]


def test_registered_and_available():
    assert engine_class("mariadb") is MariaDBEngine
    assert adapter_class("mariadb", "analytics") is MariaDBAnalytics
    availability = MariaDBEngine.availability()
    assert availability.ok and availability.version.startswith("MariaDB 1")
    assert MariaDBEngine.setup_script() is not None
    assert MariaDBEngine.runs_by_default is False and MariaDBEngine.url_example.startswith("mysql://")
    assert {v.role for v in MariaDBAnalytics.variants} == {"default", "best"}


def test_count_and_round_trip(managed: MariaDBAnalytics, real_files: list[Path]):
    lines = _non_empty_lines(real_files)
    assert managed.count() == len(lines)
    stored = [row[0] for row in managed.engine.execute(f"SELECT doc FROM {managed.table}")]
    # The document is stored as the loaded text, byte for byte.
    assert sorted(s.encode() for s in stored) == sorted(lines)


def test_queries_match_the_oracle(managed: MariaDBAnalytics, real_files: list[Path]):
    expected = compute_answers(real_files)
    spec = {**managed.session_spec(), "timeout": 30}
    managed.release()
    session = MariaDBAnalytics.open_session(json.loads(json.dumps(spec)))  # picklable and plain
    try:
        pids = session.engine_pids()
        assert pids == [managed.engine.server.pid]
        assert b"mariadbd" in Path(f"/proc/{pids[0]}/cmdline").read_bytes()
        for number, text in enumerate(managed.queries(), start=1):
            outcome = session.execute(number, text)
            check = check_answer(number, outcome.rows, expected,
                                 time_precision_us=MariaDBAnalytics.time_precision_us)
            assert check.status == "ok", (number, check.detail, outcome.rows)
            assert outcome.engine_seconds is not None and 0 <= outcome.engine_seconds < 30
            plan = session.explain(number, text)
            assert json.loads(plan)["query_block"]
            assert managed.check_plan(number, plan) is None, (number, plan)
    finally:
        session.close()


def test_plan_check(managed: MariaDBAnalytics):
    session = MariaDBAnalytics.open_session(managed.session_spec())
    try:
        q2 = managed.queries()[1]
        plan = session.explain(2, q2)
        assert managed.index in plan
        assert json.loads(plan)  # EXPLAIN FORMAT=JSON
        assert managed.check_plan(2, plan) is None
        ignoring = q2.replace(f"FROM {managed.table}",
                              f"FROM {managed.table} IGNORE INDEX ({managed.index})")
        warning = managed.check_plan(2, session.explain(2, ignoring))
        assert warning and managed.index in warning and "ALL" in warning
        assert managed.check_plan(1, session.explain(1, managed.queries()[0])) is None
    finally:
        session.close()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_documents(managed: MariaDBAnalytics, name: str):
    loader = managed.loader()
    before = managed.count()
    try:
        with pytest.raises(BatchRejected):
            loader.load_batch([REFUSED[name]])
        # All or nothing: a good document in the same batch is not kept either.
        good = b'{"did": "did:plc:good", "kind": "commit"}'
        with pytest.raises(BatchRejected) as refused:
            loader.load_batch([good, REFUSED[name], good])
        assert "Warning" in str(refused.value)
    finally:
        loader.close()
    assert managed.count() == before


def test_accepted_hard_documents(managed: MariaDBAnalytics, tmp_path: Path):
    path = tmp_path / "hard.jsonl"
    lines = list(ACCEPTED.values()) + list(REFUSED.values())
    path.write_bytes(b"\n".join(lines) + b"\n")
    before = managed.count()
    report = load_files(managed.loader(), [path], 4)
    assert report.refused_count == len(REFUSED)
    assert sorted(r.line for r in report.refused) == list(
        range(len(ACCEPTED) + 1, len(lines) + 1))
    try:
        assert managed.count() == before + len(ACCEPTED)
        text = managed.engine.execute(f"SELECT JSON_VALUE(doc, '$.text') FROM {managed.table} "
                                "WHERE did = 'did:plc:bs'")[0][0]
        assert text == 'a\\b "q" \n \t \u00e9 \U0001F600'
        # An odd time_us is "no time" (NULL), never an error (the index must not fail).
        times = dict(managed.engine.execute(
            f"SELECT did, time_us FROM {managed.table} "
            "WHERE did IN ('did:plc:frac', 'did:plc:huge')"))
        assert times == {"did:plc:frac": None, "did:plc:huge": None}
    finally:
        managed.engine.execute(f"DELETE FROM {managed.table} WHERE did IN %s", (HARD_DIDS,))
    assert managed.count() == before


def test_storage(managed: MariaDBAnalytics):
    size = managed.storage()
    assert size.total and size.data and size.index
    assert size.total >= size.data + size.index
    assert size.on_disk and size.on_disk > size.total
    assert size.detail["ibd_on_disk"] > 0 and size.detail["row_format"] == "Dynamic"


def test_native_load(managed: MariaDBAnalytics, real_files: list[Path], tmp_path: Path):
    plain = real_files[0]
    packed = tmp_path / (plain.name + ".gz")
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    refused = tmp_path / "refused.jsonl"  # by hand, LOAD DATA LOCAL skips the refused row
    refused.write_bytes(b'{"did": "did:plc:ok"}\n' + REFUSED["invalid_json"] + b"\n")
    lines = len(_non_empty_lines([plain]))
    before = managed.count()
    managed.native_load([plain, refused, packed])
    assert managed.count() == before + 2 * lines + 1
    # back to the loaded state for the tests after this one
    managed.create()
    load_files(managed.loader(), real_files, MariaDBAnalytics.load_batch_size)
    managed.finish_load()


def test_server_is_private_and_sized(managed: MariaDBAnalytics):
    srv = managed.engine.server
    assert srv is not None and srv.port
    values = dict(managed.engine.execute(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('bind_address', 'datadir', "
        "'innodb_buffer_pool_size', 'innodb_buffer_pool_load_at_startup', 'local_infile', "
        "'collation_server')"))
    assert values["bind_address"] == "127.0.0.1"
    assert Path(values["datadir"]) == srv.data_dir
    assert int(values["innodb_buffer_pool_size"]) == int(
        mserver.tuned_options()["innodb-buffer-pool-size"])
    assert values["innodb_buffer_pool_load_at_startup"] == "OFF"
    assert values["collation_server"] == "utf8mb4_bin"
    listening = _listening_addresses(srv.port)
    assert listening == {"127.0.0.1"}, listening
    assert srv.socket_path.is_socket()
    if os.geteuid() == 0:
        assert os.stat(f"/proc/{srv.pid}").st_uid == srv.user.pw_uid
    # Only docbench's own account and root over the socket: no password-less TCP account.
    users = set(managed.engine.execute("SELECT user, host FROM mysql.user"))
    assert ("docbench", "127.0.0.1") in users and ("root", "127.0.0.1") not in users


def test_statement_timeout_and_cancel(managed: MariaDBAnalytics):
    import pymysql

    slow = "SELECT COUNT(*) FROM seq_1_to_100000000000 a WHERE a.seq % 7 = 3"
    session = MariaDBAnalytics.open_session({**managed.session_spec(), "timeout": 0.5})
    try:
        started = time.monotonic()
        with pytest.raises(pymysql.err.OperationalError):
            session.execute(0, slow)
        assert time.monotonic() - started < 5
        with session.conn.cursor() as cur:
            cur.execute("SET SESSION max_statement_time = 0")
        timer = threading.Timer(0.5, session.cancel)
        timer.start()
        started = time.monotonic()
        with pytest.raises(pymysql.err.OperationalError):
            session.execute(0, slow)
        assert time.monotonic() - started < 5
    finally:
        session.close()


def test_url_mode_uses_its_own_database(real_files: list[Path]):
    base = _workdir("url")
    srv = mserver.MariaDBServer(base / "server")
    try:
        srv.start()
        admin = {"host": "127.0.0.1", "port": srv.port, "user": mserver.ADMIN_USER,
                 "password": srv.password()}
        conn = connect(admin, database=None)
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE userdata")
            cur.execute("CREATE TABLE userdata.bluesky_compressed (keep text)")
            cur.execute("INSERT INTO userdata.bluesky_compressed VALUES ('mine')")
        url = f"mysql://{admin['user']}:{admin['password']}@127.0.0.1:{srv.port}/userdata"
        system = MariaDBAnalytics(MariaDBEngine(base / "url-work", url=url),
                                  MariaDBAnalytics.variant_named("compressed"))
        assert system.engine.can_restart is False and system.engine.server is None
        assert MariaDBEngine.availability(url).ok
        system.engine.start()
        system.create()
        load_files(system.loader(), real_files, MariaDBAnalytics.load_batch_size)
        system.finish_load()
        assert system.count() == len(_non_empty_lines(real_files))
        size = system.storage()
        assert size.on_disk is None and size.total and "PAGE_COMPRESSED" in size.detail[
            "create_options"]
        assert system.session_spec()["params"]["port"] == srv.port
        pid = srv.pid
        system.engine.restart()  # a user's server is never restarted
        assert srv.pid == pid and system.engine.is_alive()
        with conn.cursor() as cur:
            cur.execute("SHOW DATABASES")
            databases = {r[0] for r in cur.fetchall()}
            cur.execute("SELECT keep FROM userdata.bluesky_compressed")
            assert cur.fetchall() == (("mine",),)
        assert databases == {"information_schema", "mysql", "performance_schema", "sys",
                             "userdata", "docbench"}
        conn.close()
        system.engine.stop()
        assert srv.accepting()  # stop() of a URL system leaves the server running
    finally:
        pid = srv.pid
        srv.stop()
        shutil.rmtree(base, ignore_errors=True)
    assert pid and (not Path(f"/proc/{pid}").exists() or _zombie(pid))


def test_crash_is_detected_and_restart_recovers(managed: MariaDBAnalytics):
    srv = managed.engine.server
    assert srv is not None and managed.engine.is_alive()
    count = managed.count()
    managed.release()
    port = srv.port
    os.kill(srv.pid, signal.SIGKILL)  # our own server
    srv.process.proc.wait(timeout=10)
    assert not managed.engine.is_alive()
    managed.engine.restart()
    assert managed.engine.is_alive() and srv.port == port
    assert managed.count() == count  # committed documents survive (InnoDB crash recovery)


def test_stop_leaves_no_process(managed: MariaDBAnalytics):
    srv = managed.engine.server
    pid = srv.pid
    assert pid
    managed.engine.stop()
    managed.engine.stop()  # safe twice
    assert not Path(f"/proc/{pid}").exists() or _zombie(pid)
    assert not (srv.run_dir / "mariadbd.pid").exists()


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of LISTEN sockets on `port` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if int(port_hex, 16) != port or fields[3] != "0A":  # 0A = LISTEN
                continue
            if len(address) == 8:
                found.add(".".join(str(b) for b in reversed(bytes.fromhex(address))))
            else:
                found.add("ipv6:" + address)
    return found
