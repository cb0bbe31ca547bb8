"""Clusters (issue #17): Elasticsearch and OpenSearch as several nodes on the loopback.

* the shape options (``--nodes/--shards/--replicas/--kill-node``), their defaults and refusals;
* a managed 3-node cluster runs the analytics workload with exact answers (composite paging
  across 3 shards) and records its shape, every node's version, its health and failovers;
* faults: a node SIGKILLed during the load (1 replica) loses and duplicates nothing; during the
  queries (1 replica) the answers stay right; with no replica the lost shard is reported;
* URL mode with several node URLs, one of them dead, fails over to the live ones.

Each behaviour runs on the fewest nodes that still test it: three where a node is killed (two
master-eligible nodes lose their master with either one), two for URL failover (no node dies);
the load fault on OpenSearch, the query faults on Elasticsearch (their cluster code is shared,
systems/searchengine), so both distributions run as clusters.

The clusters are real nodes started by docbench (the CLI in a subprocess, like a user) from the
installs of ``docbench setup``; heaps are small (512 MiB a node) to keep the tests short.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from docbench.contracts.cluster import ClusterShape, parse_kill
from docbench.results import cluster_label, run_name

NODE_HEAP = "1536m"  # shared by the 3 nodes: 512 MiB each
DOCS = "20k"  # a load of ~10 s on 3 nodes: long enough for a kill 2 s into it
# The environment the shape options set (cleared around each run).
SHAPE_VARIABLES = ("DOCBENCH_NODES", "DOCBENCH_SHARDS", "DOCBENCH_REPLICAS", "DOCBENCH_KILL_NODE")


# ----- shapes and options (no server) -----------------------------------------------------


def test_cluster_shape_defaults() -> None:
    assert (ClusterShape().index_shards, ClusterShape().index_replicas) == (1, 0)
    three = ClusterShape(nodes=3)
    assert (three.index_shards, three.index_replicas, three.distributed) == (3, 1, True)
    assert ClusterShape(nodes=3, shards=6, replicas=2).label() == "3 nodes, 6 shards, 2 replicas"
    assert ClusterShape(nodes=1, shards=4).distributed
    assert not ClusterShape().distributed


def test_parse_kill() -> None:
    assert (parse_kill("load").phase, parse_kill("load").delay) == ("load", 5.0)
    assert (parse_kill("queries@2.5").phase, parse_kill("queries@2.5").delay) == ("queries", 2.5)
    for bad in ("sideways", "load@soon", "@3"):
        with pytest.raises(ValueError):
            parse_kill(bad)


def test_reports_name_the_shape_beside_the_system() -> None:
    one = {
        "system": "opensearch",
        "variant": "default",
        "cluster": {"nodes": 1, "shards": 1, "replicas": 0, "managed": True},
    }
    three = {**one, "cluster": {"nodes": 3, "shards": 3, "replicas": 1, "managed": True}}
    assert run_name(one) == "opensearch/default"
    assert run_name(three) == "opensearch/default [3n/3s/1r]"
    assert cluster_label({"system": "postgresql", "cluster": None}) == ""


@pytest.fixture
def clean_cluster_env(monkeypatch: pytest.MonkeyPatch):
    """The options put the shape in the environment: each test starts and ends without it."""
    for name in SHAPE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield
    for name in SHAPE_VARIABLES:
        os.environ.pop(name, None)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--systems", "postgresql", "--nodes", "3"], "cannot run as a cluster"),
        (["--systems", "opensearch,duckdb", "--replicas", "1"], "duckdb cannot run as a cluster"),
        (["--nodes", "3"], "need --systems"),
        (["--systems", "opensearch", "--nodes", "3", "--kill-node", "sideways"], "give load or queries"),
        (["--systems", "opensearch", "--nodes", "0"], "0"),
        (["--systems", "opensearch", "--kill-node", "load"], "give --nodes 2 or more"),
    ],
)
def test_cluster_options_are_checked_before_anything_runs(
    argv: list[str], message: str, clean_cluster_env: None
) -> None:
    from docbench.cli import main

    result = CliRunner().invoke(main, ["run", "analytics", *argv])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_run_help_lists_the_cluster_options() -> None:
    from docbench.cli import main

    output = CliRunner().invoke(main, ["run", "analytics", "--help"]).output
    for option in ("--nodes", "--shards", "--replicas", "--kill-node"):
        assert option in output


# ----- real clusters ----------------------------------------------------------------------


def _installed(name: str) -> None:
    from docbench.setup import setup_systems
    from docbench.systems import engine_class

    if setup_systems([name]) != 0 or not engine_class(name).availability().ok:
        pytest.fail(f"{name} could not be installed: {engine_class(name).availability().reason}")


@pytest.fixture(scope="module")
def cluster_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DOCBENCH_HOME the unprivileged server user can enter, with a generated dataset."""
    home = Path(os.environ.get("DOCBENCH_HOME") or tmp_path_factory.mktemp("home")) / "clusters"
    home.mkdir(parents=True, exist_ok=True)
    for part in (home, *home.parents):
        if part == Path("/"):
            break
        if part.stat().st_uid == os.geteuid():
            os.chmod(part, part.stat().st_mode | 0o011)
    data = home / "data"
    if not (data / "dataset.json").exists():
        subprocess.run(
            [sys.executable, "-m", "docbench.cli", "generate", "--docs", DOCS, "--out", str(data)],
            check=True,
            capture_output=True,
        )
    return home


