"""PostgreSQL adapter against real servers that the tests start (no mocks).

One managed cluster (variant pglz) is shared by the module; the URL-mode test starts a second
one with the adapter's own Cluster class and points an engine with url=... (variant lz4) at it.
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
from docbench.systems.postgresql import server as pgserver
from docbench.systems.postgresql.analytics import PostgreSQLAnalytics, copy_buffer
from docbench.systems.postgresql.engine import PostgreSQLEngine
from docbench.workloads.analytics.load import load_files

pytestmark = pytest.mark.skipif(not PostgreSQLEngine.availability().ok,
                                reason="PostgreSQL server binaries not installed")

# Lines PostgreSQL refuses (-> BatchRejected) and lines it stores, by name.
REFUSED = {
    "invalid_json": b'{"did": "did:plc:x", "kind": ',
    "invalid_utf8": b'{"did": "did:plc:\xff\xfe", "kind": "commit"}',
    "nul_escape": b'{"did": "did:plc:x", "text": "a\\u0000b"}',
    "lone_surrogate": b'{"did": "did:plc:x", "text": "\\ud83d"}',
    "overflowing_number": b'{"did": "did:plc:x", "n": 1e1000000}',
    # COPY's end-of-data marker: sent quoted, it is data (invalid JSON), not the end of the batch
    "end_of_copy_marker": b"\\.",
}
ACCEPTED = {
    "int_beyond_64_bits": b'{"did": "did:plc:big", "kind": "commit", "n": 123456789012345678901234567890}',
    "deep_1000": b'{"did": "did:plc:deep", "a": ' + b"[" * 1000 + b"]" * 1000 + b"}",
    "time_us_fraction": b'{"did": "did:plc:frac", "kind": "commit", "time_us": 1.5}',
    "time_us_beyond_64_bits": b'{"did": "did:plc:huge", "time_us": 123456789012345678901234567890}',
    "raw_carriage_return": b'{"did": "did:plc:cr",\r"kind": "identity"}',
    "backslashes": b'{"did": "did:plc:bs", "text": "a\\\\b \\"q\\" \\n \\t \\u00e9 \\ud83d\\ude00"}',
}


def _workdir(name: str) -> Path:
    """A work directory the unprivileged server user can reach (pytest's tmp is 0700 root)."""
    base = Path(tempfile.mkdtemp(prefix=f"docbench-pgtest-{name}-"))
    os.chmod(base, 0o711)
    return base


@pytest.fixture(scope="module")
def real_files(real_data_dir: Path) -> list[Path]:
    return dataset_files(real_data_dir)


@pytest.fixture(scope="module")
def managed(real_files: list[Path]):
    """A managed cluster with every real event loaded and the index built."""
    base = _workdir("managed")
    system = PostgreSQLAnalytics(PostgreSQLEngine(base / "work"),
                                 PostgreSQLAnalytics.variant_named("pglz"))
    try:
        system.engine.start()
        system.create()
        report = load_files(system.loader(), real_files, PostgreSQLAnalytics.load_batch_size)
        assert report.refused_count == 0, report.refused
        system.finish_load()
        yield system
    finally:
        system.engine.stop()
        shutil.rmtree(base, ignore_errors=True)


def _non_empty_lines(files: list[Path]) -> list[bytes]:
    return [line for path in files for line in iter_lines(path) if line.strip()]


def test_registered_and_available():
    assert engine_class("postgresql") is PostgreSQLEngine
    assert adapter_class("postgresql", "analytics") is PostgreSQLAnalytics
    availability = PostgreSQLEngine.availability()
    assert availability.ok and "PostgreSQL" in availability.version
    assert PostgreSQLEngine.setup_script() is not None


def test_count_and_round_trip(managed: PostgreSQLAnalytics, real_files: list[Path]):
    lines = _non_empty_lines(real_files)
    assert managed.count() == len(lines)
    stored = [row[0] for row in managed.engine.admin_connection().execute(
        f"SELECT data::text FROM {managed.table}").fetchall()]
    assert sorted(json.dumps(json.loads(s), sort_keys=True) for s in stored) == sorted(
        json.dumps(json.loads(line), sort_keys=True) for line in lines)


def test_queries_match_the_oracle(managed: PostgreSQLAnalytics, real_files: list[Path]):
    expected = compute_answers(real_files)
    spec = {**managed.session_spec(), "timeout": 30}
    managed.release()
    session = PostgreSQLAnalytics.open_session(json.loads(json.dumps(spec)))  # picklable and plain
    try:
        assert session.stats_available  # pg_stat_statements is preloaded in managed clusters
        pids = session.engine_pids()
        assert pids and Path(f"/proc/{pids[0]}/cmdline").read_bytes().startswith(b"postgres")
        for number, text in enumerate(managed.queries(), start=1):
            outcome = session.execute(number, text)
            check = check_answer(number, outcome.rows, expected,
                                 time_precision_us=PostgreSQLAnalytics.time_precision_us)
            assert check.status == "ok", (number, check.detail, outcome.rows)
            assert outcome.engine_seconds is not None and 0 <= outcome.engine_seconds < 30
            plan = session.explain(number, text)
            assert json.loads(plan)[0]["Plan"]["Node Type"]
    finally:
        session.close()


def test_plan_check(managed: PostgreSQLAnalytics):
    spec = {**managed.session_spec(), "session_settings": {"enable_seqscan": "off"}}
    session = PostgreSQLAnalytics.open_session(spec)
    try:
        q2 = managed.queries()[1]
        plan = session.explain(2, q2)
        assert managed.index in plan
        assert managed.check_plan(2, plan) is None
        session.conn.execute("SET enable_seqscan = on; SET enable_indexscan = off; "
                             "SET enable_bitmapscan = off")
        warning = managed.check_plan(2, session.explain(2, q2))
        assert warning and managed.index in warning and "Seq Scan" in warning
        assert managed.check_plan(1, session.explain(1, managed.queries()[0])) is None
    finally:
        session.close()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_documents(managed: PostgreSQLAnalytics, name: str):
    loader = managed.loader()
    before = managed.count()
    try:
        with pytest.raises(BatchRejected) as refused:
            loader.load_batch([REFUSED[name]])
        assert "SQLSTATE" in str(refused.value)
        # All or nothing: a good document in the same batch is not kept either.
        good = b'{"did": "did:plc:good", "kind": "commit"}'
        with pytest.raises(BatchRejected):
            loader.load_batch([good, REFUSED[name], good])
    finally:
        loader.close()
    assert managed.count() == before


def test_accepted_hard_documents(managed: PostgreSQLAnalytics, tmp_path: Path):
    path = tmp_path / "hard.jsonl"
    lines = list(ACCEPTED.values()) + list(REFUSED.values())
    path.write_bytes(b"\n".join(lines) + b"\n")
    before = managed.count()
    report = load_files(managed.loader(), [path], 4)
    assert report.refused_count == len(REFUSED)
    assert sorted(r.line for r in report.refused) == list(
        range(len(ACCEPTED) + 1, len(lines) + 1))
    conn = managed.engine.admin_connection()
    try:
        assert managed.count() == before + len(ACCEPTED)
        text = conn.execute(f"SELECT data ->> 'text' FROM {managed.table} "
                            "WHERE data ->> 'did' = 'did:plc:bs'").fetchone()[0]
        assert text == 'a\\b "q" \n \t \u00e9 \U0001F600'
        # An odd time_us is "no time" (NULL), never an error (the index expression must not fail).
        times = dict(conn.execute(
            f"SELECT data ->> 'did', docbench_time_us(data) FROM {managed.table} "
            "WHERE data ->> 'did' IN ('did:plc:frac', 'did:plc:huge')").fetchall())
        assert times == {"did:plc:frac": None, "did:plc:huge": None}
    finally:
        conn.execute(f"DELETE FROM {managed.table} WHERE data ->> 'did' = ANY(%s)",
                     (["did:plc:big", "did:plc:deep", "did:plc:frac", "did:plc:huge",
                       "did:plc:cr", "did:plc:bs"],))
    assert managed.count() == before


def test_copy_buffer_quotes_every_line():
    assert copy_buffer([b"a", b"b\x01c"]) == b"\x01a\x01\n\x01b\x01\x01c\x01\n"


def test_storage(managed: PostgreSQLAnalytics):
    size = managed.storage()
    assert size.total and size.data and size.index
    assert size.total >= size.data + size.index
    assert size.on_disk and size.on_disk > size.total
    assert size.detail["heap_bytes"] > 0 and size.detail["compression"] == "pglz"


def test_native_load(managed: PostgreSQLAnalytics, real_files: list[Path], tmp_path: Path):
    plain = real_files[0]
    packed = tmp_path / (plain.name + ".gz")
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    refused = tmp_path / "refused.jsonl"  # by hand, one bad document loses its whole file
    refused.write_bytes(b'{"did": "did:plc:ok"}\n' + REFUSED["nul_escape"] + b"\n")
    lines = len(_non_empty_lines([plain]))
    before = managed.count()
    managed.native_load([plain, refused, packed])
    assert managed.count() == before + 2 * lines
    # back to the loaded state for the tests after this one
    managed.create()
    load_files(managed.loader(), real_files, PostgreSQLAnalytics.load_batch_size)
    managed.finish_load()


def test_server_is_private_and_sized(managed: PostgreSQLAnalytics):
    cluster = managed.engine.cluster
    assert cluster is not None and cluster.port
    conn = managed.engine.admin_connection()
    assert conn.execute("SHOW listen_addresses").fetchone()[0] == "127.0.0.1"
    assert conn.execute("SHOW data_directory").fetchone()[0] == str(cluster.data_dir)
    assert "pg_stat_statements" in conn.execute("SHOW shared_preload_libraries").fetchone()[0]
    expected = pgserver.tuned_settings()
    for name in ("shared_buffers", "work_mem", "maintenance_work_mem", "max_wal_size"):
        assert conn.execute("SELECT pg_size_bytes(current_setting(%s)) = pg_size_bytes(%s)",
                            (name, expected[name])).fetchone()[0], name
    # Every listening TCP socket on our port is bound to 127.0.0.1 only.
    listening = _listening_addresses(cluster.port)
    assert listening == {"127.0.0.1"}, listening
    # The unix socket is inside the work directory; the server runs as the unprivileged user.
    assert (cluster.run_dir / f".s.PGSQL.{cluster.port}").is_socket()
    if os.geteuid() == 0:
        assert os.stat(f"/proc/{cluster.pid}").st_uid == cluster.user.pw_uid


def test_statement_timeout_and_cancel(managed: PostgreSQLAnalytics):
    import psycopg

    session = PostgreSQLAnalytics.open_session({**managed.session_spec(), "timeout": 0.5})
    try:
        started = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled):
            session.execute(0, "SELECT pg_sleep(10)")
        assert time.monotonic() - started < 5
        session.conn.execute("SET statement_timeout = 0")
        timer = threading.Timer(0.5, session.cancel)
        timer.start()
        started = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled):
            session.execute(0, "SELECT pg_sleep(10)")
        assert time.monotonic() - started < 5
    finally:
        session.close()


