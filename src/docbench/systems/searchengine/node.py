"""The managed nodes: one single-node cluster, or a cluster of N nodes on the loopback, started
from an installed distribution.

``docbench setup elasticsearch|opensearch`` puts the Maven Central ``integ-test-zip`` into
``$DOCBENCH_OPT``; a node (a :class:`~docbench.servers.managed.ManagedServer`) runs it on
127.0.0.1 only, HTTP and transport on free ports (kept across restarts), with its own
config/data/logs/tmp directories in the work directory, as the unprivileged user when docbench
is root (both engines refuse root), with a heap sized to the machine (shared by the N nodes of
a cluster), and is stopped by PID.

One node uses ``single-node`` discovery. A :class:`SearchCluster` of N nodes gives each node
its directory ``node-I`` and its ports, and discovery on the loopback only: every node's seed
hosts are the N transport addresses on 127.0.0.1, and the first start bootstraps the cluster
from the N node names (``cluster.initial_master_nodes``, left out at later starts as the
engines ask).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import stat
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from docbench.core.jsontypes import JsonObject
from docbench.core.ownership import claim_directory, remove_owned_directory
from docbench.servers import managed as server
from docbench.servers.jvm import MiB, extra_jvm_options, find_java_home, heap_size
from docbench.systems.searchengine.http import HttpClient, node_process_id

if TYPE_CHECKING:
    from docbench.systems.searchengine.engine import SearchEngineBase

START_TIMEOUT = 180.0
# What a node's log says when one of its ports was taken after docbench picked it.
_PORT_TAKEN = ("BindException", "Address already in use", "Failed to bind")


def pid_alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


class SearchNode(server.ManagedServer):
    """One single-node cluster in ``workdir``, started from ``install_dir``. ``distribution``
    (the engine class) names the binary, config file, environment variables, JDKs and the
    distribution's own node settings. Its ports: HTTP, then transport (``workdir/ports``)."""

    port_count = 2
    start_timeout = START_TIMEOUT
    # The launcher stops its server child on SIGTERM; ManagedProcess.stop then makes sure the
    # adopted server JVM went too (by PID and start time, never a reused PID).
    stop_timeout = 60.0

    def __init__(
        self,
        distribution: type[SearchEngineBase],
        install_dir: Path,
        workdir: Path,
        node_name: str = "docbench",
        heap_bytes: int | None = None,
    ) -> None:
        super().__init__(
            workdir,
            workdir / f"{distribution.name}.log",
            port_file=workdir / "ports",
            user=server.ensure_unprivileged_user(),
            cwd=workdir,
        )
        self.distribution = distribution
        self.node_name = node_name
        self.heap_bytes = heap_bytes
        # Discovery: single-node, unless a SearchCluster sets its seed hosts and masters.
        self.discovery: JsonObject = {"discovery.type": "single-node"}
        # The nodes its cluster has: the readiness wait waits for all of them.
        self.cluster_size = 1
        self.install_dir = install_dir
        self.config_dir = workdir / "config"
        self.data_dir = workdir / "data"
        self.logs_dir = workdir / "logs"
        self.tmp_dir = workdir / "tmp"
        # The JVM that serves requests (Elasticsearch's launcher starts it as a child).
        self.server_pid: int | None = None

    @property
    def display_name(self) -> str:  # type: ignore[override]
        return self.distribution.display_name

    @property
    def http_port(self) -> int | None:
        return self.ports[0] if self.ports else None

    @property
    def transport_port(self) -> int | None:
        return self.ports[1] if self.ports else None

    @property
    def url(self) -> str:
        if self.http_port is None:
            raise RuntimeError(f"{self.display_name} has not been started")
        return f"http://127.0.0.1:{self.http_port}"

    # ----- configuration -------------------------------------------------------------------
    def prepare(self) -> None:
        claim_directory(self.workdir)
        if self.user is not None:
            blocked = server.first_blocked_ancestor(self.workdir, self.user)
            if blocked and Path(blocked) != self.workdir:
                raise RuntimeError(
                    f"{self.display_name} runs as the unprivileged user {self.user.pw_name!r} "
                    f"(it refuses root), which cannot enter {blocked}; put docbench's work "
                    f"directory somewhere it can reach (DOCBENCH_HOME=...) or allow traversal "
                    f"(chmod o+x {blocked})"
                )
            blocked = server.first_blocked_ancestor(self.install_dir / "bin", self.user)
            if blocked:
                raise RuntimeError(
                    f"the unprivileged user {self.user.pw_name!r} cannot enter "
                    f"{blocked} where {self.display_name} is installed "
                    f"(chmod o+x {blocked})"
                )
            os.chmod(self.workdir, os.stat(self.workdir).st_mode | stat.S_IXOTH)
        for directory in (self.data_dir, self.logs_dir, self.tmp_dir):
            directory.mkdir(exist_ok=True)
        # The distribution's config directory, copied so the node writes only in the work dir
        # (keystore, auto-configuration); jvm.options without GC logs and heap dumps.
        remove_owned_directory(self.config_dir)
        shutil.copytree(self.install_dir / "config", self.config_dir)
        options = self.config_dir / "jvm.options"
        kept = [
            ln
            for ln in options.read_text().splitlines()
            if not re.search(r"-Xlog:|-Xloggc|HeapDump|-XX:ErrorFile|GCLog|PrintGC", ln)
        ]
        kept.append(f"-XX:ErrorFile={self.logs_dir}/hs_err_pid%p.log")
        options.write_text("\n".join(kept) + "\n")

    def settings(self, http_port: int, transport_port: int) -> JsonObject:
        values: JsonObject = {
            "cluster.name": f"docbench-{self.distribution.name}",
            "node.name": self.node_name,
            "network.host": "127.0.0.1",
            "http.port": http_port,
            "transport.port": transport_port,
            "path.data": str(self.data_dir),
            "path.logs": str(self.logs_dir),
            # A full disk would turn the index read-only half way through a load; docbench
            # owns the machine for the run and reports sizes instead.
            "cluster.routing.allocation.disk.threshold_enabled": False,
            "action.auto_create_index": False,
            # Big aggregations (composite pages, thousands of collections).
            "search.max_buckets": 65536,
            "http.max_content_length": "500mb",
        }
        values.update(self.discovery)
        values.update(self.distribution.server_settings)
        return values

    def _write_config(self, http_port: int, transport_port: int) -> None:
        lines = ["# written by docbench at each start; edits are lost"]
        for key, value in self.settings(http_port, transport_port).items():
            lines.append(f"{key}: {json.dumps(value)}")
        (self.config_dir / self.distribution.config_file).write_text("\n".join(lines) + "\n")
        server.chown_tree(self.workdir, self.user)

    def environment(self) -> dict[str, str]:
        dist = self.distribution
        java_home = find_java_home(dist.java_versions)
        if java_home is None:
            raise RuntimeError(
                f"{self.display_name} needs a JDK "
                f"{' or '.join(map(str, dist.java_versions))} under /usr/lib/jvm "
                f"(or DOCBENCH_JAVA_HOME)"
            )
        heap = (self.heap_bytes or heap_size()) // MiB
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(
                ("ES_", "OPENSEARCH_", "JAVA_HOME", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")
            )
        }
        env.update(
            {
                dist.java_home_env: str(java_home),
                dist.java_opts_env: " ".join([f"-Xms{heap}m -Xmx{heap}m", *extra_jvm_options()]),
                dist.path_conf_env: str(self.config_dir),
                dist.tmpdir_env: str(self.tmp_dir),
                "LC_ALL": "C.UTF-8",
                "LANG": "C.UTF-8",
            }
        )
        if dist.launcher_java_opts_env:
            # The launcher JVM only starts the server's and waits for it: its quick compiler
            # alone halves its CPU (6.6 -> 3.6 s at each start of Elasticsearch 8.19 here, a
            # cold run restarts it before every query) and changes nothing the server does.
            env[dist.launcher_java_opts_env] = "-XX:TieredStopAtLevel=1"
        if self.user is not None:
            env["HOME"] = str(self.workdir)
            env["USER"] = env["LOGNAME"] = self.user.pw_name
        return env

    # ----- what the managed-server loop asks of a node -------------------------------------
    def command(self, ports: tuple[int, ...]) -> list[str]:
        return [str(self.install_dir / "bin" / self.distribution.binary)]  # ports: in its config

    def launch(self, ports: tuple[int, ...]) -> server.ManagedProcess:
        self._write_config(*ports)
        return super().launch(ports)

    def ready(self, ports: tuple[int, ...]) -> bool:
        """The node answers, and its cluster has all its nodes and is at least yellow."""
        client = HttpClient(f"http://127.0.0.1:{ports[0]}", timeout=5)
        try:
            return bool(
                client.request(
                    "GET",
                    f"/_cluster/health?wait_for_status=yellow&wait_for_nodes={self.cluster_size}&timeout=1s",
                )
            )
        finally:
            client.close()

    def on_ready(self, process: server.ManagedProcess) -> None:
        self.server_pid = self._find_server_pid()
        if self.server_pid:
            # Elasticsearch's launcher runs the server JVM as its child, which gets no
            # death signal of its own: recorded, it is stopped with the launcher.
            process.adopt(self.server_pid)

    def _find_server_pid(self) -> int | None:
        """The JVM that serves requests: Elasticsearch's launcher starts it as a child."""
        client = HttpClient(self.url, timeout=10)
        try:
            return node_process_id(client)
        except Exception:  # noqa: BLE001
            return self.process.pid if self.process else None
        finally:
            client.close()

    # ----- lifecycle -----------------------------------------------------------------------
    def stop(self) -> None:
        super().stop()
        self.server_pid = None

    def pids(self) -> list[int]:
        """The serving JVM first, then the launcher that started it (when it is another)."""
        pids = [self.server_pid, self.process.pid if self.process is not None else None]
        return list(dict.fromkeys(pid for pid in pids if pid))

    def kill(self) -> list[int]:
        """SIGKILL the node (a crash, no shutdown): the serving JVM, then its launcher; the
        PIDs signalled. Only processes this node started, by PID."""
        killed = []
        for pid in self.pids():
            if pid_alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
        self.stop()  # reaps the launcher, forgets the pid file
        return killed

    # The interface a SearchCluster shares.
    @property
    def urls(self) -> list[str]:
        return [self.url]

    @property
    def size(self) -> int:
        return 1

    def members(self) -> list[SearchNode]:
        return [self]