def docbench_run(home: Path, argv: list[str], results: Path) -> tuple[subprocess.CompletedProcess[str], dict]:
    env = {**os.environ, "DOCBENCH_HOME": str(home / "home"), "DOCBENCH_SEARCH_HEAP": NODE_HEAP}
    for name in SHAPE_VARIABLES:
        env.pop(name, None)
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "docbench.cli",
            "run",
            "analytics",
            "--variants",
            "default",
            "--results",
            str(results),
            *argv,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    written = sorted(results.glob("analytics.*.json"))
    assert written, process.stdout[-3000:] + process.stderr[-3000:]
    return process, json.loads(written[-1].read_text())


def _statuses(document: dict) -> list[str]:
    return [answer["status"] for answer in document["answers"]]


def test_node_killed_during_the_load_loses_and_duplicates_nothing(cluster_home: Path, tmp_path: Path) -> None:
    """3 nodes, 3 shards, 1 replica; SIGKILL of one node 2 s into the load: the load finishes
    on the two others with every offered document exactly once, the answers are exact, and the
    result says what happened."""
    system = "opensearch"
    _installed(system)
    process, document = docbench_run(
        cluster_home,
        [
            "--systems",
            system,
            "--nodes",
            "3",
            "--kill-node",
            "load@2",
            "--no-restart",
            "--data",
            str(cluster_home / "data"),
        ],
        tmp_path,
    )
    output = process.stdout + process.stderr
    assert document["complete"], output[-3000:]
    assert _statuses(document) == ["ok"] * 5, document.get("query_errors")
    assert document["dataset"]["documents_by_oracle"] == 20_000
    assert document["num_loaded_documents"] == 20_000
    assert (document["load_errors"] or {}).get("count", 0) == 0
    cluster = document["cluster"]
    assert (cluster["nodes"], cluster["shards"], cluster["replicas"], cluster["managed"]) == (3, 3, 1, True)
    assert sorted(cluster["node_versions"]) == ["docbench-1", "docbench-2", "docbench-3"]
    [event] = cluster["faults"]["events"]
    assert event["killed"] == "docbench-3" and event["signal"] == "SIGKILL" and event["pids"]
    # The cluster was not green after the kill (a copy of each shard of the dead node missing).
    assert cluster["health"]["seconds"].get("yellow", 0) > 0
    assert "[3n/3s/1r]" in process.stdout


def test_node_killed_during_the_queries_keeps_the_answers(cluster_home: Path, tmp_path: Path) -> None:
    """Queries on 3 nodes with 1 replica; one node killed 1 s into them: every answer still
    exact (the searches fail over to the surviving copies)."""
    _installed("elasticsearch")
    process, document = docbench_run(
        cluster_home,
        [
            "--systems",
            "elasticsearch",
            "--nodes",
            "3",
            "--kill-node",
            "queries@1",
            "--no-restart",
            "--tries",
            "6",
            "--data",
            str(cluster_home / "data"),
        ],
        tmp_path,
    )
    assert document["complete"], (process.stdout + process.stderr)[-3000:]
    assert _statuses(document) == ["ok"] * 5, document.get("query_errors")
    [event] = document["cluster"]["faults"]["events"]
    assert event["phase"] == "queries" and event["killed"]


def test_without_replicas_a_killed_node_is_lost_data(cluster_home: Path, tmp_path: Path) -> None:
    """Replicas 0: the shard on the killed node has no copy. The run says so (failed queries
    naming the unavailable shards, a red cluster), it does not answer from what is left."""
    _installed("elasticsearch")
    _process, document = docbench_run(
        cluster_home,
        [
            "--systems",
            "elasticsearch",
            "--nodes",
            "3",
            "--replicas",
            "0",
            "--kill-node",
            "queries@1",
            "--no-restart",
            "--tries",
            "6",
            "--data",
            str(cluster_home / "data"),
        ],
        tmp_path,
    )
    cluster = document["cluster"]
    assert cluster["replicas"] == 0
    assert cluster["faults"]["events"][0]["killed"]
    assert cluster["health"]["seconds"].get("red", 0) > 0
    assert cluster["lost"]["primary_shards"], cluster
    assert any("lost data" in warning for warning in document["warnings"])
    statuses = _statuses(document)
    assert "ok" not in statuses[-1:], statuses  # the last query ran without the lost shard
    errors = json.dumps(document["query_errors"])
    assert "shard" in errors, errors


def test_several_urls_fail_over_to_a_live_node(
    cluster_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """URL mode: a managed 2-node cluster started here, given as three URLs of which the first
    does not answer: the run works on the live ones, records the cluster as not docbench's,
    and counts the nodes it found (two, not the three URLs)."""
    _installed("elasticsearch")
    from docbench.contracts.cluster import NODES_ENV
    from docbench.core import paths
    from docbench.servers.managed import free_port
    from docbench.systems import open_engine

    with monkeypatch.context() as env:
        env.setenv(NODES_ENV, "2")
        env.setenv("DOCBENCH_SEARCH_HEAP", "1g")  # 512 MiB a node
        engine = open_engine("elasticsearch", paths.work_dir() / "cluster-url-test")
        engine.start()
    try:
        urls = ",".join([f"http://127.0.0.1:{free_port()}", engine.base_url])
        process, document = docbench_run(
            cluster_home,
            [
                "--systems",
                "elasticsearch",
                "--elasticsearch-url",
                urls,
                "--no-restart",
                "--data",
                str(cluster_home / "data"),
            ],
            tmp_path,
        )
        assert document["complete"], (process.stdout + process.stderr)[-3000:]
        assert _statuses(document) == ["ok"] * 5
        cluster = document["cluster"]
        assert (cluster["managed"], cluster["nodes"]) == (False, 2)
        assert len(cluster["node_versions"]) == 2
        assert cluster["failovers"], "the dead URL was never failed over"
        assert document["url"] == urls
    finally:
        engine.stop()
