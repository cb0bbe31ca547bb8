"""The managed node: one single-node cluster started from an installed distribution.

``docbench setup elasticsearch|opensearch`` puts the Maven Central ``integ-test-zip`` into
``$DOCBENCH_OPT``; the node runs it on 127.0.0.1 only, HTTP and transport on free ports (kept
across restarts), ``single-node`` discovery, with its own config/data/logs/tmp directories in
the work directory, as the unprivileged user when docbench is root (both engines refuse root),
with a heap sized to the machine, and is stopped by PID.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
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

    def __init__(self, distribution: type[SearchEngineBase], install_dir: Path, workdir: Path) -> None:
        self.distribution = distribution
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
            "node.name": "docbench",
            "network.host": "127.0.0.1",
            "http.port": http_port,
            "transport.port": transport_port,
            "discovery.type": "single-node",
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
        heap = heap_size() // MiB
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
        # A node an earlier docbench left running here goes first (its config is rewritten).
        server.reap_leftovers(server.pid_file_in(self.workdir))
        self._prepare()
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
            self._write_config(http_port, transport_port)
            process = server.ManagedProcess([str(self.install_dir / "bin" / self.distribution.binary)],
                                            self.log_path, user=self.user, cwd=self.workdir,
                                            env=self.environment())
            process.start()
            client = HttpClient(f"http://127.0.0.1:{http_port}", timeout=5)
            try:
                process.wait_until(lambda c=client: self._ready(c), timeout, self.display_name)
            except RuntimeError as exc:  # exited during start-up (a port taken meanwhile?)
                process.stop()
                last_error = exc
                time.sleep(1.0 + attempt)
                continue
            except TimeoutError:
                self._stop_process(process)
                raise
            finally:
                client.close()
            self.process = process
            self.http_port, self.transport_port = http_port, transport_port
            self.port_file.write_text(f"{http_port} {transport_port}\n")
            self.server_pid = self._find_server_pid()
            if self.server_pid:
                # Elasticsearch's launcher runs the server JVM as its child, which gets no
                # death signal of its own: recorded, it is stopped with the launcher.
                process.adopt(self.server_pid)
            return
        raise RuntimeError(f"{self.display_name} did not start: {last_error}")

    @staticmethod
    def _ready(client: HttpClient) -> bool:
        client.request("GET", "/_cluster/health?wait_for_status=yellow&timeout=1s")
        return True

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