class SearchCluster(server.PortedServer):
    """N nodes of one cluster on 127.0.0.1, each in ``workdir/node-I`` with its own ports; all
    are master-eligible data nodes. Ports are kept across restarts (in ``workdir/ports``: HTTP
    and transport of each node); a start whose node could not bind its port (taken meanwhile)
    is tried again on other ports."""

    start_timeout = START_TIMEOUT
    start_tries = 3
    reuse_tries = 1

    def __init__(
        self, distribution: type[SearchEngineBase], install_dir: Path, workdir: Path, size: int
    ) -> None:
        if size < 2:
            raise ValueError("a cluster has at least two nodes (one node is a SearchNode)")
        super().__init__(workdir, port_file=workdir / "ports")
        self.distribution = distribution
        self.port_count = 2 * size
        # The heap one node would get, shared: N nodes fit where one did (at least 512 MiB).
        heap = max(heap_size() // size, 512 * MiB) // MiB * MiB
        self.nodes = [
            SearchNode(
                distribution, install_dir, workdir / f"node-{i}", node_name=f"docbench-{i}", heap_bytes=heap
            )
            for i in range(1, size + 1)
        ]
        for node in self.nodes:
            node.cluster_size = size
        self.bootstrapped = workdir / ".cluster-formed"
        self.killed: list[str] = []

    @property
    def size(self) -> int:
        return len(self.nodes)

    @property
    def display_name(self) -> str:  # type: ignore[override]
        return f"{self.distribution.display_name} ({self.size} nodes)"

    def members(self) -> list[SearchNode]:
        return list(self.nodes)

    @property
    def data_dir(self) -> Path:
        """The directory holding every node's data directory."""
        return self.workdir

    @property
    def url(self) -> str:
        return self.urls[0]

    @property
    def urls(self) -> list[str]:
        """The HTTP addresses of the nodes that run (all of them before a fault)."""
        running = [node.url for node in self.nodes if node.running()]
        if not running:
            raise RuntimeError(f"{self.display_name} has no node running")
        return running

    @property
    def server_pid(self) -> int | None:
        return next((node.server_pid for node in self.nodes if node.running()), None)

    def running(self) -> bool:
        """Whether the cluster serves: at least one node runs (a killed node is a fault the
        run records, not the end of the cluster)."""
        return any(node.running() for node in self.nodes)

    def start(self, timeout: float | None = None) -> None:
        if all(node.running() for node in self.nodes):
            return
        self.stop()
        claim_directory(self.workdir)
        self.start_on_ports(timeout)
        self.bootstrapped.touch()
        self.killed = []

    def retryable(self, error: server.ServerExited) -> bool:
        return any(sign in str(error) for sign in _PORT_TAKEN)

    def boot(self, ports: tuple[int, ...], timeout: float) -> None:
        """Launch every node on its pair of ``ports``, then wait for all of them together."""
        pairs = list(zip(ports[::2], ports[1::2], strict=True))
        discovery: JsonObject = {"discovery.seed_hosts": [f"127.0.0.1:{t}" for _, t in pairs]}
        if not self.bootstrapped.exists():
            discovery["cluster.initial_master_nodes"] = [node.node_name for node in self.nodes]
        try:
            for node, pair in zip(self.nodes, pairs, strict=True):
                node.discovery = discovery
                node.prepare_start()
                node.spawn(pair)
        except BaseException:
            self.stop()
            raise
        errors: list[BaseException] = []

        def wait(node: SearchNode, pair: tuple[int, int]) -> None:
            try:
                node.await_ready(pair, timeout)
            except BaseException as error:  # noqa: BLE001 - collected, raised below
                errors.append(error)

        threads = [
            threading.Thread(target=wait, args=(node, pair))
            for node, pair in zip(self.nodes, pairs, strict=True)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            self.stop()
            raise errors[0]
        self.ports = ports

    def stop(self) -> None:
        # In parallel: each node's shutdown waits on its own flush.
        threads = [threading.Thread(target=node.stop) for node in self.nodes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def pids(self) -> list[int]:
        return [pid for node in self.nodes for pid in node.pids()]

    def kill(self, node_name: str | None = None) -> tuple[str, list[int]]:
        """SIGKILL one running node (by default the last one that runs); its name and PIDs."""
        running = [node for node in self.nodes if node.running()]
        if not running:
            raise RuntimeError(f"{self.display_name} has no node running")
        victim = next((n for n in running if n.node_name == node_name), running[-1])
        pids = victim.kill()
        self.killed.append(victim.node_name)
        return victim.node_name, pids
