"""Apache Spark 4: docbench's own Spark Connect server (local mode, or a managed standalone
cluster with ``--nodes N``), or the user's Spark by its Connect URL (``--spark-url sc://…``).

Every client (the loader, each query session, each concurrent client) is a Spark Connect
session (``pyspark-client``: gRPC, no JVM in docbench's processes). The tables are Parquet
files: in docbench's warehouse directory on its own server, in the cluster's warehouse by URL
(database ``docbench``, which docbench creates and never leaves). The catalog of docbench's own
server is in memory, so each session declares the table over its files (``CREATE TABLE IF NOT
EXISTS … LOCATION``): a restarted server (a cold query) finds the same files.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from docbench.contracts.cluster import ClusterPhases, ClusterShape, requested_nodes
from docbench.contracts.common import Availability
from docbench.contracts.engine import Engine
from docbench.core.jsontypes import JsonObject
from docbench.core.ownership import claim_directory
from docbench.core.redact import redact_text, redact_url
from docbench.servers.jvm import find_java_home
from docbench.systems.spark import server as sparkserver

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession

INSTALL_HINT = (
    "docbench setup spark  (pyspark 4.1.3 from PyPI into its own venv, and a Java 17 runtime "
    "from Debian if the machine has no Java 17 or 21)"
)
CLIENT_HINT = "pip install 'docbench[spark]'  (pyspark-client, the Spark Connect client)"
DATABASE = "docbench"
TABLE = f"{DATABASE}.documents"


def client_version() -> str:
    from importlib.metadata import version

    return version("pyspark-client")


# The client's own retry policy waits at least 10 minutes for a server that is gone (15 tries,
# backoff to 60 s): each call to a crashed Connect server would stall a run that long. Five
# tries with backoff to 2 s give up after 5 s of waiting (and their connection attempts).
RETRY_TRIES = 5
RETRY_MAX_BACKOFF_MS = 2000
# A probe that has not answered in this long finds the server not alive. A server that is up
# but busy (a query that outlived its cancel) queues the probe's job behind its tasks; without
# a deadline the probe would wait as long as that query, and every run after it too.
PROBE_SECONDS = 60.0


def open_session(url: str) -> SparkSession:
    """A new Spark Connect session on the server at ``url`` (each its own SQL state), which
    gives up on a server that is gone within seconds (``RETRY_TRIES``)."""
    from pyspark.sql.connect.client.retries import DefaultPolicy
    from pyspark.sql.connect.session import SparkSession

    session = SparkSession.builder.remote(url).create()  # no RPC yet: the policy covers them all
    policy = DefaultPolicy(max_retries=RETRY_TRIES, max_backoff=RETRY_MAX_BACKOFF_MS)
    session.client.set_retry_policies([policy])
    # Reattachable execution deadlocks the client: its iterators share one thread pool, and a
    # session garbage-collected while a query submits to that pool shuts the pool down from
    # inside submit() (SparkSession.__del__ -> client.close() -> pool.shutdown(), waiting on the
    # lock submit() holds). A test run hung that way for 25 minutes in `is_alive`. Without it
    # no pool is ever made; what it buys, resuming a result stream over a broken network, a
    # local server does not need and a query by URL retries whole.
    session.client.disable_reattachable_execute()
    return session


class SparkEngine(Engine, ClusterPhases):
    name = "spark"
    display_name = "Spark"
    embedded = False
    runs_by_default = False
    runs_as_cluster = True
    url_example = "sc://host:15002"
    install_hint = INSTALL_HINT
    notes = (
        "Apache Spark 4.1 (pyspark from PyPI, Java 17), reached through Spark Connect: "
        "local mode (one JVM) by default, a standalone cluster of N workers on 127.0.0.1 "
        "with --nodes N, or the user's by --spark-url. Tables are Parquet files; no index. "
        "Query time is the client's (Spark Connect reports none of its own)."
    )

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        self.cluster: sparkserver.SparkCluster | None = None
        if not url:
            # No --nodes: local mode; --nodes N: a standalone cluster of N workers.
            self.cluster = sparkserver.SparkCluster(workdir / "spark", requested_nodes() or 0)
        self._session: SparkSession | None = None

    # ----- discovery -----------------------------------------------------------------------
    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            client = client_version()
        except Exception as error:  # noqa: BLE001 - any failure means it cannot run
            return Availability(
                False, reason=f"the Spark Connect client is missing ({error})", install_hint=CLIENT_HINT
            )
        if url:
            try:
                session = open_session(url)
                try:
                    version = session.version
                finally:
                    session.stop()
                return Availability(True, version=f"Spark {version}")
            except Exception as error:  # noqa: BLE001
                message = redact_text(" ".join(str(error).split())[:300], url)
                return Availability(False, reason=f"cannot reach {redact_url(url)}: {message}")
        if sparkserver.spark_home() is None:
            return Availability(False, reason="Spark is not installed", install_hint=INSTALL_HINT)
        if find_java_home(sparkserver.JAVA_VERSIONS) is None:
            return Availability(False, reason="no Java 17 or 21 runtime", install_hint=INSTALL_HINT)
        return Availability(True, version=f"Spark {sparkserver.VERSION} (client {client})")

    def running_version(self) -> str | None:
        return f"Spark {self.session().version}"

    def versions(self) -> dict[str, str]:
        found = super().versions()
        with contextlib.suppress(Exception):
            found["pyspark-client"] = client_version()
        return found

    # ----- connections ---------------------------------------------------------------------
    def base_url(self) -> str:
        if self.url:
            return self.url
        assert self.cluster is not None
        return self.cluster.connect.url

    def served_url(self) -> str | None:
        if self.url:
            return self.url
        return self.cluster.connect.url if self.cluster is not None and self.cluster.connect.port else None

    @property
    def table_location(self) -> Path | None:
        """Where the table's files are (docbench's own server), None by URL (the cluster's
        warehouse)."""
        return self.cluster.warehouse / "documents" if self.cluster is not None else None

    def connect(self) -> SparkSession:
        return open_session(self.base_url())

    def session(self) -> SparkSession:
        """This process's shared session (closed by :meth:`release`)."""
        if self._session is None:
            self._session = self.connect()
        return self._session

    def release(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            with contextlib.suppress(Exception):
                session.stop()

    # ----- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        if self.cluster is not None:
            claim_directory(self.workdir)
            self.cluster.start()
        else:
            self.session().sql("SELECT 1").collect()

    def stop(self) -> None:
        self.release()
        if self.cluster is not None:
            self.cluster.stop()

    def restart(self) -> None:
        if not self.can_restart or self.cluster is None:
            return
        self.release()
        self.cluster.restart_application()

    def is_alive(self) -> bool:
        """The server answers ``SELECT 1`` within ``PROBE_SECONDS``."""
        if self.cluster is not None and not self.cluster.running():
            return False
        try:
            session = self.connect()
        except Exception:  # noqa: BLE001
            return False
        answers: list[bool] = []

        def ask() -> None:
            with contextlib.suppress(Exception):  # an error is no answer
                answers.append(session.sql("SELECT 1").collect()[0][0] == 1)

        # A daemon thread: one that never gets its answer must not hold the process at exit.
        probe = threading.Thread(target=ask, name="spark-probe", daemon=True)
        probe.start()
        probe.join(PROBE_SECONDS)

        def close() -> None:
            with contextlib.suppress(Exception):
                session.interruptAll()
            with contextlib.suppress(Exception):
                session.stop()

        if probe.is_alive():
            # No answer in time: not alive. The probe is interrupted and its session closed
            # in the background (calls to a server that is gone retry for seconds each).
            threading.Thread(target=close, name="spark-probe-close", daemon=True).start()
            return False
        close()
        return answers == [True]

    def server_pids(self) -> list[int]:
        return self.cluster.pids() if self.cluster is not None else []

    def remove_table_files(self) -> None:
        """Delete the table's files in docbench's own warehouse (sizes never include an
        earlier load's)."""
        location = self.table_location
        if location is not None:
            shutil.rmtree(location, ignore_errors=True)

    # ----- the cluster ---------------------------------------------------------------------
    def cluster_shape(self) -> ClusterShape:
        nodes = self.cluster.nodes if self.cluster is not None else 0
        return ClusterShape(max(nodes, 1), 1, 0)

    def cluster_record(self) -> JsonObject | None:
        if self.cluster is None or self.cluster.nodes == 0:
            return None
        return {
            **self.cluster_shape().to_record(),
            "managed": True,
            "mode": "standalone",
            "cores_per_worker": sparkserver.cores_per_worker(self.cluster.nodes),
        }


ENGINE = SparkEngine
