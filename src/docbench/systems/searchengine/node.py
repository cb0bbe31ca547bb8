"""The managed nodes: one single-node cluster, or a cluster of N nodes on the loopback, started
from an installed distribution.

``docbench setup elasticsearch|opensearch`` puts the Maven Central ``integ-test-zip`` into
``$DOCBENCH_OPT``; a node runs it on 127.0.0.1 only, HTTP and transport on free ports (kept
across restarts), with its own config/data/logs/tmp directories in the work directory, as the
unprivileged user when docbench is root (both engines refuse root), with a heap sized to the
machine (shared by the N nodes of a cluster), and is stopped by PID.

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
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docbench.systems import server
from docbench.systems.searchengine.http import HttpClient, node_process_id
from docbench.systems.searchengine.jvm import MiB, find_java_home, heap_size

if TYPE_CHECKING:
    from docbench.systems.searchengine.engine import SearchEngineBase

START_TIMEOUT = 180.0


def pid_alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


class SearchNode:
    """One single-node cluster in ``workdir``, started from ``install_dir``. ``distribution``
    (the engine class) names the binary, config file, environment variables, JDKs and the
    distribution's own node settings."""

    def __init__(self, distribution: type[SearchEngineBase], install_dir: Path, workdir: Path,
                 node_name: str = "docbench", heap_bytes: int | None = None) -> None:
        self.distribution = distribution
        self.node_name = node_name
        self.heap_bytes = heap_bytes
        # Discovery: single-node, unless a SearchCluster sets its seed hosts and masters.
        self.discovery: dict[str, Any] = {"discovery.type": "single-node"}
        self.install_dir = install_dir
        self.workdir = workdir
        self.config_dir = workdir / "config"
        self.data_dir = workdir / "data"
        self.logs_dir = workdir / "logs"
        self.tmp_dir = workdir / "tmp"
        self.log_path = workdir / f"{distribution.name}.log"
        self.port_file = workdir / "ports"
        self.user = server.ensure_unprivileged_user()
        self.process: server.ManagedProcess | None = None
        self.http_port: int | None = None
        self.transport_port: int | None = None
        # The JVM that serves requests (Elasticsearch's launcher starts it as a child).
        self.server_pid: int | None = None

    @property
    def display_name(self) -> str:
        return self.distribution.display_name

    @property
    def url(self) -> str:
        if self.http_port is None:
            raise RuntimeError(f"{self.display_name} has not been started")
        return f"http://127.0.0.1:{self.http_port}"

    # ----- configuration -------------------------------------------------------------------
    def _prepare(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        blocked = server.first_blocked_ancestor(self.workdir, self.user)
        if blocked and Path(blocked) != self.workdir:
            raise RuntimeError(
                f"{self.display_name} runs as the unprivileged user {self.user.pw_name!r} "
                f"(it refuses root), which cannot enter {blocked}; put docbench's work directory "
                f"somewhere it can reach (DOCBENCH_HOME=...) or allow traversal (chmod o+x {blocked})")
        blocked = server.first_blocked_ancestor(self.install_dir / "bin", self.user)
        if blocked:
            raise RuntimeError(f"the unprivileged user {self.user.pw_name!r} cannot enter {blocked} "
                               f"where {self.display_name} is installed (chmod o+x {blocked})")
        if self.user is not None:
            os.chmod(self.workdir, os.stat(self.workdir).st_mode | stat.S_IXOTH)
        for directory in (self.data_dir, self.logs_dir, self.tmp_dir):
            directory.mkdir(exist_ok=True)
        # The distribution's config directory, copied so the node writes only in the work dir
        # (keystore, auto-configuration); jvm.options without GC logs and heap dumps.
        if self.config_dir.exists():
            shutil.rmtree(self.config_dir)
        shutil.copytree(self.install_dir / "config", self.config_dir)
        options = self.config_dir / "jvm.options"
        kept = [ln for ln in options.read_text().splitlines()
                if not re.search(r"-Xlog:|-Xloggc|HeapDump|-XX:ErrorFile|GCLog|PrintGC", ln)]
        kept.append(f"-XX:ErrorFile={self.logs_dir}/hs_err_pid%p.log")
        options.write_text("\n".join(kept) + "\n")

    def settings(self, http_port: int, transport_port: int) -> dict[str, Any]:
        values: dict[str, Any] = {
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
            raise RuntimeError(f"{self.display_name} needs a JDK "
                               f"{' or '.join(map(str, dist.java_versions))} under /usr/lib/jvm "
                               f"(or DOCBENCH_JAVA_HOME)")
        heap = (self.heap_bytes or heap_size()) // MiB
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("ES_", "OPENSEARCH_", "JAVA_HOME", "JAVA_TOOL_OPTIONS",
                                      "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"))}
        env.update({
            dist.java_home_env: str(java_home),
            dist.java_opts_env: f"-Xms{heap}m -Xmx{heap}m",
            dist.path_conf_env: str(self.config_dir),
            dist.tmpdir_env: str(self.tmp_dir),
            "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8",
        })
        if self.user is not None:
            env["HOME"] = str(self.workdir)
            env["USER"] = env["LOGNAME"] = self.user.pw_name
        return env

    # ----- lifecycle -----------------------------------------------------------------------
    def running(self) -> bool:
        return self.process is not None and self.process.alive()

    def start(self, timeout: float = START_TIMEOUT) -> None:
        if self.running():
            return
        if self.http_port is None and self.port_file.exists():
            # Keep the ports of an earlier start so session specs handed out stay valid.
            with contextlib.suppress(ValueError):
                self.http_port, self.transport_port = map(int, self.port_file.read_text().split())
        last_error: Exception | None = None
        for attempt in range(4):
            if self.http_port and self.transport_port and attempt < 2 \
                    and not server.port_open(self.http_port) and not server.port_open(self.transport_port):
                http_port, transport_port = self.http_port, self.transport_port
            else:
                http_port = server.free_port()
                transport_port = server.free_port()
                while transport_port == http_port:
                    transport_port = server.free_port()
            self.launch(http_port, transport_port)
            try:
                self.wait_ready(timeout)
            except RuntimeError as exc:  # exited during start-up (a port taken meanwhile?)
                last_error = exc
                time.sleep(1.0 + attempt)
                continue
            self.port_file.write_text(f"{http_port} {transport_port}\n")
            return
        raise RuntimeError(f"{self.display_name} did not start: {last_error}")

    def launch(self, http_port: int, transport_port: int) -> None:
        """Write the configuration and start the node's process (without waiting for it)."""
        server.reap_leftovers(server.pid_file_in(self.workdir))
        self._prepare()
        self._write_config(http_port, transport_port)
        process = server.ManagedProcess([str(self.install_dir / "bin" / self.distribution.binary)],
                                        self.log_path, user=self.user, cwd=self.workdir,
                                        env=self.environment())
        process.start()
        self.process = process
        self.http_port, self.transport_port = http_port, transport_port

    def wait_ready(self, timeout: float = START_TIMEOUT, nodes: int = 1) -> None:
        """Wait until the node answers and its cluster has ``nodes`` nodes and is at least
        yellow; then record the serving JVM. A node that exits meanwhile is stopped and
        RuntimeError raised; TimeoutError after ``timeout``."""
        process = self.process
        assert process is not None
        client = HttpClient(self.url, timeout=5)
        health = f"/_cluster/health?wait_for_status=yellow&wait_for_nodes={nodes}&timeout=1s"
        try:
            process.wait_until(lambda: bool(client.request("GET", health)), timeout,
                               f"{self.display_name} node {self.node_name}")
        except (RuntimeError, TimeoutError):
            self._stop_process(process)
            self.process = None
            raise
        finally:
            client.close()
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

    @staticmethod
    def _stop_process(process: server.ManagedProcess) -> None:
        # The launcher stops its server child on SIGTERM; ManagedProcess.stop then makes sure
        # the adopted server JVM went too (by PID and start time, never a reused PID).
        process.stop(timeout=60)

    def stop(self) -> None:
        if self.process is not None:
            self._stop_process(self.process)
            self.process = None
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
        if self.process is not None:
            self._stop_process(self.process)  # reaps the launcher, forgets the pid file
            self.process = None
        self.server_pid = None
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


