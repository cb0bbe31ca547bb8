"""The engine handle of Elasticsearch and OpenSearch: install state, lifecycle, URL mode,
HTTP clients, the serving JVM.

Managed: a :class:`~docbench.systems.searchengine.node.SearchNode` in the work directory, from
the newest installed distribution of the supported line in ``$DOCBENCH_OPT``. URL: the user's
cluster (``--elasticsearch-url`` / ``--opensearch-url``), which docbench neither restarts nor
stops; it only ever touches its own indexes there: those with docbench's mark in their
mapping's ``_meta`` (``index.py``); an index of the same name without it stops the run.

Each distribution's ``engine.py`` names its binary, environment variables, JDKs and the few
node settings that differ.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

from docbench import paths
from docbench.contracts.common import Availability
from docbench.contracts.engine import Engine
from docbench.core.redact import redact_text, redact_url
from docbench.systems.searchengine import index as search_index
from docbench.systems.searchengine.http import (
    REQUEST_TIMEOUT,
    HttpClient,
    SearchEngineError,
    node_process_id,
    server_version,
)
from docbench.systems.searchengine.jvm import find_java_home
from docbench.systems.searchengine.node import SearchNode

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}


class SearchEngineBase(Engine):
    """Elasticsearch or OpenSearch: a managed single node, or the user's cluster by URL."""

    embedded = False
    runs_by_default = False
    url_example: ClassVar[str | None] = "http://localhost:9200"

    # What a distribution names.
    artifact: ClassVar[str]
    binary: ClassVar[str]
    version_prefix: ClassVar[str] = ""
    config_file: ClassVar[str]
    java_opts_env: ClassVar[str]
    java_home_env: ClassVar[str]
    path_conf_env: ClassVar[str]
    tmpdir_env: ClassVar[str]
    java_versions: ClassVar[tuple[int, ...]] = (17, 21)
    server_settings: ClassVar[dict[str, Any]] = {}
    distribution: ClassVar[str | None] = None  # version.distribution in GET / (OpenSearch)

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        install = self.install_dir()
        self.node: SearchNode | None = None if url or install is None \
            else SearchNode(type(self), install, workdir)
        self._client: HttpClient | None = None

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
                return Availability(False, reason=f"cannot reach {redact_url(url)}: {message}")
            finally:
                client.close()
            if distribution != cls.distribution:
                return Availability(False, reason=f"{redact_url(url)} is not {cls.display_name} "
                                                  f"(distribution {distribution or 'elasticsearch'})")
            return Availability(True, version=f"{cls.display_name} {number}")
        install = cls.install_dir()
        if install is None:
            return Availability(False, reason=f"{cls.display_name} {cls.version_prefix}x is not "
                                              f"installed in {paths.opt_dir()}", install_hint=hint)
        if find_java_home(cls.java_versions) is None:
            return Availability(False, reason=f"no JDK {' or '.join(map(str, cls.java_versions))} "
                                              f"under /usr/lib/jvm",
                                install_hint="apt-get install openjdk-17-jre-headless")
        return Availability(True, version=f"{cls.display_name} {install.name.split('-', 1)[1]}")

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

    # ----- where the node is ---------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The node's URL: the user's, or the managed node's (once started)."""
        if self.url:
            return self.url
        if self.node is None:
            raise RuntimeError(f"{self.display_name} is not installed (run `docbench setup {self.name}`)")
        return self.node.url

    @property
    def is_local(self) -> bool:
        """Whether the node runs on this machine (its process can be observed)."""
        if not self.url:
            return True
        return urlsplit(self.url if "://" in self.url else f"http://{self.url}").hostname in LOCAL_HOSTS

    @property
    def data_dir(self) -> Path | None:
        """The managed node's data directory (None for a server reached by URL)."""
        return self.node.data_dir if self.node is not None else None

    # ----- connections ---------------------------------------------------------------------
    def connect(self, timeout: float | None = REQUEST_TIMEOUT) -> HttpClient:
        """A new keep-alive connection to the node (the caller closes it); a long ``timeout``
        for requests that run long (bulk, update by query, force-merge)."""
        return HttpClient(self.base_url, timeout=timeout)

    def client(self) -> HttpClient:
        """This process's shared connection for ordinary requests (closed by :meth:`release`)."""
        if self._client is None:
            self._client = self.connect()
        return self._client

    def long_request(self, method: str, path: str, body: Any = None, *, timeout: float,
                     **kwargs: Any) -> Any:
        """One request that may run for long, on its own connection with its own socket
        timeout, so the ordinary one stays short."""
        client = self.connect(timeout)
        try:
            return client.request(method, path, body, **kwargs)
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
        self.release()
        if self.node is not None:
            self.node.stop()

    def restart(self) -> None:
        """Managed: stop and start the node on the same data and ports (caches empty). A
        server reached by URL cannot be restarted: nothing happens (``can_restart`` False)."""
        if not self.can_restart or self.node is None:
            return
        self.release()
        self.node.stop()
        self.node.start()
        # Wait until the indexes are open again (their shards recovered from disk).
        with contextlib.suppress(SearchEngineError):
            self.client().request("GET", "/_cluster/health?wait_for_status=yellow&timeout=120s")

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
        """The managed node's JVM (then its launcher); [] for a server reached by URL."""
        return self.node.pids() if self.node is not None else []

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
        answer = self.client().request("GET", "/_nodes/_local/plugins"
                                              "?filter_path=nodes.*.modules.name,nodes.*.plugins.name")
        node = next(iter(answer["nodes"].values()))
        return {entry["name"] for key in ("modules", "plugins") for entry in node.get(key) or []}
