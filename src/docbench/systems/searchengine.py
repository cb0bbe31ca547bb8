"""What the Elasticsearch and OpenSearch adapters share: their REST APIs are nearly identical.

* :class:`SearchServer` -- a managed single node started from an installed distribution
  (``docbench setup elasticsearch|opensearch`` puts the Maven Central ``integ-test-zip`` into
  ``$DOCBENCH_OPT``): 127.0.0.1 only, HTTP and transport on free ports, ``single-node``
  discovery, its own config/data/logs/tmp directories in the work directory, run as the
  unprivileged user when docbench is root (both refuse root), heap sized to the machine,
  stopped by PID.
* :class:`HttpClient` -- a keep-alive HTTP/1.1 connection (standard library only) that sends
  bytes and decodes JSON answers with orjson.
* :class:`SearchEngineSystem` -- the :class:`~docbench.systems.base.System`: index creation
  from the folder's ``index.json``, ``_bulk`` loading (all-or-nothing per batch, see
  :class:`BulkLoader`), force-merge, sizes, and :class:`SearchSession`, which runs the
  folder's ``queries.json`` aggregation requests and turns their buckets into the canonical
  rows of :mod:`docbench.answers`.

Each subclass (``elasticsearch/adapter.py``, ``opensearch/adapter.py``) only names its binary,
its environment variables and the few settings that differ.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import http.client
import json
import os
import re
import shutil
import socket
import stat
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, urlsplit

import orjson

from docbench import paths
from docbench.systems import server
from docbench.systems.base import (
    Availability,
    BatchRejected,
    Loader,
    QueryOutcome,
    QuerySession,
    StorageSize,
    System,
    Variant,
    directory_size,
)

# Socket timeouts (seconds): any request, one _bulk batch, the force-merge of a whole index.
REQUEST_TIMEOUT = 600.0
BULK_TIMEOUT = 1800.0
MERGE_TIMEOUT = 6 * 3600.0
GiB = 1 << 30
MiB = 1 << 20
HOUR_US = 3_600_000_000
# Bulk item statuses that mean "try again later", not "this document is refused".
RETRYABLE_STATUSES = {429, 500, 502, 503, 504}
BULK_RETRIES = 5
# Lucene files holding stored fields (the _source and _id): the "data" part of the index.
STORED_FIELD_EXTENSIONS = {".fdt", ".fdx", ".fdm"}


class SearchEngineError(RuntimeError):
    """An HTTP error answer of the engine (status and its JSON error)."""

    def __init__(self, status: int, body: Any, what: str) -> None:
        self.status = status
        self.body = body
        super().__init__(f"{what}: HTTP {status}: {_error_text(body)}")


def _error_text(body: Any) -> str:
    if isinstance(body, dict) and "error" in body:
        error = body["error"]
        if isinstance(error, dict):
            cause = error.get("caused_by") or {}
            text = f"{error.get('type')}: {error.get('reason')}"
            if cause:
                text += f" (caused by {cause.get('type')}: {cause.get('reason')})"
            return text
        return str(error)
    text = body if isinstance(body, str) else json.dumps(body)[:500]
    return " ".join(str(text).split())[:500]


# ----- HTTP ---------------------------------------------------------------------------------


class HttpClient:
    """One keep-alive connection to a node. Not thread-safe except :meth:`abort`."""

    def __init__(self, base_url: str, timeout: float | None = REQUEST_TIMEOUT) -> None:
        # A long _update_by_query on OpenSearch answers with more than 100 header lines (one
        # `Warning` per batch of the painless script); http.client refuses over 100 by default.
        http.client._MAXHEADERS = max(http.client._MAXHEADERS, 100_000)  # type: ignore[attr-defined]
        parts = urlsplit(base_url if "://" in base_url else f"http://{base_url}")
        self.scheme = parts.scheme or "http"
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if self.scheme == "https" else 9200)
        self.prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if parts.username is not None:
            token = f"{parts.username}:{parts.password or ''}".encode()
            self.headers["Authorization"] = "Basic " + base64.b64encode(token).decode()
        self._conn: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
            self._conn = cls(self.host, self.port, timeout=self.timeout)
        return self._conn

    def request(self, method: str, path: str, body: bytes | dict | list | None = None,
                *, ok: tuple[int, ...] = (200, 201), content_type: str | None = None,
                what: str | None = None) -> Any:
        """Send one request and return its decoded JSON answer (raises on other statuses)."""
        if body is not None and not isinstance(body, bytes | bytearray):
            body = orjson.dumps(body)
        headers = dict(self.headers)
        if content_type:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, self.prefix + path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError,
                    http.client.CannotSendRequest):
                # A keep-alive connection the server closed meanwhile: reconnect once.
                self.close()
                if attempt == 2:
                    raise
            except Exception:
                self.close()
                raise
        try:
            decoded = orjson.loads(data) if data else None
        except orjson.JSONDecodeError:
            decoded = data.decode("utf-8", "replace")
        if response.status not in ok:
            raise SearchEngineError(response.status, decoded, what or f"{method} {path}")
        return decoded

    def abort(self) -> None:
        """Shut the socket down from another thread: the engine cancels the search."""
        conn = self._conn
        if conn is not None and conn.sock is not None:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None


def server_version(client: HttpClient) -> tuple[str | None, str]:
    """(distribution, version number) of the node: ``GET /`` (OpenSearch says "opensearch"),
    or the nodes info API where ``GET /`` is missing (Elasticsearch 8.19's integ-test-zip has
    no rest-root module; OpenSearch always serves ``GET /``)."""
    try:
        version = client.request("GET", "/")["version"]
        return version.get("distribution"), str(version["number"])
    except SearchEngineError as error:
        if error.status not in (400, 404, 405):
            raise
    info = client.request("GET", "/_nodes/_local?filter_path=nodes.*.version")
    return None, str(next(iter(info["nodes"].values()))["version"])


def redact(url: str) -> str:
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


# ----- the managed node -------------------------------------------------------------------


def machine_memory() -> int:
    """Physical memory, capped by a cgroup limit when there is one."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        with contextlib.suppress(OSError, ValueError):
            text = Path(limit_file).read_text().strip()
            if text != "max":
                total = min(total, int(text))
    return total