class SearchCluster:
    """N nodes of one cluster on 127.0.0.1, each in ``workdir/node-I`` with its own ports; all
    are master-eligible data nodes. Ports are kept across restarts (in ``workdir/ports``)."""

    def __init__(self, distribution: type[SearchEngineBase], install_dir: Path, workdir: Path,
                 size: int) -> None:
        if size < 2:
            raise ValueError("a cluster has at least two nodes (one node is a SearchNode)")
        self.distribution = distribution
        self.workdir = workdir
        # The heap one node would get, shared: N nodes fit where one did (at least 512 MiB).
        heap = max(heap_size() // size, 512 * MiB) // MiB * MiB
        self.nodes = [SearchNode(distribution, install_dir, workdir / f"node-{i}",
                                 node_name=f"docbench-{i}", heap_bytes=heap)
                      for i in range(1, size + 1)]
        self.port_file = workdir / "ports"
        self.bootstrapped = workdir / ".cluster-formed"
        self.killed: list[str] = []

    @property
    def size(self) -> int:
        return len(self.nodes)

    @property
    def display_name(self) -> str:
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

    def _ports(self) -> list[tuple[int, int]]:
        with contextlib.suppress(ValueError, OSError):
            numbers = list(map(int, self.port_file.read_text().split()))
            pairs = list(zip(numbers[::2], numbers[1::2], strict=True))
            if len(pairs) == self.size and not any(server.port_open(p) for pair in pairs for p in pair):
                return pairs
        taken: set[int] = set()
        pairs = []
        for _ in self.nodes:
            pair = []
            for _ in range(2):
                port = server.free_port()
                while port in taken:
                    port = server.free_port()
                taken.add(port)
                pair.append(port)
            pairs.append((pair[0], pair[1]))
        return pairs

    def start(self, timeout: float = START_TIMEOUT) -> None:
        if all(node.running() for node in self.nodes):
            return
        self.stop()
        self.workdir.mkdir(parents=True, exist_ok=True)
        pairs = self._ports()
        seeds = [f"127.0.0.1:{transport}" for _, transport in pairs]
        discovery: dict[str, Any] = {"discovery.seed_hosts": seeds}
        if not self.bootstrapped.exists():
            discovery["cluster.initial_master_nodes"] = [node.node_name for node in self.nodes]
        for node, (http_port, transport_port) in zip(self.nodes, pairs, strict=True):
            node.discovery = discovery
            node.launch(http_port, transport_port)
        errors: list[BaseException] = []

        def wait(node: SearchNode) -> None:
            try:
                node.wait_ready(timeout, nodes=self.size)
            except BaseException as error:  # noqa: BLE001 - collected, raised below
                errors.append(error)
        threads = [threading.Thread(target=wait, args=(node,)) for node in self.nodes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            self.stop()
            raise errors[0]
        self.port_file.write_text(" ".join(f"{h} {t}" for h, t in pairs) + "\n")
        self.bootstrapped.touch()
        self.killed = []

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