def test_url_mode_uses_its_own_database(real_files: list[Path]):
    base = _workdir("url")
    cluster = pgserver.Cluster(base / "server")
    try:
        cluster.start()
        info = cluster.connection("postgres")
        password = info.password_file.read_text().strip()
        import psycopg

        with psycopg.connect(info.conninfo(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE userdata")
        with psycopg.connect(info.conninfo("userdata"), autocommit=True) as conn:
            conn.execute("CREATE TABLE bluesky_lz4 (keep text)")
            conn.execute("INSERT INTO bluesky_lz4 VALUES ('mine')")
        url = f"postgresql://{info.user}:{password}@127.0.0.1:{info.port}/userdata"
        system = PostgreSQLAnalytics(PostgreSQLEngine(base / "url-work", url=url),
                                     PostgreSQLAnalytics.variant_named("lz4"))
        assert system.engine.can_restart is False and system.engine.cluster is None
        assert PostgreSQLEngine.availability(url).ok
        system.engine.start()
        system.create()
        load_files(system.loader(), real_files, PostgreSQLAnalytics.load_batch_size)
        system.finish_load()
        assert system.count() == len(_non_empty_lines(real_files))
        size = system.storage()
        assert size.on_disk is None and size.total and size.detail["compression"] == "lz4"
        assert system.session_spec()["conninfo"]["dbname"] == "docbench"
        pid = cluster.pid
        system.engine.restart()  # a user's server is never restarted
        assert cluster.pid == pid and system.engine.is_alive()
        with psycopg.connect(info.conninfo(), autocommit=True) as conn:
            databases = {r[0] for r in conn.execute("SELECT datname FROM pg_database")}
        assert databases == {"postgres", "template0", "template1", "userdata", "docbench"}
        with psycopg.connect(info.conninfo("userdata"), autocommit=True) as conn:
            assert conn.execute("SELECT keep FROM bluesky_lz4").fetchall() == [("mine",)]
        with psycopg.connect(info.conninfo("docbench"), autocommit=True) as conn:
            # the documents over the TOAST threshold are compressed with the variant's codec
            methods = {r[0] for r in conn.execute(
                "SELECT DISTINCT pg_column_compression(data) FROM bluesky_lz4")}
            assert "lz4" in methods and "pglz" not in methods
        system.engine.stop()
        assert cluster.accepting()  # stop() of a URL system leaves the server running
    finally:
        children = cluster.children()
        postmaster = cluster.pid
        cluster.stop()
        shutil.rmtree(base, ignore_errors=True)
    assert children and postmaster
    for pid in [postmaster, *children]:
        assert not Path(f"/proc/{pid}").exists() or _zombie(pid), pid


@pytest.mark.skipif(os.geteuid() != 0, reason="the server user differs from ours only as root")
def test_work_dir_behind_a_directory_the_server_user_cannot_enter(
        tmp_path: Path, real_files: list[Path]):
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)  # like /root, or pytest's own temp root
    system = PostgreSQLAnalytics(PostgreSQLEngine(closed / "home" / "work"),
                                 PostgreSQLAnalytics.variant_named("pglz"))
    try:
        system.engine.start()
        cluster = system.engine.cluster
        assert not cluster.reachable and cluster.blocked_by
        assert os.stat(closed).st_mode & 0o777 == 0o700  # nothing outside the work dir changed
        # `ps` still shows which cluster this is
        cmdline = Path(f"/proc/{cluster.pid}/cmdline").read_bytes().replace(b"\0", b" ")
        assert str(cluster.data_dir).encode() in cmdline
        system.create()
        load_files(system.loader(), real_files, PostgreSQLAnalytics.load_batch_size)
        system.finish_load()
        assert system.count() == len(_non_empty_lines(real_files))
        assert (cluster.run_dir / f".s.PGSQL.{cluster.port}").is_socket()
        system.engine.restart()
        session = PostgreSQLAnalytics.open_session(system.session_spec())
        try:
            assert session.execute(1, system.queries()[0]).rows
        finally:
            session.close()
        postmaster, children = cluster.pid, cluster.children()
    finally:
        system.engine.stop()
    for pid in [postmaster, *children]:
        assert not Path(f"/proc/{pid}").exists() or _zombie(pid), pid


def test_crash_is_detected_and_restart_recovers(managed: PostgreSQLAnalytics):
    cluster = managed.engine.cluster
    assert cluster is not None and managed.engine.is_alive()
    count = managed.count()
    managed.release()
    idle = PostgreSQLAnalytics.open_session(managed.session_spec())  # its backend outlives the kill
    try:
        os.kill(cluster.pid, signal.SIGKILL)  # our own postmaster
        cluster.process.proc.wait(timeout=10)
        assert not managed.engine.is_alive()
        managed.engine.restart()
    finally:
        idle.close()
    assert managed.engine.is_alive()
    assert managed.count() == count  # committed documents survive


def test_stop_leaves_no_process(managed: PostgreSQLAnalytics):
    cluster = managed.engine.cluster
    postmaster, children = cluster.pid, cluster.children()
    assert children
    managed.engine.stop()
    managed.engine.stop()  # safe twice
    for pid in [postmaster, *children]:
        assert not Path(f"/proc/{pid}").exists() or _zombie(pid), pid
    assert not (cluster.data_dir / "postmaster.pid").exists()


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
