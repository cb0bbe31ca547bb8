"""docbench's own Spark: the JVM programs of the ``pyspark`` package ``setup.sh`` installed, on
127.0.0.1, each a :class:`~docbench.servers.managed.ManagedServer` in a directory of its own:

* the **Spark Connect server** (``SparkConnectServer``: the Spark application every client
  reaches, by gRPC); on its own (``local[*]``: the driver runs the tasks too), or
* the driver of a **standalone cluster**: a master and N workers (``--nodes N``), each worker a
  JVM that starts the application's executor (one more JVM) when the Connect server connects.

Nothing binds beyond 127.0.0.1 (``SPARK_LOCAL_IP``, the drivers' and workers' ``--host``); the
web UIs are off or on free ports of 127.0.0.1.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from docbench.core import paths
from docbench.core.machine import machine_memory
from docbench.servers import managed as server
from docbench.servers.jvm import find_java_home

VERSION = "4.1.3"
JAVA_VERSIONS = (17, 21)
GiB = 1 << 30
CONNECT_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def install_dir() -> Path:
    return paths.opt_dir() / f"spark-{VERSION}"


def spark_home() -> Path | None:
    """The ``pyspark`` package's directory in the venv ``setup.sh`` made (its ``bin``,
    ``jars``), when it is complete."""
    root = install_dir()
    if not (root / ".docbench-installed").exists():
        return None
    found = sorted(root.glob("lib/python3*/site-packages/pyspark"))
    home = found[0] if found else None
    return home if home is not None and (home / "bin" / "spark-class").exists() else None


def memory_per_jvm(jvms: int) -> str:
    """Heap per JVM: half the machine's memory shared by the JVMs, between 1 and 8 GiB
    (``DOCBENCH_SPARK_MEMORY``, e.g. ``2g``, overrides it)."""
    override = os.environ.get("DOCBENCH_SPARK_MEMORY")
    if override:
        return override
    share = machine_memory() // 2 // max(1, jvms)
    return f"{min(max(share // GiB, 1), 8)}g"


def extra_jvm_options() -> str:
    """JVM options for every Spark JVM (``DOCBENCH_SPARK_JVM_OPTIONS``); the tests set the
    quick compiler only, as for the search engines' nodes (servers/jvm.py)."""
    return os.environ.get("DOCBENCH_SPARK_JVM_OPTIONS", "").strip()


def cores_per_worker(nodes: int) -> int:
    """The machine's cores shared by the workers, at least one each (3 workers on 2 cores
    get one each: the cluster is then as wide as the machine, plus one)."""
    return max(1, math.ceil((os.cpu_count() or 1) / max(1, nodes)))


class SparkProcess(server.ManagedServer):
    """One of Spark's JVMs, started through ``spark-class``/``spark-submit`` (which ``exec``
    the JVM: the PID is Java's)."""

    start_timeout = 120.0
    stop_timeout = 30.0

    def __init__(self, workdir: Path, name: str) -> None:
        super().__init__(workdir, workdir / f"{name}.log", cwd=workdir)
        self.home = spark_home()
        self.java_home = find_java_home(JAVA_VERSIONS)

    def environment(self) -> dict[str, str]:
        if self.home is None:
            raise RuntimeError("Spark is not installed (run `docbench setup spark`)")
        if self.java_home is None:
            raise RuntimeError("no Java 17 or 21 runtime (run `docbench setup spark`)")
        env = dict(os.environ)
        env.update(
            SPARK_HOME=str(self.home),
            JAVA_HOME=str(self.java_home),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_LOG_DIR=str(self.workdir),
            SPARK_WORKER_DIR=str(self.workdir / "work"),
            SPARK_LOCAL_DIRS=str(self.workdir / "tmp"),
            SPARK_NO_DAEMONIZE="1",
        )
        env.pop("PYSPARK_PYTHON", None)
        if extra_jvm_options():
            # the master's and workers' own JVMs (the Connect server's: its --conf below)
            env["SPARK_DAEMON_JAVA_OPTS"] = extra_jvm_options()
        return env

    def prepare(self) -> None:
        super().prepare()
        (self.workdir / "tmp").mkdir(parents=True, exist_ok=True)

    def spark_class(self) -> str:
        assert self.home is not None
        return str(self.home / "bin" / "spark-class")

    def ready(self, ports: tuple[int, ...]) -> bool:
        return server.port_open(ports[0])


class SparkMaster(SparkProcess):
    display_name = "Spark master"
    port_count = 2  # the master's RPC port, its web UI

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir, "master")

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the Spark master has not been started")
        return f"spark://127.0.0.1:{self.port}"

    def command(self, ports: tuple[int, ...]) -> list[str]:
        return [
            self.spark_class(),
            "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1",
            "--port", str(ports[0]),
            "--webui-port", str(ports[1]),
        ]  # fmt: skip


