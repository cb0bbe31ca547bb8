"""--io-limit: parsing and profiles, the refusals, a real throttle on a real process, the cgroup's
cleanup, the result's record and compare's warning (core/iolimit.py, core/cgroups.py)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from docbench.cli import main
from docbench.core import iolimit
from docbench.core.cgroups import RunCgroup
from docbench.report.compare import compare, load_set
from docbench.workloads.throughput import ioprobe
from docbench.workloads.throughput.runner import Run, ThroughputRequest, _run_cgroups, io_limit_refusals

ROOT = Path(__file__).resolve().parents[1]
MIB = 1 << 20


def throttle_unavailable() -> str | None:
    return iolimit.refusal(Path(__file__).parent)


# ----- parsing and profiles --------------------------------------------------------------------


def test_limits_parse_as_counts_and_sizes() -> None:
    limit = iolimit.parse("read_iops=200, write_iops=1k,read_bps=125MiB,write_bps=1g")
    assert limit.limits() == {
        "read_iops": 200,
        "write_iops": 1000,
        "read_bps": 125 * MIB,
        "write_bps": 1 << 30,
    }
    only_reads = iolimit.parse("read_iops=3000")
    assert only_reads.limits() == {"read_iops": 3000}  # the others unlimited
    assert only_reads.label() == "read_iops 3,000"


def test_profiles_are_the_ebs_figures() -> None:
    gp3 = iolimit.parse("gp3-3k")
    assert gp3.limits() == {
        "read_iops": 3000,
        "write_iops": 3000,
        "read_bps": 125 * MIB,
        "write_bps": 125 * MIB,
    }
    io1 = iolimit.parse("io1-16k")
    assert (io1.read_iops, io1.write_bps) == (16000, 1000 * MIB)
    assert io1.label().startswith("io1-16k (read_iops 16,000")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("gp9", "not a profile"),
        ("read_iops=0", "must be above 0"),
        ("read_iops=-5", "read_iops: not a count"),
        ("read_iops=1.5", "not a whole count"),
        ("reads=100", "key one of read_iops"),
        ("read_iops=100,read_iops=200", "given twice"),
        ("read_iops=100,", "key one of"),
        ("read_bps=fast", "not a size"),
    ],
)
def test_bad_limits_are_refused_with_the_reason(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        iolimit.parse(text)


def test_the_option_refuses_a_bad_limit_before_anything_runs() -> None:
    outcome = CliRunner().invoke(main, ["run", "throughput", "--io-limit", "read_iops=0"])
    assert outcome.exit_code == 2
    assert "must be above 0" in outcome.output


# ----- refusals --------------------------------------------------------------------------------


def test_refused_without_root_or_without_a_throttle(tmp_path: Path) -> None:
    assert "needs root" in (iolimit.refusal(tmp_path, euid=1000) or "")
    assert "needs a block-IO throttle" in (iolimit.refusal(tmp_path, euid=0, version=None) or "")
    # Not on a block device: /proc (st_dev 0:N, no /sys/dev/block entry).
    assert "not a block device" in (iolimit.refusal(Path("/proc"), euid=0, version="v1") or "")


def test_refused_for_a_server_reached_by_url() -> None:
    request = ThroughputRequest(
        system_names=["a-server"], urls={"a-server": "x://h"}, io_limit=iolimit.parse("gp3-3k")
    )
    reasons = io_limit_refusals(request)
    if throttle_unavailable():
        assert reasons == [throttle_unavailable()]
    else:
        assert reasons == [
            "a-server: --io-limit cannot throttle a server reached by URL (its processes are not docbench's)"
        ]
    assert io_limit_refusals(ThroughputRequest(system_names=["a-server"])) == []


def test_the_device_is_the_whole_disk_of_the_directory(tmp_path: Path) -> None:
    if throttle_unavailable():
        pytest.skip(str(throttle_unavailable()))
    major, minor = iolimit.device_of(tmp_path / "not" / "made" / "yet")
    entry = Path(f"/sys/dev/block/{major}:{minor}")
    assert entry.exists() and not (entry / "partition").exists()
    assert (major, minor) == iolimit.device_of(tmp_path)


# ----- the throttle on a real process ----------------------------------------------------------


@pytest.fixture
def probe_file(tmp_path: Path) -> Path:
    reason = throttle_unavailable()
    if reason:
        pytest.skip(reason)
    path = tmp_path / "probe.bin"
    ioprobe.make_file(path, 8 * MIB)
    return path


def test_direct_reads_are_held_to_the_read_iops_limit(probe_file: Path) -> None:
    """600 reads of 4 KiB at read_iops=200: about 3 s (measured here: 2.90 s, the throttle's
    first slice lets a few through at once), where the disk alone does them in 0.03 s."""
    device = iolimit.device_of(probe_file)
    version = iolimit.cgroup_version()
    assert version is not None
    result = ioprobe.probe("read-direct", 200, 600, probe_file, device, version)
    assert 2.4 <= result.seconds <= 7.0, result
    # (dd's own start reads its program and libraries in the cgroup when they are not in the
    # page cache: after a drop_caches, up to a few hundred more, at the same limit)
    assert result.cgroup_requests is None or 600 <= result.cgroup_requests <= 1000
    unthrottled = ioprobe.probe("read-direct", None, 600, probe_file, device, version)
    assert unthrottled.seconds < 1.5, unthrottled


def test_the_cgroup_is_emptied_and_removed_also_on_an_exception(tmp_path: Path) -> None:
    reason = throttle_unavailable()
    if reason:
        pytest.skip(reason)
    version = iolimit.cgroup_version()
    assert version is not None
    limit = iolimit.parse("read_iops=100")
    device = iolimit.device_of(tmp_path)
    sleeper = subprocess.Popen(["sleep", "60"])
    outside = Path(f"/proc/{sleeper.pid}/cgroup").read_text()
    try:
        with pytest.raises(KeyboardInterrupt), iolimit.Throttled("test", limit, device, version) as group:
            directory = group.dirs[iolimit.hierarchy(version)]
            if version == "v1":
                assert (directory / iolimit.V1_FILES["read_iops"]).read_text().split() == [
                    f"{device[0]}:{device[1]}",
                    "100",
                ]
            group.add_tree(sleeper.pid)
            assert group.processes() == [sleeper.pid]
            assert Path(f"/proc/{sleeper.pid}/cgroup").read_text() != outside
            raise KeyboardInterrupt  # Ctrl-C in the middle of a run
        assert not directory.exists()
        assert Path(f"/proc/{sleeper.pid}/cgroup").read_text() == outside
        assert sleeper.poll() is None  # moved back, not killed
    finally:
        sleeper.kill()
        sleeper.wait()


def test_only_the_given_process_tree_goes_in(tmp_path: Path) -> None:
    reason = throttle_unavailable()
    if reason:
        pytest.skip(reason)
    version = iolimit.cgroup_version()
    assert version is not None
    parent = subprocess.Popen(["sh", "-c", "sleep 60 & wait"])
    other = subprocess.Popen(["sleep", "60"])
    try:
        deadline = time.monotonic() + 5
        with RunCgroup("tree", (iolimit.hierarchy(version),)) as group:
            while len(group.processes()) < 2 and time.monotonic() < deadline:
                group.add_tree(parent.pid)  # (again until sh has started its child)
                time.sleep(0.05)
            members = group.processes()
            assert parent.pid in members and len(members) == 2
            assert other.pid not in members and os.getpid() not in members
    finally:
        for process in (parent, other):
            process.kill()
            process.wait()


def test_a_run_puts_the_server_tree_under_the_limit_and_takes_it_out(tmp_path: Path) -> None:
    """What the throughput runner does around each run (cpu scenario: a throttled cgroup of
    its own), on a stand-in server process."""
    reason = throttle_unavailable()
    if reason:
        pytest.skip(reason)
    server = subprocess.Popen(["sleep", "60"])
    outside = Path(f"/proc/{server.pid}/cgroup").read_text()
    engine = SimpleNamespace(workdir=tmp_path, server_pids=lambda: [server.pid])
    request = ThroughputRequest(io_limit=iolimit.parse("read_iops=300,write_bps=10MiB"))
    try:
        with _run_cgroups(SimpleNamespace(engine=engine), Run("cpu", "read-only", 1, 1, request)) as groups:
            assert groups.cap is None and groups.throttle is not None
            assert str(server.pid) in (groups.throttle / "cgroup.procs").read_text().split()
            assert groups.served() == {"read_ios": 0, "write_ios": 0, "read_bytes": 0, "write_bytes": 0}
            assert groups.files == [str(groups.throttle / "cgroup.procs")]
        assert not groups.throttle.exists()
        assert Path(f"/proc/{server.pid}/cgroup").read_text() == outside
    finally:
        server.kill()
        server.wait()
    record = iolimit.record(request.io_limit, tmp_path)
    assert record is not None
    assert record["limits"] == {"read_iops": 300, "write_bps": 10 * MIB}
    assert record["cgroup"] == iolimit.cgroup_version()
    assert record["device"] == "{}:{}".format(*iolimit.device_of(tmp_path))


# ----- the result's record and compare's warning -------------------------------------------------


def test_compare_warns_when_two_results_differ_in_the_limit(tmp_path: Path) -> None:
    source = sorted((ROOT / "docs" / "results" / "scale").glob("analytics.*.json"))[0]
    base = json.loads(source.read_text())
    record = {
        "asked": "io1-16k",
        "limits": iolimit.parse("io1-16k").limits(),
        "cgroup": "v1",
        "device": "254:0",
        "device_name": "vda",
    }
    for side, document in (("baseline", base), ("contender", base | {"io_limit": record})):
        (tmp_path / side).mkdir()
        (tmp_path / side / "r.json").write_text(json.dumps(document))
    (pair,) = compare(
        load_set([tmp_path / "baseline"], "baseline"), load_set([tmp_path / "contender"], "contender"), 0.1
    ).pairs
    assert [(w.kind, w.message) for w in pair.warnings] == [
        ("io_limit", "block-IO throttle: baseline no io limit, contender --io-limit io1-16k (v1 on vda)")
    ]
    # The same limit on both sides (another device name, say): no warning.
    assert iolimit.difference(record, record | {"device_name": "sdb"}) is None
    assert iolimit.difference(None, {"limits": {}}) is None
