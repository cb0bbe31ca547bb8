"""MariaDB adapter against real servers (no mocks): the shared cases (tests/analytics_suite.py)
with MariaDB's lines, settings and SQL (it has no case of its own).

The server binaries are installed by ``docbench setup mariadb`` (idempotent) in a session
fixture. The loaded cases run on the session's MariaDB by URL (variant default); what only a
managed server shows (storage with its data directory, settings, a killed server, stop, URL mode
with the server as a user's server: variant compressed) runs on the class's own managed server.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pymysql
import pytest
from analytics_suite import (
    AnalyticsAdapterSuite,
    SQLServerCases,
    SQLTableCases,
    non_empty_lines,
)

from docbench.systems.mariadb import server as mserver
from docbench.systems.mariadb.analytics import MariaDBAnalytics
from docbench.systems.mariadb.engine import MariaDBEngine


@pytest.fixture(scope="session", autouse=True)
def installed():
    """`docbench setup mariadb` (does nothing when the binaries are there)."""
    from docbench.setup import setup_systems

    if not MariaDBEngine.availability().ok:
        setup_systems(["mariadb"])
    if not MariaDBEngine.availability().ok:
        pytest.skip(f"MariaDB not installable here: {MariaDBEngine.availability().reason}")


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


class TestMariaDB(SQLServerCases, SQLTableCases, AnalyticsAdapterSuite):
    system_name = "mariadb"
    engine_type = MariaDBEngine
    adapter_type = MariaDBAnalytics
    variant_roles = [("default", "default"), ("compressed", "best"), ("json", "representation")]
    runs_by_default = False
    has_setup_script = True
    refused = REFUSED
    accepted = ACCEPTED
    slow_query = "SELECT COUNT(*) FROM seq_1_to_100000000000 a WHERE a.seq % 7 = 3"
    cancel_error = pymysql.err.OperationalError
    statement_timeout = True
    server_attribute = "server"
    url_variant = "compressed"
    full_scan = "ALL"

    # ----- the shared cases' hooks --------------------------------------------------------
    def check_version(self, version):
        assert version.startswith("MariaDB 1")

    def check_registration(self):
        assert MariaDBEngine.url_example.startswith("mysql://")
        assert {v.role for v in MariaDBAnalytics.variants} == {"default", "best", "representation"}

    def check_stored(self, system, lines):
        stored = [row[0] for row in system.engine.execute(f"SELECT doc FROM {system.table}")]
        # The document is stored as the loaded text, byte for byte.
        assert sorted(s.encode() for s in stored) == sorted(lines)

    def check_explain(self, system, number, plan):
        assert json.loads(plan)["query_block"]
        assert system.check_plan(number, plan) is None, (number, plan)

    def check_storage(self, system, size):
        assert size.index
        assert size.total >= size.data + size.index
        assert size.on_disk and size.on_disk > size.total
        assert size.detail["ibd_on_disk"] > 0 and size.detail["row_format"] == "Dynamic"

    def check_refusal(self, alone, among):
        assert "Warning" in among

    def stored_text(self, system, did):
        return system.engine.execute(
            f"SELECT JSON_VALUE(doc, '$.text') FROM {system.table} WHERE did = %s", (did,)
        )[0][0]

    def check_hard_documents(self, system):
        # An odd time_us is "no time" (NULL), never an error (the index must not fail).
        times = dict(
            system.engine.execute(
                f"SELECT did, time_us FROM {system.table} WHERE did IN ('did:plc:frac', 'did:plc:huge')"
            )
        )
        assert times == {"did:plc:frac": None, "did:plc:huge": None}

    def native_load_files(self, real_files, tmp_path):
        plain = real_files[0]
        packed = tmp_path / (plain.name + ".gz")
        packed.write_bytes(gzip.compress(plain.read_bytes()))
        refused = tmp_path / "refused.jsonl"  # by hand, LOAD DATA LOCAL skips the refused row
        refused.write_bytes(b'{"did": "did:plc:ok"}\n' + self.refused["invalid_json"] + b"\n")
        return [[plain, refused, packed]], 2 * len(non_empty_lines([plain])) + 1

    def no_statement_timeout(self, session):
        with session.conn.cursor() as cur:
            cur.execute("SET SESSION max_statement_time = 0")

    def check_plan_text(self, plan):
        assert json.loads(plan)  # EXPLAIN FORMAT=JSON

    def explain_without_index(self, system, session, query):
        ignoring = query.replace(f"FROM {system.table}", f"FROM {system.table} IGNORE INDEX ({system.index})")
        return session.explain(2, ignoring)

    def check_server_settings(self, system, srv):
        values = dict(
            system.engine.execute(
                "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('bind_address', 'datadir', "
                "'innodb_buffer_pool_size', 'innodb_buffer_pool_load_at_startup', 'local_infile', "
                "'collation_server')"
            )
        )
        assert values["bind_address"] == "127.0.0.1"
        assert Path(values["datadir"]) == srv.data_dir
        assert int(values["innodb_buffer_pool_size"]) == int(
            mserver.tuned_options()["innodb-buffer-pool-size"]
        )
        assert values["innodb_buffer_pool_load_at_startup"] == "OFF"
        assert values["collation_server"] == "utf8mb4_bin"
        # Only docbench's own account and root over the socket: no password-less TCP account.
        users = set(system.engine.execute("SELECT user, host FROM mysql.user"))
        assert ("docbench", "127.0.0.1") in users and ("root", "127.0.0.1") not in users
        # A query session on docbench's own server measures mariadbd.
        session = MariaDBAnalytics.open_session(system.session_spec())
        try:
            pids = session.engine_pids()
        finally:
            session.close()
        assert pids == [srv.pid]
        assert b"mariadbd" in Path(f"/proc/{pids[0]}/cmdline").read_bytes()

    def server_socket(self, srv):
        return srv.socket_path

    def server_pid_file(self, srv):
        return srv.run_dir / "mariadbd.pid"

    def user_database(self, system):
        system.engine.execute("CREATE DATABASE userdata")
        system.engine.execute("CREATE TABLE userdata.bluesky_compressed (keep text)")
        system.engine.execute("INSERT INTO userdata.bluesky_compressed VALUES ('mine')")
        params = system.engine.params()
        assert params["user"] == mserver.ADMIN_USER
        return f"mysql://{params['user']}:{params['password']}@127.0.0.1:{params['port']}/userdata"

    def check_url_system(self, system, size, srv):
        assert "PAGE_COMPRESSED" in size.detail["create_options"]
        assert system.session_spec()["params"]["port"] == srv.port

    def check_user_database(self, system):
        databases = {r[0] for r in system.engine.execute("SHOW DATABASES")}
        assert system.engine.execute("SELECT keep FROM userdata.bluesky_compressed") == [("mine",)]
        assert databases == {
            "information_schema",
            "mysql",
            "performance_schema",
            "sys",
            "userdata",
            "docbench",
        }


# ----- the shapes workload (moved from tests/test_shapes_workload.py) -------------------------


def test_a_load_past_the_limit_is_stopped_and_breaks_the_sweep(tmp_path: Path, server_url) -> None:
    """--load-limit: MariaDB loads in batches of 20,000; past the limit the load stops after
    its first batch and the point is recorded as failed, which the report calls a break."""
    from test_shapes_workload import SHAPE

    from docbench import results
    from docbench.systems import engine_class
    from docbench.workloads.shapes.report import sweeps
    from docbench.workloads.shapes.runner import ShapesRequest, run_shapes

    if not engine_class("mariadb").availability().ok:
        pytest.skip("no MariaDB here")
    request = ShapesRequest(
        knob="paths",
        values=[50],
        base=SHAPE,
        docs=25_000,
        system_names=["mariadb"],
        results_dir=tmp_path,
        tries=1,
        urls={"mariadb": server_url("mariadb")},
        restart_for_cold=False,
        load_limit_s=1e-6,
        quiet=True,
    )
    assert run_shapes(request) == 1
    (document,) = results.load_results([tmp_path])
    assert "load stopped after" in document["error"] and "20,000 of 25,000" in document["error"]
    assert not document["complete"]
    (points,) = next(iter(sweeps([document]).values())).values()
    assert points[0].reasons and points[0].reasons[0].startswith("fails: LoadStopped")


# ----- the fidelity workload (from tests/test_fidelity.py: its run of every engine calls this) ---


def check_fidelity(documents: dict[str, dict], report: str) -> None:
    from test_fidelity import _outcomes

    # JSON is text checked by JSON_VALID: byte for byte, or refused
    assert set(_outcomes(documents["mariadb/default"]).values()) == {"identical", "refused"}
