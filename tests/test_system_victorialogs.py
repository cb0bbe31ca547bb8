"""VictoriaLogs against a real server (no mocks): the shared cases (tests/analytics_suite.py)
and VictoriaLogs' own, on one managed server for the module (installed by `docbench setup
victorialogs`, idempotent): the refused lines are named from its log only on a server of
docbench's own, and the data directory is measured there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from analytics_suite import AnalyticsAdapterSuite, work_dir

from docbench.contracts.engine import main_pid
from docbench.systems.victorialogs.analytics import VictoriaLogsAnalytics
from docbench.systems.victorialogs.engine import VictoriaLogsEngine
from docbench.workloads.load import load_files

GOOD = b'{"did":"did:plc:good","time_us":1732206349000167,"kind":"commit"}'
# What VictoriaLogs refuses (skips, naming it in its log) and what it stores.
REFUSED = {
    "invalid_json": b'{"did": "did:plc:x", "kind": ',
    "deep_nesting_1000": b'{"did": "did:plc:deep", "a": ' + b"[" * 1000 + b"]" * 1000 + b"}",
    "time_us_not_a_number": b'{"did": "did:plc:t", "time_us": "abc"}',
    # stored by VictoriaLogs as bytes: docbench refuses it (not JSON), saying why
    "invalid_utf8": b'{"did": "did:plc:\xff\xfe", "kind": "commit"}',
}
ACCEPTED = {
    "nul_escape": b'{"did": "did:plc:nul", "time_us": 1732206349000168, "t": "a\\u0000b"}',
    "lone_surrogate": b'{"did": "did:plc:ls", "time_us": 1732206349000169, "t": "\\ud83d"}',
    "bigint": b'{"did": "did:plc:big", "time_us": 1732206349000170, "n": 123456789012345678901234567890}',
    "long_text": b'{"did": "did:plc:long", "time_us": 1732206349000171, "t": "' + b"x" * 50_000 + b'"}',
}


@pytest.fixture(scope="module")
def installed():
    from docbench.setup import setup_systems

    if not VictoriaLogsEngine.availability().ok:
        assert setup_systems(["victorialogs"]) == 0
    assert VictoriaLogsEngine.availability().ok


class TestVictoriaLogs(AnalyticsAdapterSuite):
    system_name = "victorialogs"
    engine_type = VictoriaLogsEngine
    adapter_type = VictoriaLogsAnalytics
    variant_roles = [("default", "default")]
    runs_by_default = False
    has_setup_script = True

    @pytest.fixture(scope="class")
    @classmethod
    def engine(cls, installed, variant):
        """A managed server of the class's own (one start; the restart case restarts it)."""
        base = work_dir("victorialogs")
        engine = VictoriaLogsEngine(base / "work")
        try:
            engine.start()
            yield engine
        finally:
            engine.stop()
            shutil.rmtree(base, ignore_errors=True)

    def check_version(self, version):
        assert version == "VictoriaLogs v1.52.1"

    def check_explain(self, system, number, plan):
        assert plan is None  # LogsQL has no EXPLAIN

    def check_storage(self, system, size):
        assert size.on_disk and size.index and size.total >= size.data
        assert size.detail["block_stats"]["values_bytes"] > 0
        # the metrics' figure and the data directory agree within an order of magnitude
        assert size.total <= size.on_disk * 2

    def test_refused_lines_are_isolated(self, loaded, tmp_path: Path):
        """Good lines and refused ones in one file through the generic driver: exactly the
        refused lines are named (with VictoriaLogs' reason), the others stored once."""
        lines = [GOOD, *REFUSED.values(), *ACCEPTED.values(), GOOD]
        path = tmp_path / "mixed.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        before = loaded.count()
        report = load_files(loaded.loader(), [path], 100)
        assert sorted(r.line for r in report.refused) == [2, 3, 4, 5], report.refused
        assert all(r.reason.startswith("VictoriaLogs: ") for r in report.refused[:3])
        assert "refused by docbench" in report.refused[3].reason
        assert "too big depth" in report.refused[1].reason
        assert loaded.count() == before + 2 + len(ACCEPTED)
        rows = loaded.engine.client().query('did:="did:plc:nul" or did:="did:plc:big" | fields did, t, n')
        assert {r["did"] for r in rows} == {"did:plc:nul", "did:plc:big"}

    def test_refused_lines_are_isolated_by_url(self, loaded, tmp_path: Path):
        """The same on the server reached by URL (no log to read): found by sending halves of
        the batch to docbench's scratch tenant, each good line stored once."""
        lines = [GOOD, *REFUSED.values(), *ACCEPTED.values(), GOOD]
        path = tmp_path / "mixed.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        by_url = VictoriaLogsAnalytics(
            VictoriaLogsEngine(tmp_path / "url", url=loaded.engine.served_url()), loaded.variant
        )
        before = by_url.count()
        report = load_files(by_url.loader(), [path], 100)
        assert sorted(r.line for r in report.refused) == [2, 3, 4, 5], report.refused
        assert by_url.count() == before + 2 + len(ACCEPTED) == loaded.count()
        by_url.release()

    def test_rows_dropped_past_its_field_limit_fail_the_load_with_its_word(self, loaded, tmp_path: Path):
        """VictoriaLogs acknowledges a block whose rows hold more than 2,000 distinct field
        names, then drops rows of it, saying so only in its log: the load fails, naming it."""
        lines = [b'{"did": "did:plc:f", "f%d": %d}' % (n, n) for n in range(3000)]
        path = tmp_path / "fields.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        with pytest.raises(RuntimeError, match="more than 2000 unique field names"):
            load_files(loaded.loader(), [path], 3000)

    def test_restart_keeps_the_data(self, loaded):
        count = loaded.count()
        pid = main_pid(loaded.engine)
        loaded.engine.restart()
        assert main_pid(loaded.engine) != pid and loaded.engine.is_alive()
        assert loaded.count() == count


# ----- the fidelity workload (from tests/test_fidelity.py: its run of every engine calls this) ---


def check_fidelity(documents: dict[str, dict], report: str) -> None:
    from test_fidelity import _outcomes

    # fields flattened, every value a string
    logs = _outcomes(documents["victorialogs/default"])
    assert logs["key_order"] == logs["float_0_1"] == "changed"
    assert documents["victorialogs/default"]["representation"]["retains_structure"] is False