def parse_size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", text.lower())
    if not match:
        raise ValueError(f"not a size: {text!r}")
    factor = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[match.group(2)]
    return int(float(match.group(1)) * factor)


def heap_size(ram: int | None = None) -> int:
    """JVM heap: 1/8 of RAM between 1 and 8 GiB (the rest stays page cache for Lucene's
    memory-mapped files); ``DOCBENCH_SEARCH_HEAP`` (e.g. ``2g``) overrides it."""
    override = os.environ.get("DOCBENCH_SEARCH_HEAP")
    if override:
        return parse_size(override)
    ram = ram if ram is not None else machine_memory()
    return min(max(ram // 8, 1 * GiB), 8 * GiB) // MiB * MiB


def find_java_home(accepted: tuple[int, ...]) -> Path | None:
    """A JDK of one of the accepted major versions (first preferred); ``DOCBENCH_JAVA_HOME``
    overrides the search."""
    override = os.environ.get("DOCBENCH_JAVA_HOME")
    if override:
        return Path(override)
    roots = sorted(Path("/usr/lib/jvm").glob("*")) if Path("/usr/lib/jvm").is_dir() else []
    for major in accepted:
        for root in roots:
            if root.is_symlink() or not (root / "bin" / "java").exists():
                continue
            if _jdk_major(root) == major:
                return root
    java_home = os.environ.get("JAVA_HOME")
    if java_home and _jdk_major(Path(java_home)) in accepted:
        return Path(java_home)
    return None


def _jdk_major(root: Path) -> int | None:
    release = root / "release"
    with contextlib.suppress(OSError):
        match = re.search(r'JAVA_VERSION="(\d+)', release.read_text())
        if match:
            return int(match.group(1))
    match = re.search(r"(?:java-|jdk-?|openjdk-)(\d+)", root.name)
    return int(match.group(1)) if match else None


class SearchServer:
    """One single-node cluster in ``workdir`` started from an installed distribution."""

    def __init__(self, system: type[SearchEngineSystem], install_dir: Path, workdir: Path) -> None:
        self.system = system
        self.install_dir = install_dir
        self.workdir = workdir
        self.config_dir = workdir / "config"
        self.data_dir = workdir / "data"
        self.logs_dir = workdir / "logs"
        self.tmp_dir = workdir / "tmp"
        self.log_path = workdir / f"{system.name}.log"
        self.port_file = workdir / "ports"
        self.user = server.ensure_unprivileged_user()
        self.process: server.ManagedProcess | None = None
        self.http_port: int | None = None
        self.transport_port: int | None = None
        self.server_pid: int | None = None

    @property
    def url(self) -> str:
        if self.http_port is None:
            raise RuntimeError(f"{self.system.display_name} has not been started")
        return f"http://127.0.0.1:{self.http_port}"

    def _prepare(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        blocked = server.first_blocked_ancestor(self.workdir, self.user)
        if blocked and Path(blocked) != self.workdir:
            raise RuntimeError(
                f"{self.system.display_name} runs as the unprivileged user {self.user.pw_name!r} "
                f"(it refuses root), which cannot enter {blocked}; put docbench's work directory "
                f"somewhere it can reach (DOCBENCH_HOME=...) or allow traversal (chmod o+x {blocked})")
        blocked = server.first_blocked_ancestor(self.install_dir / "bin", self.user)
        if blocked:
            raise RuntimeError(f"the unprivileged user {self.user.pw_name!r} cannot enter {blocked} "
                               f"where {self.system.display_name} is installed (chmod o+x {blocked})")
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
            "cluster.name": f"docbench-{self.system.name}",
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
        values.update(self.system.server_settings)
        return values

    def _write_config(self, http_port: int, transport_port: int) -> None:
        lines = ["# written by docbench at each start; edits are lost"]
        for key, value in self.settings(http_port, transport_port).items():
            lines.append(f"{key}: {json.dumps(value)}")
        (self.config_dir / self.system.config_file).write_text("\n".join(lines) + "\n")
        server.chown_tree(self.workdir, self.user)

    def environment(self) -> dict[str, str]:
        java_home = find_java_home(self.system.java_versions)
        if java_home is None:
            raise RuntimeError(f"{self.system.display_name} needs a JDK "
                               f"{' or '.join(map(str, self.system.java_versions))} under /usr/lib/jvm "
                               f"(or DOCBENCH_JAVA_HOME)")
        heap = heap_size() // MiB
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("ES_", "OPENSEARCH_", "JAVA_HOME", "JAVA_TOOL_OPTIONS",
                                      "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"))}
        env.update({
            self.system.java_home_env: str(java_home),
            self.system.java_opts_env: f"-Xms{heap}m -Xmx{heap}m",
            self.system.path_conf_env: str(self.config_dir),
            self.system.tmpdir_env: str(self.tmp_dir),
            "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8",
        })
        if self.user is not None:
            env["HOME"] = str(self.workdir)
            env["USER"] = env["LOGNAME"] = self.user.pw_name
        return env

    def running(self) -> bool:
        return self.process is not None and self.process.alive()

    def start(self, timeout: float = 180.0) -> None:
        if self.running():
            return
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
            process = server.ManagedProcess([str(self.install_dir / "bin" / self.system.binary)],
                                            self.log_path, user=self.user, cwd=self.workdir,
                                            env=self.environment())
            process.start()
            client = HttpClient(f"http://127.0.0.1:{http_port}", timeout=5)
            try:
                process.wait_until(lambda c=client: self._ready(c), timeout,
                                   self.system.display_name)
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
            return
        raise RuntimeError(f"{self.system.display_name} did not start: {last_error}")

    @staticmethod
    def _ready(client: HttpClient) -> bool:
        client.request("GET", "/_cluster/health?wait_for_status=yellow&timeout=1s")
        return True

    def _find_server_pid(self) -> int | None:
        """The JVM that serves requests: Elasticsearch's launcher starts it as a child."""
        client = HttpClient(self.url, timeout=10)
        try:
            info = client.request("GET", "/_nodes/_local/process?filter_path=nodes.*.process.id")
            pid = int(next(iter(info["nodes"].values()))["process"]["id"])
        except Exception:  # noqa: BLE001
            return self.process.pid if self.process else None
        finally:
            client.close()
        return pid

    def _stop_process(self, process: server.ManagedProcess) -> None:
        server_pid = self.server_pid
        process.stop(timeout=60)
        # The launcher stops its server child on SIGTERM; make sure it went (it is our child).
        if server_pid and server_pid != process.pid and _pid_alive(server_pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(server_pid, 15)
            deadline = time.monotonic() + 30
            while _pid_alive(server_pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if _pid_alive(server_pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(server_pid, 9)

    def stop(self) -> None:
        if self.process is not None:
            self._stop_process(self.process)
            self.process = None
            self.server_pid = None


def _pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


# ----- loading ------------------------------------------------------------------------------

_INDEX_ACTION = b'{"index":{}}\n'
_BULK_QUERY = "?refresh=false&filter_path=errors,items.*._id,items.*.status,items.*.error"


def bulk_body(lines: list[bytes]) -> bytes:
    """The NDJSON body of a _bulk request indexing these raw lines as documents."""
    return _INDEX_ACTION + (b"\n" + _INDEX_ACTION).join(lines) + b"\n"


class BulkLoader(Loader):
    """``_bulk`` with auto-generated ids, one request per batch.

    _bulk is not transactional: when some items are refused, the items of the same request
    that were indexed are deleted again (by the ids the answer returns) before
    :class:`BatchRejected` is raised, so a batch is loaded entirely or not at all. Items
    refused for load reasons (429 queue full, 503) make the whole batch be retried.
    """

    def __init__(self, url: str, index: str) -> None:
        self.client = HttpClient(url, timeout=BULK_TIMEOUT)
        self.path = f"/{quote(index)}/_bulk{_BULK_QUERY}"
        self.index = index

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        body = bulk_body(lines)
        for attempt in range(BULK_RETRIES):
            answer = self._send(body)
            if not answer.get("errors"):
                return
            items = [next(iter(item.values())) for item in answer["items"]]
            kept = [item["_id"] for item in items if "error" not in item and item.get("_id")]
            failed = [item for item in items if "error" in item]
            self._delete(kept)
            content = [item for item in failed if item.get("status") not in RETRYABLE_STATUSES]
            if content:
                first = content[0]
                position = items.index(first) + 1
                named = {i: _error_text({"error": item["error"]}) for i, item in enumerate(items)
                         if "error" in item and item.get("status") not in RETRYABLE_STATUSES}
                raise BatchRejected(f"{_error_text({'error': first['error']})} "
                                    f"[document {position} of {len(lines)}, "
                                    f"{len(content)} refused]",
                                    refused=named)
            time.sleep(min(30.0, 0.5 * 2 ** attempt))
        raise RuntimeError(f"_bulk into {self.index}: the engine kept rejecting the batch "
                           f"as overloaded after {BULK_RETRIES} tries")

    def _send(self, body: bytes) -> dict[str, Any]:
        try:
            return self.client.request("POST", self.path, body, content_type="application/x-ndjson",
                                       what="_bulk")
        except SearchEngineError as error:
            # A whole request refused for its content (the engine could not read it at all).
            if error.status == 400:
                raise BatchRejected(str(error)) from error
            raise

    def _delete(self, ids: list[str]) -> None:
        if not ids:
            return
        body = b"".join(b'{"delete":{"_id":' + orjson.dumps(i) + b"}}\n" for i in ids)
        answer = self.client.request("POST", f"/{quote(self.index)}/_bulk?refresh=false"
                                             "&filter_path=errors,items.*.error",
                                     body, content_type="application/x-ndjson", what="_bulk delete")
        if answer.get("errors"):
            raise RuntimeError(f"could not delete the indexed part of a refused batch from "
                               f"{self.index}: {answer.get('items', [])[:1]}")

    def close(self) -> None:
        self.client.close()


# ----- query sessions ---------------------------------------------------------------------


def _page_size(body: dict[str, Any]) -> int:
    return int(body["aggs"]["pairs"]["composite"].get("size", 10000))


class SearchSession(QuerySession):
    """Runs the aggregation requests of ``queries.json`` and builds the canonical rows.

    engine_seconds = the sum of the ``took`` (milliseconds) of the search requests a query
    needed (composite aggregations page through their buckets in several requests).
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        timeout = spec.get("timeout")
        self.client = HttpClient(spec["url"], timeout=float(timeout) + 30 if timeout else None)
        self.index = spec["index"]
        self.search_path = f"/{quote(self.index)}/_search?request_cache=false"
        self.cancelled = False

    # the HTTP side ------------------------------------------------------------------------
    def _search(self, body: dict[str, Any], stats: dict[str, Any]) -> dict[str, Any]:
        if self.cancelled:
            raise RuntimeError("cancelled")
        answer = self.client.request("POST", self.search_path, body, what="search")
        stats["requests"] = stats.get("requests", 0) + 1
        stats["took_ms"] = stats.get("took_ms", 0) + int(answer.get("took", 0))
        if answer.get("timed_out"):
            raise RuntimeError("the search timed out")
        shards = answer.get("_shards", {})
        if shards.get("failed"):
            raise RuntimeError(f"search failed on {shards['failed']} shard(s): "
                               f"{shards.get('failures', [])[:1]}")
        return answer

    def _composite(self, body: dict[str, Any], stats: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Every bucket of the composite aggregation ``pairs`` of body, page by page."""
        body = copy.deepcopy(body)
        composite = body["aggs"]["pairs"]["composite"]
        while True:
            answer = self._search(body, stats)
            aggregation = answer["aggregations"]["pairs"]
            buckets = aggregation["buckets"]
            yield from buckets
            after = aggregation.get("after_key")
            if not buckets or after is None or len(buckets) < _page_size(body):
                return
            composite["after"] = after

    # QuerySession -------------------------------------------------------------------------
    def execute(self, query_number: int, text: str) -> QueryOutcome:
        query = json.loads(text)
        stats: dict[str, Any] = {}
        rows = getattr(self, f"_q{query_number}")(query, stats)
        outcome = QueryOutcome(rows=rows, engine_seconds=stats.get("took_ms", 0) / 1000.0)
        outcome.extra["search_requests"] = stats.get("requests", 0)
        if "truncated" in stats:
            outcome.extra["truncated_groups"] = stats["truncated"]
        return outcome

    def alternatives(self, query_number: int, text: str) -> dict[str, bool]:
        """Q2 also in the usual (approximate) way: terms + cardinality, beside the exact form."""
        return {"cardinality": True} if query_number == 2 and "cardinality" in json.loads(text) \
            else {}

    def execute_alternative(self, name: str, query_number: int, text: str) -> QueryOutcome:
        stats: dict[str, Any] = {}
        rows = self._q2_cardinality(json.loads(text)[name], stats)
        return QueryOutcome(rows=rows, engine_seconds=stats.get("took_ms", 0) / 1000.0)

    def stats_after(self) -> dict[str, Any]:
        with contextlib.suppress(Exception):
            return {"heap_used_bytes": self._heap_used()}
        return {}

    def _heap_used(self) -> int:
        answer = self.client.request(
            "GET", "/_nodes/_local/stats/jvm?filter_path=nodes.*.jvm.mem.heap_used_in_bytes")
        return int(next(iter(answer["nodes"].values()))["jvm"]["mem"]["heap_used_in_bytes"])

    @staticmethod
    def _check_complete(aggregation: dict[str, Any], stats: dict[str, Any]) -> None:
        other = int(aggregation.get("sum_other_doc_count", 0) or 0)
        if other:
            stats["truncated"] = stats.get("truncated", 0) + other
            raise RuntimeError(f"terms aggregation too small: {other} documents in groups "
                               f"beyond its size (raise \"size\" in queries.json)")

    def _q1(self, query: dict[str, Any], stats: dict[str, Any]) -> list[tuple[Any, ...]]:
        answer = self._search(query["request"], stats)
        aggs = answer["aggregations"]
        self._check_complete(aggs["collections"], stats)
        rows: list[tuple[Any, ...]] = [(b["key"], int(b["doc_count"]))
                                       for b in aggs["collections"]["buckets"]]
        missing = int(aggs["no_collection"]["doc_count"])
        if missing:
            rows.append((None, missing))
        rows.sort(key=lambda r: -r[1])
        return rows

    def _q2(self, query: dict[str, Any], stats: dict[str, Any]) -> list[tuple[Any, ...]]:
        counts: dict[Any, int] = defaultdict(int)
        distinct: dict[Any, int] = defaultdict(int)
        for bucket in self._composite(query["request"], stats):
            collection, did = bucket["key"]["collection"], bucket["key"]["did"]
            counts[collection] += int(bucket["doc_count"])
            if did is not None:  # a document without did is counted but has no did to count
                distinct[collection] += 1
        rows = [(c, n, distinct[c]) for c, n in counts.items()]
        rows.sort(key=lambda r: -r[1])
        return rows

    def _q2_cardinality(self, request: dict[str, Any], stats: dict[str, Any]) -> list[list[Any]]:
        answer = self._search(request, stats)
        aggregation = answer["aggregations"]["collections"]
        rows = [[b["key"], int(b["doc_count"]), int(b["users"]["value"])]
                for b in aggregation["buckets"]]
        rows.sort(key=lambda r: -r[1])
        return rows

    def _q3(self, query: dict[str, Any], stats: dict[str, Any]) -> list[tuple[Any, ...]]:
        # No scripting (Elasticsearch's test distribution has no painless; OpenSearch's gets it
        # for updates only, so both answer alike): buckets of one hour of time_us
        # (microseconds), folded into hours of the day here.
        answer = self._search(query["request"], stats)
        aggregation = answer["aggregations"]["collections"]
        self._check_complete(aggregation, stats)
        interval = int(query.get("hour_us", HOUR_US))
        counts: dict[tuple[Any, int], int] = defaultdict(int)
        for bucket in aggregation["buckets"]:
            for hour in bucket["hours"]["buckets"]:
                hour_of_day = (int(hour["key"]) // interval) % 24
                counts[(bucket["key"], hour_of_day)] += int(hour["doc_count"])
        rows = [(c, h, n) for (c, h), n in counts.items() if n]
        rows.sort(key=lambda r: (r[1], r[0]))
        return rows

    def _q4(self, query: dict[str, Any], stats: dict[str, Any]) -> list[tuple[Any, ...]]:
        answer = self._search(query["request"], stats)
        return [(b["key"], _integer(b["first"]["value"]))
                for b in answer["aggregations"]["dids"]["buckets"]]

    def _q5(self, query: dict[str, Any], stats: dict[str, Any]) -> list[tuple[Any, ...]]:
        # No bucket_script without scripting: page through (did -> min, max) and rank here.
        limit = int(query.get("limit", 3))
        spans: list[tuple[int, str]] = []
        for bucket in self._composite(query["request"], stats):
            if bucket["first"]["value"] is None:
                continue
            span = _integer(bucket["last"]["value"]) - _integer(bucket["first"]["value"])
            spans.append((span, bucket["key"]["did"]))
        spans.sort(key=lambda s: (-s[0], s[1]))
        return [(did, span // 1000) for span, did in spans[:limit]]

    def explain(self, query_number: int, text: str) -> str | None:
        """The search profile of the query's (first) request: Lucene queries and collectors."""
        query = json.loads(text)
        body = copy.deepcopy(query["request"])
        body["profile"] = True
        answer = self.client.request("POST", self.search_path, body, what="profile")
        profile = answer.get("profile", {})
        shards = profile.get("shards", [])
        summary = []
        for shard in shards:
            for search in shard.get("searches", []):
                summary.append({"query": [_profile_tree(q) for q in search.get("query", [])],
                                "collector": search.get("collector", [])[:1]})
            summary.append({"aggregations": [_profile_tree(a) for a in shard.get("aggregations", [])]})
        return json.dumps({"request": query["request"], "profile": summary}, indent=1)

    def engine_pids(self) -> list[int]:
        pid = self.spec.get("server_pid")
        if not pid or not self.spec.get("local", True):
            return []
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return []
        return [int(pid)] if b"java" in cmdline else []

    def cancel(self) -> None:
        self.cancelled = True
        self.client.abort()

    def close(self) -> None:
        self.client.close()


def _integer(value: Any) -> int:
    """A min/max of a long field comes as a double; time_us (< 2^53) is exact in it."""
    return int(round(float(value)))


def _profile_tree(node: dict[str, Any]) -> dict[str, Any]:
    out = {"type": node.get("type"), "description": node.get("description"),
           "time_ms": round(int(node.get("time_in_nanos", 0)) / 1e6, 3)}
    children = [_profile_tree(c) for c in node.get("children", [])]
    if children:
        out["children"] = children
    return out


# ----- the system ---------------------------------------------------------------------------


def _substitute(value: Any, settings: dict[str, Any]) -> Any:
    """Replace strings "{name}" in a JSON template by the variant's (typed) setting."""
    if isinstance(value, dict):
        return {k: _substitute(v, settings) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, settings) for v in value]
    if isinstance(value, str) and value.startswith("{") and value.endswith("}") \
            and value[1:-1] in settings:
        return settings[value[1:-1]]
    return value


def _variants() -> list[Variant]:
    return [
        Variant("default", "_source kept, codec default (LZ4)", role="default",
                settings={"source": True, "codec": "default"}),
        Variant("best_compression", "_source kept, codec best_compression", role="best",
                settings={"source": True, "codec": "best_compression"}),
        Variant("no_source", "_source disabled (the document is not kept as such: only its "
                "indexed fields and doc values), codec default", role="alt",
                settings={"source": False, "codec": "default", "retains_structure": False}),
        Variant("no_source_best_compression", "_source disabled, codec best_compression",
                role="alt", settings={"source": False, "codec": "best_compression",
                                      "retains_structure": False}),
    ]


class SearchEngineSystem(System):
    """Elasticsearch or OpenSearch: one index, one shard, the folder's mapping and queries."""

    embedded = False
    runs_by_default = False
    retains_structure = True
    variants: ClassVar[list[Variant]] = _variants()
    # ~5 MB bulk requests (480 B per document): the engines' recommended bulk size.
    load_batch_size = 10_000
    # time_us is mapped as a long: exact microseconds (min/max come back as exact doubles).
    time_precision_us = 1
    approximate_queries: ClassVar[frozenset[int]] = frozenset()

    # What a subclass names.
    binary: ClassVar[str]
    artifact: ClassVar[str]
    config_file: ClassVar[str]
    java_opts_env: ClassVar[str]
    java_home_env: ClassVar[str]
    path_conf_env: ClassVar[str]
    tmpdir_env: ClassVar[str]
    java_versions: ClassVar[tuple[int, ...]] = (17, 21)
    server_settings: ClassVar[dict[str, Any]] = {}
    version_prefix: ClassVar[str] = ""
    distribution: ClassVar[str | None] = None  # version.distribution in GET / (OpenSearch)

    def __init__(self, workdir: Path, variant: Variant, url: str | None = None) -> None:
        super().__init__(workdir, variant, url)
        self.index = f"docbench_bluesky_{variant.name}"
        install = self.install_dir()
        self.node = None if url else (SearchServer(type(self), install, workdir)
                                      if install else None)
        self.can_restart = url is None
        self._client: HttpClient | None = None

    # ----- discovery -------------------------------------------------------------------
    @classmethod
    def opt_dir(cls) -> Path:
        env = os.environ.get("DOCBENCH_OPT")
        return Path(env).resolve() if env else paths.opt_dir()

    @classmethod
    def install_dir(cls) -> Path | None:
        """The newest installed distribution of the supported line in $DOCBENCH_OPT."""
        found = []
        for candidate in cls.opt_dir().glob(f"{cls.artifact}-{cls.version_prefix}*"):
            if (candidate / ".docbench-installed").exists() and (candidate / "bin" / cls.binary).exists():
                with contextlib.suppress(ValueError):
                    version = tuple(int(p) for p in candidate.name.split("-", 1)[1].split("."))
                    found.append((version, candidate))
        return max(found)[1] if found else None

    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        hint = f"docbench setup {cls.name}"
        if url:
            client = HttpClient(url, timeout=10)
            try:
                distribution, number = server_version(client)
            except Exception as error:  # noqa: BLE001
                return Availability(False, reason=f"cannot reach {redact(url)}: "
                                                  f"{' '.join(str(error).split())}")
            finally:
                client.close()
            if distribution != cls.distribution:
                return Availability(False, reason=f"{redact(url)} is not {cls.display_name} "
                                                  f"(distribution {distribution or 'elasticsearch'})")
            return Availability(True, version=f"{cls.display_name} {number}")
        install = cls.install_dir()
        if install is None:
            return Availability(False, reason=f"{cls.display_name} {cls.version_prefix}x is not "
                                              f"installed in {cls.opt_dir()}", install_hint=hint)
        if find_java_home(cls.java_versions) is None:
            return Availability(False, reason=f"no JDK {' or '.join(map(str, cls.java_versions))} "
                                              f"under /usr/lib/jvm",
                                install_hint="apt-get install openjdk-17-jre-headless")
        return Availability(True, version=f"{cls.display_name} {install.name.split('-', 1)[1]}")

    def versions(self) -> dict[str, str]:
        with contextlib.suppress(Exception):
            return {self.name: server_version(self._http())[1]}
        version = self.version()
        return {self.name: version.split()[-1]} if version else {}

    # ----- lifecycle -------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self.url:
            return self.url
        if self.node is None:
            raise RuntimeError(f"{self.display_name} is not installed (run `docbench setup {self.name}`)")
        return self.node.url

    def _http(self) -> HttpClient:
        if self._client is None:
            self._client = HttpClient(self.base_url, timeout=REQUEST_TIMEOUT)
        return self._client

    def start(self) -> None:
        if self.node is not None:
            self.node.start()
        elif not self.url:
            raise RuntimeError(f"{self.display_name} is not installed (run `docbench setup {self.name}`)")
        else:
            self._http().request("GET", "/_cluster/health?wait_for_status=yellow&timeout=30s")

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
        # Wait until the index is open again (its shard recovered from disk).
        with contextlib.suppress(SearchEngineError):
            self._http().request("GET", f"/_cluster/health/{quote(self.index)}"
                                        "?wait_for_status=yellow&timeout=120s")

    def is_alive(self) -> bool:
        if self.node is not None and not self.node.running():
            return False
        try:
            self._http().request("GET", "/_cluster/health?timeout=5s")
            return True
        except Exception:  # noqa: BLE001
            self.release()
            return False

    def release(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # ----- loading -----------------------------------------------------------------------
    def index_definition(self) -> dict[str, Any]:
        template = json.loads((self.folder() / "index.json").read_text())
        template.pop("_comment", None)
        return _substitute(template, dict(self.variant.settings))

    def create(self) -> None:
        """Drop and create docbench's own index (and nothing else)."""
        client = self._http()
        client.request("DELETE", f"/{quote(self.index)}", ok=(200, 404))
        client.request("PUT", f"/{quote(self.index)}", self.index_definition(),
                       what=f"create index {self.index}")

    def loader(self) -> Loader:
        return BulkLoader(self.base_url, self.index)

    def finish_load(self) -> None:
        """Refresh on again, then merge into one segment (like JSONBench) and refresh."""
        client = self._http()
        client.request("PUT", f"/{quote(self.index)}/_settings",
                       {"index": {"refresh_interval": None}})
        client.request("POST", f"/{quote(self.index)}/_refresh")
        merge = HttpClient(self.base_url, timeout=MERGE_TIMEOUT)
        try:
            merge.request("POST", f"/{quote(self.index)}/_forcemerge?max_num_segments=1",
                          what="force merge")
        finally:
            merge.close()
        client.request("POST", f"/{quote(self.index)}/_refresh")

    def native_load(self, files: list[Path]) -> None:
        """What one writes by hand: read the file, POST bodies of N documents to _bulk, no
        checks beyond the HTTP status (refused documents are silently lost)."""
        from docbench.dataset.reader import iter_lines

        client = HttpClient(self.base_url, timeout=BULK_TIMEOUT)
        path = f"/{quote(self.index)}/_bulk?filter_path=errors"
        try:
            for file in files:
                chunk: list[bytes] = []
                for line in iter_lines(file):
                    if not line.strip():
                        continue
                    chunk.append(b'{"index":{}}\n' + line + b"\n")
                    if len(chunk) >= self.load_batch_size:
                        client.request("POST", path, b"".join(chunk), content_type="application/x-ndjson")
                        chunk = []
                if chunk:
                    client.request("POST", path, b"".join(chunk), content_type="application/x-ndjson")
        finally:
            client.close()

    def count(self) -> int:
        client = self._http()
        client.request("POST", f"/{quote(self.index)}/_refresh")
        return int(client.request("GET", f"/{quote(self.index)}/_count")["count"])

    def _index_uuid(self) -> str:
        answer = self._http().request("GET", f"/{quote(self.index)}/_settings/index.uuid")
        return answer[self.index]["settings"]["index"]["uuid"]

    def storage(self) -> StorageSize:
        client = self._http()
        client.request("POST", f"/{quote(self.index)}/_refresh")
        stats = client.request("GET", f"/{quote(self.index)}/_stats/store,docs,segments")
        primaries = stats["indices"][self.index]["primaries"]
        total = int(primaries["store"]["size_in_bytes"])
        detail: dict[str, Any] = {
            "docs": primaries["docs"]["count"], "deleted_docs": primaries["docs"]["deleted"],
            "segments": primaries["segments"]["count"], "codec": self.variant.settings.get("codec"),
            "source": self.variant.settings.get("source"),
        }
        data = index = None
        usage = self._disk_usage()
        if usage is not None:
            stored = usage.pop("stored_fields_bytes")
            data, index = stored, total - stored
            detail.update(usage)
            detail["split_from"] = "_disk_usage API (stored fields = data, the rest = index)"
        elif self.node is not None:
            files = self._lucene_files()
            if files:
                stored = sum(size for ext, size in files.items() if ext in STORED_FIELD_EXTENSIONS)
                data, index = stored, total - stored
                detail["files_by_extension"] = files
                detail["split_from"] = ("Lucene files: stored fields .fdt/.fdx/.fdm (_source, _id) "
                                        "= data, the rest = index")
        on_disk = directory_size(self.node.data_dir) if self.node is not None else None
        return StorageSize(total=total, data=data, index=index, on_disk=on_disk, detail=detail)

    def _disk_usage(self) -> dict[str, Any] | None:
        """Elasticsearch's _disk_usage API: bytes per structure, per field (not in OpenSearch)."""
        try:
            answer = self._http().request(
                "POST", f"/{quote(self.index)}/_disk_usage?run_expensive_tasks=true&flush=true")
        except SearchEngineError:
            return None
        usage = answer.get(self.index)
        if not usage:
            return None
        sums: dict[str, int] = defaultdict(int)
        per_field: dict[str, int] = {}
        for name, field_usage in usage.get("fields", {}).items():
            per_field[name] = int(field_usage.get("total_in_bytes", 0))
            for part in ("inverted_index", "stored_fields", "doc_values", "points", "norms",
                         "term_vectors", "knn_vectors"):
                value = field_usage.get(f"{part}_in_bytes")
                if value is None and isinstance(field_usage.get(part), dict):
                    value = field_usage[part].get("total_in_bytes")
                if value is not None:
                    sums[part] += int(value)
        largest = dict(sorted(per_field.items(), key=lambda kv: -kv[1])[:10])
        return {"stored_fields_bytes": sums.get("stored_fields", 0),
                "disk_usage": {f"{k}_bytes": v for k, v in sums.items()},
                "largest_fields": largest}

    def _lucene_files(self) -> dict[str, int]:
        assert self.node is not None
        try:
            uuid = self._index_uuid()
        except Exception:  # noqa: BLE001
            return {}
        sizes: dict[str, int] = defaultdict(int)
        for shard in self.node.data_dir.rglob(f"indices/{uuid}/*/index"):
            for entry in shard.iterdir():
                if not entry.is_file():
                    continue
                if entry.suffix == ".cfs":
                    # A compound file packs a small segment's files: count its parts.
                    parts = compound_file_entries(entry.with_suffix(".cfe"))
                    if parts:
                        for ext, length in parts.items():
                            sizes[ext] += length
                        continue
                sizes[entry.suffix or entry.name] += entry.stat().st_blocks * 512
        return dict(sizes)


    # ----- queries -----------------------------------------------------------------------
    def queries(self) -> list[str]:
        document = json.loads((self.folder() / "queries.json").read_text())
        return [json.dumps(document[f"q{n}"]) for n in range(1, 6)]

    def session_spec(self) -> dict[str, Any]:
        local = True
        if self.url:
            local = (urlsplit(self.url if "://" in self.url else f"http://{self.url}").hostname
                     in {"localhost", "127.0.0.1", "::1"})
        pid = self.node.server_pid if self.node is not None else None
        if pid is None and self.url and local:
            with contextlib.suppress(Exception):
                info = self._http().request("GET", "/_nodes/_local/process?filter_path=nodes.*.process.id")
                pid = int(next(iter(info["nodes"].values()))["process"]["id"])
        return {"url": self.base_url, "index": self.index, "server_pid": pid, "local": local}

    @classmethod
    def open_session(cls, spec: dict[str, Any]) -> QuerySession:
        return SearchSession(spec)

    def check_plan(self, query_number: int, plan: str | None) -> str | None:
        """Q2-Q5 filter on the indexed keyword paths: the Lucene query must not be match-all."""
        if query_number == 1:
            return None
        if not plan:
            return f"Q{query_number}: no plan to check"
        try:
            profile = json.loads(plan)["profile"]
        except (ValueError, KeyError, TypeError):
            return f"Q{query_number}: the plan is not a search profile"
        types = [q.get("type") for part in profile for q in part.get("query", [])]
        if not types:
            return f"Q{query_number}: the profile shows no query"
        if all(t in {"MatchAllDocsQuery", "ConstantScoreQuery"} for t in types) and \
                "TermQuery" not in plan and "TermInSetQuery" not in plan:
            return f"Q{query_number}: the search reads every document (query types {types})"
        return None


def compound_file_entries(cfe: Path) -> dict[str, int] | None:
    """Bytes per file extension inside a Lucene 9 compound file, read from its entries
    table (``.cfe``: codec header, vint count, then name, offset, length per file); None
    when it cannot be read."""
    try:
        data = cfe.read_bytes()
        pos = 4  # magic (big-endian int)

        def vint() -> int:
            nonlocal pos
            value = shift = 0
            while True:
                byte = data[pos]
                pos += 1
                value |= (byte & 0x7F) << shift
                if byte < 0x80:
                    return value
                shift += 7

        def string() -> str:
            nonlocal pos
            length = vint()
            pos += length
            return data[pos - length:pos].decode()

        string()  # codec name
        pos += 4 + 16  # version (big-endian int), segment id
        pos += 1 + data[pos]  # suffix
        sizes: dict[str, int] = defaultdict(int)
        for _ in range(vint()):
            name = string()
            pos += 8  # offset (little-endian long)
            length = int.from_bytes(data[pos:pos + 8], "little")
            pos += 8
            sizes[os.path.splitext(name)[1] or name] += length
        return dict(sizes)
    except (OSError, IndexError, UnicodeDecodeError):
        return None


# ----- soft deletes: what a merge may drop -------------------------------------------------
# A shard keeps every operation its retention leases still retain (deleted or updated
# documents, and _recovery_source without _source) until the leases move past them at a
# background sync (every 30 s); only a merge after that drops them. Used by the updates and
# storage workloads before the merge that measures reclaimed space.

def retention(client: HttpClient, index: str) -> tuple[int, int | None]:
    """(max seq_no of the index's shard copies, lowest seq_no their retention leases retain)."""
    answer = client.request("GET", f"/{quote(index)}/_stats/docs?level=shards")
    copies = [shard for group in answer["indices"][index]["shards"].values() for shard in group]
    leases = [int(lease["retaining_seq_no"]) for shard in copies
              for lease in (shard.get("retention_leases") or {}).get("leases") or []]
    return max(int(c["seq_no"]["max_seq_no"]) for c in copies), min(leases) if leases else None


def wait_for_retention_leases(client: HttpClient, index: str, timeout: float) -> float | None:
    """Seconds until no retention lease retains an operation of the index any more (None:
    still retained after ``timeout`` seconds)."""
    started = time.monotonic()
    while True:
        max_seq_no, retained = retention(client, index)
        waited = time.monotonic() - started
        if retained is None or retained > max_seq_no:
            return waited
        if waited > timeout:
            return None
        time.sleep(0.5)
