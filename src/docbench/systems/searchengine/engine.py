"""The engine handle of Elasticsearch and OpenSearch: install state, lifecycle, URL mode,
HTTP clients, the serving JVM.

Managed: a :class:`~docbench.systems.searchengine.node.SearchNode` in the work directory, or
with ``--nodes N`` a :class:`~docbench.systems.searchengine.node.SearchCluster` of N nodes on
the loopback, from the newest installed distribution of the supported line in
``$DOCBENCH_OPT``. URL: the user's cluster (``--elasticsearch-url`` / ``--opensearch-url``,
one node URL or several, comma-separated), which docbench neither restarts nor stops; it only
ever touches its own indexes there: those with docbench's mark in their mapping's ``_meta``
(``index.py``); an index of the same name without it stops the run.

Every index docbench creates gets the shards and replicas of the run's
:class:`~docbench.contracts.cluster.ClusterShape`. On a cluster the engine also watches the
cluster's health and, with ``--kill-node``, kills one node during a phase
(:mod:`docbench.systems.searchengine.faults`); :meth:`SearchEngineBase.cluster_record` is what
the result says about the cluster.

Each distribution's ``engine.py`` names its binary, environment variables, JDKs and the few
node settings that differ.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

from docbench.contracts.cluster import ClusterPhases, ClusterShape, requested_kill, requested_shape
from docbench.contracts.common import Availability
from docbench.contracts.engine import Engine
from docbench.core import paths
from docbench.core.jsontypes import (
    JsonArray,
    JsonObject,
    JsonValue,
    as_object,
    as_str,
    json_record,
    object_or_empty,
)
from docbench.core.redact import redact_text, redact_url
from docbench.servers.jvm import find_java_home
from docbench.systems.searchengine import index as search_index
from docbench.systems.searchengine.faults import FaultInjector, HealthMonitor
from docbench.systems.searchengine.http import (
    REQUEST_TIMEOUT,
    Failover,
    HttpClient,
    SearchEngineError,
    first_value,
    member,
    node_process_id,
    objects,
    server_version,
    split_urls,
    to_int,
)
from docbench.systems.searchengine.node import SearchCluster, SearchNode

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}


class SearchEngineBase(Engine, ClusterPhases):
    """Elasticsearch or OpenSearch: a managed single node, or the user's cluster by URL."""

    embedded = False
    runs_by_default = False
    runs_as_cluster = True
    takes_node_urls = True
    kills_nodes = True
    url_example: ClassVar[str | None] = "http://localhost:9200"

    # What a distribution names.
    artifact: ClassVar[str]
    binary: ClassVar[str]
    version_prefix: ClassVar[str] = ""
    config_file: ClassVar[str]
    java_opts_env: ClassVar[str]
    # The environment variable of the JVM options of a launcher JVM that starts the server's
    # (Elasticsearch's CLI launcher), if the distribution has one.
    launcher_java_opts_env: ClassVar[str | None] = None
    java_home_env: ClassVar[str]
    path_conf_env: ClassVar[str]
    tmpdir_env: ClassVar[str]
    java_versions: ClassVar[tuple[int, ...]] = (17, 21)
    # Node settings of the distribution (elasticsearch.yml / opensearch.yml, values as JSON).
    server_settings: ClassVar[JsonObject] = {}
    distribution: ClassVar[str | None] = None  # version.distribution in GET / (OpenSearch)

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        self.shape = requested_shape()
        install = self.install_dir()
        self.node: SearchNode | SearchCluster | None = None
        if not url and install is not None:
            self.node = (
                SearchNode(type(self), install, workdir)
                if self.shape.nodes == 1
                else SearchCluster(type(self), install, workdir, self.shape.nodes)
            )
        self._client: HttpClient | None = None
        # Every request that went to another node because one did not answer (all clients).
        self.failovers: list[Failover] = []
        self.monitor: HealthMonitor | None = None
        self.versions_seen: dict[str, str] = {}  # every node's version, killed ones too
        kill = requested_kill()
        self.faults = FaultInjector(self, kill) if kill and isinstance(self.node, SearchCluster) else None

    # ----- discovery -----------------------------------------------------------------------
    @classmethod
    def install_dir(cls) -> Path | None:
        """The newest installed distribution of the supported line in $DOCBENCH_OPT."""
        found = []
        for candidate in paths.opt_dir().glob(f"{cls.artifact}-{cls.version_prefix}*"):
            if (candidate / ".docbench-installed").exists() and (candidate / "bin" / cls.binary).exists():
                with contextlib.suppress(ValueError):
                    version = tuple(int(p) for p in candidate.name.split("-", 1)[1].split("."))
                    found.append((version, candidate))
        return max(found)[1] if found else None

    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        hint = cls.install_hint or f"docbench setup {cls.name}"
        if url:
            client = HttpClient(url, timeout=10)
            try:
                distribution, number = server_version(client)
            except Exception as error:  # noqa: BLE001
                message = redact_text(" ".join(str(error).split()), url)
                return Availability(False, reason=f"cannot reach {cls.shown_urls(url)}: {message}")
            finally:
                client.close()
            if distribution != cls.distribution:
                return Availability(
                    False,
                    reason=f"{cls.shown_urls(url)} is not {cls.display_name} "
                    f"(distribution {distribution or 'elasticsearch'})",
                )
            return Availability(True, version=f"{cls.display_name} {number}")
        install = cls.install_dir()
        if install is None:
            return Availability(
                False,
                reason=f"{cls.display_name} {cls.version_prefix}x is not installed in {paths.opt_dir()}",
                install_hint=hint,
            )
        if find_java_home(cls.java_versions) is None:
            # JDK 17 is a Debian 12 package; 21+ is not (setup installs a runtime from PyPI).
            java_hint = "apt-get install openjdk-17-jre-headless" if 17 in cls.java_versions else hint
            return Availability(
                False,
                reason=f"no JDK {' or '.join(map(str, cls.java_versions))} "
                f"under /usr/lib/jvm, $JAVA_HOME or {paths.opt_dir()}",
                install_hint=java_hint,
            )
        shape = requested_shape()
        if shape.index_replicas >= shape.nodes and shape.nodes > 1:
            return Availability(
                False,
                reason=f"{shape.index_replicas} replica(s) need more than "
                f"{shape.nodes} nodes (a copy per node)",
            )
        return Availability(True, version=f"{cls.display_name} {install.name.split('-', 1)[1]}")

    @staticmethod
    def shown_urls(url: str) -> str:
        """The URLs as they may be shown (passwords hidden)."""
        return ",".join(redact_url(u) for u in split_urls(url))

    def display_url(self) -> str | None:
        return self.shown_urls(self.url) if self.url else None

    def version(self) -> str | None:
        """The running server's version, else the installed (or URL's) one."""
        with contextlib.suppress(Exception):
            return f"{self.display_name} {server_version(self.client())[1]}"
        return super().version()

    def versions(self) -> dict[str, str]:
        with contextlib.suppress(Exception):
            return {self.name: server_version(self.client())[1]}
        version = super().version()
        return {self.name: version.split()[-1]} if version else {}

    # ----- the cluster ---------------------------------------------------------------------
    def node_versions(self) -> dict[str, str]:
        """Every node's name and version, as the cluster says."""
        answer = self.client().request_object("GET", "/_nodes?filter_path=nodes.*.name,nodes.*.version")
        nodes = [as_object(node, "node") for node in object_or_empty(answer.get("nodes") or None).values()]
        return {as_str(node["name"], "node name"): str(node["version"]) for node in nodes}

    def cluster_shape(self) -> ClusterShape:
        """Managed: the nodes docbench started. URL: the nodes the cluster has now."""
        nodes = self.shape.nodes
        if self.node is None:
            with contextlib.suppress(Exception):
                nodes = len(self.node_versions()) or 1
        return ClusterShape(nodes, self.shape.index_shards, self.shape.index_replicas)

    def cluster_record(self) -> JsonObject:
        """What a result says about the cluster: its shape, every node's version, whether
        docbench managed it, and what happened to it (faults, failovers, health)."""
        record: JsonObject = {**self.cluster_shape().to_record(), "managed": self.node is not None}
        with contextlib.suppress(Exception):
            self.versions_seen.update(self.node_versions())
        if self.versions_seen:
            record["node_versions"] = dict(sorted(self.versions_seen.items()))
        if self.failovers:
            record["failovers"] = [json_record(event, "failover") for event in self.failovers]
        with contextlib.suppress(Exception):
            lost = self.lost_shards()
            if lost:
                record["lost"] = {
                    "primary_shards": [*lost],
                    "note": f"{len(lost)} primary shard(s) of docbench's indexes have no live "
                    "copy (their node is down and they had no replica): the documents "
                    "in them are lost to this run",
                }
        if self.monitor is not None:
            record["health"] = self.monitor.summary()
        if self.faults is not None:
            record["faults"] = self.faults.record()
        return record

    def lost_shards(self) -> list[JsonObject]:
        """Primary shards of docbench's indexes that no live node holds (lost data)."""
        rows = self.client().request(
            "GET", "/_cat/shards?format=json&h=index,shard,prirep,state,unassigned.reason"
        )
        lost: list[JsonObject] = [
            {"index": row["index"], "shard": to_int(row["shard"]), "reason": row.get("unassigned.reason")}
            for row in objects(rows or [], "_cat/shards")
            if row.get("prirep") == "p" and row.get("state") == "UNASSIGNED"
        ]
        ours = {
            name
            for name in {as_str(row["index"], "index") for row in lost}
            if search_index.state(self.client(), name) == "docbench"
        }
        return [row for row in lost if row["index"] in ours]

    def phase_started(self, phase: str) -> None:
        """Watch a cluster's health from the first phase on; inject the planned fault."""
        if not self.versions_seen:
            with contextlib.suppress(Exception):
                self.versions_seen.update(self.node_versions())
        if self.monitor is None and self.shape.distributed:
            self.monitor = HealthMonitor(self.base_url)
            self.monitor.start()
        if self.faults is not None:
            self.faults.phase_started(phase)

    def phase_ended(self, phase: str) -> None:
        if self.faults is not None:
            self.faults.phase_ended(phase)

    def index_settings(self) -> dict[str, int]:
        """Shards and replicas of every index docbench creates here."""
        return {"number_of_shards": self.shape.index_shards, "number_of_replicas": self.shape.index_replicas}

    def create_index(self, index: str, definition: JsonObject) -> None:
        """Drop docbench's own ``index`` and create it with the run's shards and replicas."""
        settings = as_object(as_object(definition.setdefault("settings", {})).setdefault("index", {}))
        settings.update(self.index_settings())
        if self.monitor is not None:
            self.monitor.pause()  # a new index is yellow until its copies are allocated
        try:
            search_index.recreate(self.client(), index, definition)
            if self.shape.distributed:
                # Every copy allocated before the load starts (green, not initialising); a
                # cluster short of a node stays yellow, which still takes writes.
                health = self.client().request_object(
                    "GET",
                    "/_cluster/health"
                    + search_index.index_path(index)
                    + "?wait_for_status=green&timeout=60s",
                    ok=(200, 408),
                )
                if health.get("status") == "red":
                    raise RuntimeError(f"index {index} stays red: its shards cannot be allocated")
        finally:
            if self.monitor is not None:
                self.monitor.resume(self.base_url)

    # ----- where the node is ---------------------------------------------------------------
    def served_url(self) -> str | None:
        return self.base_url

    @property
    def base_url(self) -> str:
        """The nodes' URLs, comma-separated: the user's, or the managed nodes' that run."""
        if self.url:
            return self.url
        if self.node is None:
            raise RuntimeError(f"{self.display_name} is not installed (run `docbench setup {self.name}`)")
        return ",".join(self.node.urls)

    @property
    def several_urls(self) -> bool:
        """Several node URLs given: a request may go to another node when one fails."""
        return bool(self.url) and len(split_urls(self.url or "")) > 1

    @property
    def is_local(self) -> bool:
        """Whether the nodes run on this machine (their processes can be observed)."""
        if not self.url:
            return True
        return all(
            urlsplit(u if "://" in u else f"http://{u}").hostname in LOCAL_HOSTS for u in split_urls(self.url)
        )

    @property
    def data_dir(self) -> Path | None:
        """The managed node's data directory (None for a server reached by URL)."""
        return self.node.data_dir if self.node is not None else None

    # ----- connections ---------------------------------------------------------------------
    def connect(self, timeout: float | None = REQUEST_TIMEOUT) -> HttpClient:
        """A new keep-alive connection to the node (the caller closes it); a long ``timeout``
        for requests that run long (bulk, update by query, force-merge)."""
        client = HttpClient(self.base_url, timeout=timeout)
        client.failovers = self.failovers  # one record of failovers for all of them
        return client

    def client(self) -> HttpClient:
        """This process's shared connection for ordinary requests (closed by :meth:`release`)."""
        if self._client is None:
            self._client = self.connect()
        return self._client

    def long_request(
        self,
        method: str,
        path: str,
        body: bytes | JsonObject | JsonArray | None = None,
        *,
        timeout: float,
        content_type: str | None = None,
        what: str | None = None,
    ) -> JsonValue:
        """One request that may run for long, on its own connection with its own socket
        timeout, so the ordinary one stays short."""
        client = self.connect(timeout)
        try:
            return client.request(method, path, body, content_type=content_type, what=what)
        finally:
            client.close()

    def release(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # ----- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        if self.node is not None:
            self.node.start()
            # The node is docbench's: indexes of a docbench before the mark get it, so that
            # recreate() (which drops only marked indexes) recognises them.
            search_index.mark_all(self.client())
        elif not self.url:
            raise RuntimeError(f"{self.display_name} is not installed (run `docbench setup {self.name}`)")
        else:
            self.client().request("GET", "/_cluster/health?wait_for_status=yellow&timeout=30s")

    def stop(self) -> None:
        if self.faults is not None:
            self.faults.cancel()
        if self.monitor is not None:
            self.monitor.stop()
        self.release()
        if self.node is not None:
            self.node.stop()

    def restart(self) -> None:
        """Managed: stop and start the node on the same data and ports (caches empty). A
        server reached by URL cannot be restarted: nothing happens (``can_restart`` False)."""
        if not self.can_restart or self.node is None:
            return
        self.release()
        if self.monitor is not None:
            self.monitor.pause()  # a restart is not a fault: not counted as red/yellow time
        self.node.stop()
        self.node.start()
        # Wait until the indexes are open again (their shards recovered from disk; on a
        # cluster with replicas, every copy: the query runs on the cluster as it was).
        status = "green" if self.shape.index_replicas and self.shape.nodes > 1 else "yellow"
        with contextlib.suppress(SearchEngineError):
            self.client().request("GET", f"/_cluster/health?wait_for_status={status}&timeout=120s")
        if self.monitor is not None:
            self.monitor.resume(self.base_url)

    def is_alive(self) -> bool:
        if self.node is not None and not self.node.running():
            return False
        try:
            self.client().request("GET", "/_cluster/health?timeout=5s")
            return True
        except Exception:  # noqa: BLE001
            self.release()
            return False

    # ----- processes and modules -----------------------------------------------------------
    def server_pids(self) -> list[int]:
        """The managed nodes' JVMs (each then its launcher); [] for a server reached by URL."""
        return self.node.pids() if self.node is not None else []

    def serving_pids(self) -> list[int]:
        """The JVM serving requests of every managed node that runs."""
        if self.node is None:
            return []
        return [node.server_pid for node in self.node.members() if node.server_pid]

    def node_pid(self) -> int | None:
        """The JVM serving requests, also for a server by URL on this machine (None when it
        runs elsewhere or does not say)."""
        if self.node is not None:
            return self.node.server_pid
        if self.url and self.is_local:
            with contextlib.suppress(Exception):
                return node_process_id(self.client())
        return None

    def modules(self) -> set[str]:
        """Names of the node's modules and plugins."""
        answer = self.client().request(
            "GET", "/_nodes/_local/plugins?filter_path=nodes.*.modules.name,nodes.*.plugins.name"
        )
        node = first_value(member(answer, "nodes"), "nodes")
        return {
            as_str(entry["name"], "module name")
            for key in ("modules", "plugins")
            for entry in objects(node.get(key) or [], key)
        }