class SparkWorker(SparkProcess):
    display_name = "Spark worker"
    port_count = 2  # the worker's RPC port, its web UI

    def __init__(self, workdir: Path, master: SparkMaster, cores: int, memory: str) -> None:
        super().__init__(workdir, "worker")
        self.master = master
        self.cores = cores
        self.memory = memory

    def command(self, ports: tuple[int, ...]) -> list[str]:
        return [
            self.spark_class(),
            "org.apache.spark.deploy.worker.Worker",
            "--host", "127.0.0.1",
            "--port", str(ports[0]),
            "--webui-port", str(ports[1]),
            "--cores", str(self.cores),
            "--memory", self.memory,
            "--work-dir", str(self.workdir / "work"),
            self.master.url,
        ]  # fmt: skip

    def ready(self, ports: tuple[int, ...]) -> bool:
        # Registered with the master: its log says so (the port alone opens before that).
        return server.port_open(ports[0]) and "Successfully registered with master" in self.log_text()

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""


class ConnectServer(SparkProcess):
    """The Spark Connect server: the application (its driver) every client reaches."""

    display_name = "Spark Connect server"
    port_count = 1

    def __init__(self, workdir: Path, master: str, warehouse: Path, memory: str) -> None:
        super().__init__(workdir, "connect")
        self.master = master
        self.warehouse = warehouse
        self.memory = memory

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the Spark Connect server has not been started")
        return f"sc://127.0.0.1:{self.port}"

    def command(self, ports: tuple[int, ...]) -> list[str]:
        assert self.home is not None
        conf = {
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(ports[0]),
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.sql.warehouse.dir": str(self.warehouse),
            "spark.sql.catalogImplementation": "in-memory",
            "spark.executor.memory": self.memory,
            # Answers of up to a few hundred MB (read-back of a fidelity corpus, Q1's groups).
            "spark.connect.grpc.maxInboundMessageSize": str(256 << 20),
        }
        if extra_jvm_options():
            conf["spark.driver.extraJavaOptions"] = extra_jvm_options()
            conf["spark.executor.extraJavaOptions"] = extra_jvm_options()
        options = [item for name, value in conf.items() for item in ("--conf", f"{name}={value}")]
        return [
            str(self.home / "bin" / "spark-submit"),
            "--class", CONNECT_SERVER_CLASS,
            "--master", self.master,
            "--driver-memory", self.memory,
            *options,
            "spark-internal",
        ]  # fmt: skip

    def ready(self, ports: tuple[int, ...]) -> bool:
        return server.port_open(ports[0])


class SparkCluster:
    """What docbench starts for one database directory: the Connect server alone
    (``nodes`` = 0: local mode), or a master, ``nodes`` workers and the Connect server as
    the cluster's application."""

    def __init__(self, workdir: Path, nodes: int) -> None:
        self.workdir = workdir
        self.nodes = nodes
        self.warehouse = workdir / "warehouse"
        if nodes == 0:
            self.master: SparkMaster | None = None
            self.workers: list[SparkWorker] = []
            master_url = "local[*]"
            memory = memory_per_jvm(1)
        else:
            self.master = SparkMaster(workdir / "master")
            memory = memory_per_jvm(nodes + 1)
            self.workers = [
                SparkWorker(workdir / f"worker-{n}", self.master, cores_per_worker(nodes), memory)
                for n in range(1, nodes + 1)
            ]
            master_url = "(the master's)"
        self.connect = ConnectServer(workdir / "connect", master_url, self.warehouse, memory)

    def start(self) -> None:
        self.warehouse.mkdir(parents=True, exist_ok=True)
        if self.master is not None:
            self.master.start()
            for worker in self.workers:
                worker.start()
            self.connect.master = self.master.url
        self.connect.start()

    def restart_application(self) -> None:
        """A fresh application (its executors end with it): the next query is cold."""
        self.connect.stop()
        self.connect.start()

    def stop(self) -> None:
        self.connect.stop()
        for worker in reversed(self.workers):
            worker.stop()
        if self.master is not None:
            self.master.stop()

    def running(self) -> bool:
        return self.connect.running()

    def directories(self) -> list[Path]:
        """The Connect server's directory first, then the workers'."""
        return [self.connect.workdir, *(worker.workdir for worker in self.workers)]

    def pids(self) -> list[int]:
        return processes_in(self.directories())


def processes_in(directories: list[Path]) -> list[int]:
    """The processes that run in these directories (by their pid files), each followed by its
    children: the Connect server (the driver) first, then each worker and its executors."""
    found = []
    for directory in directories:
        for pid in server.recorded_pids(directory):
            found.append(pid)
            found.extend(child_pids(pid))
    return found


def child_pids(pid: int) -> list[int]:
    """The direct children of a process (a worker's executor JVMs), from /proc: each thread
    lists those it started (a JVM starts them from any of its threads)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found.extend(int(word) for word in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return found
