"""The VictoriaLogs engine: docbench's own managed server, or the user's server by URL.

* **managed** (default): the ``victoria-logs`` binary ``docbench setup victorialogs`` built
  from the Go module proxy, on 127.0.0.1 and a free port, its data in the work directory
  (``server.py``);
* **URL** (``--victorialogs-url http://host:9428``): the user's server. docbench keeps its
  documents in a tenant of its own (``AccountID``/``ProjectID`` headers: :data:`TENANT`) and
  touches no other; it cannot restart that server. Emptying its tenant there needs the server's
  delete API (``-delete.enable``).

Everything is HTTP: ``/insert/jsonline`` to load, ``/select/logsql/query`` to query,
``/internal/force_flush`` to make what was sent searchable, ``/metrics`` for counters and sizes.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import re
import time
from pathlib import Path
from urllib.parse import unquote, urlencode, urlsplit

import orjson

from docbench.contracts.common import Availability, NotSupported, command_version
from docbench.contracts.engine import CacheLimits, Engine
from docbench.core.jsontypes import as_object, as_str
from docbench.core.redact import redact_text, redact_url
from docbench.systems.victorialogs import server as vlserver

INSTALL_HINT = (
    "docbench setup victorialogs  (VictoriaLogs v1.52.1 from the Go module proxy; needs go >= 1.25)"
)
# docbench's tenant on any VictoriaLogs server: its documents never mix with a user's.
TENANT = {"AccountID": "4022", "ProjectID": "1"}
NDJSON = "application/x-ndjson"


class VictoriaLogsError(RuntimeError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _row(decoded: object) -> dict[str, str]:
    """One row of a query's answer: an object of strings (a TypeError otherwise)."""
    return {name: as_str(value, name) for name, value in as_object(decoded, "row").items()}


class VLClient:
    """One keep-alive HTTP connection to a VictoriaLogs server (``http://host:port``, Basic
    auth from the URL's user and password), with docbench's tenant on every request."""

    def __init__(self, url: str, timeout: float | None = 600.0) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http:// URL of a VictoriaLogs server: {redact_url(url)}")
        self.url = url
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 9428)
        self.prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self.headers = dict(TENANT)
        if parts.username is not None:
            token = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            self.headers["Authorization"] = "Basic " + base64.b64encode(token).decode()
        self.conn: http.client.HTTPConnection | None = None
        # Headers of the last answer (Vl-Request-Duration-Seconds...).
        self.last_headers: dict[str, str] = {}

    def _connection(self) -> http.client.HTTPConnection:
        if self.conn is None:
            kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            self.conn = kind(self.host, self.port, timeout=self.timeout)
        return self.conn

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        content_type: str | None = None,
        tenant: bool = True,
        idempotent: bool = False,
    ) -> bytes:
        """One request; sent again once on a fresh connection when the server closed the kept
        one (it closes it after refusing a request whose body it did not read to the end), if
        sending it twice changes nothing: a GET, a query, a flush; never an insert."""
        headers = (
            dict(self.headers) if tenant else {k: v for k, v in self.headers.items() if k == "Authorization"}
        )
        if content_type:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, self.prefix + path, body=body, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
            except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine):
                self.close()
                if attempt == 2 or not (method == "GET" or idempotent):
                    raise
                continue
            self.last_headers = {k.lower(): v for k, v in answer.getheaders()}
            if answer.status >= 400:
                text = " ".join(data.decode("utf-8", "replace").split())[:500]
                raise VictoriaLogsError(
                    answer.status, f"VictoriaLogs {method} {path.split('?')[0]}: HTTP {answer.status}: {text}"
                )
            return data
        raise AssertionError("unreachable")

    def query(self, logsql: str, timeout: float | None = None) -> list[dict[str, str]]:
        """The rows of a LogsQL query (one JSON object per line; every value a string: that is
        how VictoriaLogs keeps and returns fields, stats results too)."""
        form = {"query": logsql}
        if timeout:
            form["timeout"] = f"{max(1, int(timeout))}s"
        data = self.request(
            "POST",
            "/select/logsql/query",
            urlencode(form).encode(),
            "application/x-www-form-urlencoded",
            idempotent=True,
        )
        return [_row(orjson.loads(line)) for line in data.splitlines() if line.strip()]

    def metrics(self) -> dict[str, float]:
        """The server's /metrics: ``name{labels}`` -> value."""
        text = self.request("GET", "/metrics", tenant=False).decode("utf-8", "replace")
        found: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                with contextlib.suppress(ValueError):
                    found[name] = float(value)
        return found

    def force_flush(self) -> None:
        """Make everything sent so far searchable."""
        self.request("POST", "/internal/force_flush", b"", tenant=False, idempotent=True)

    def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):
                self.conn.close()
            self.conn = None


def version_of(text: str | None) -> str | None:
    match = re.search(r"v\d+\.\d+\.\d+", text or "")
    return match.group(0) if match else None


class VictoriaLogsEngine(Engine, CacheLimits):
    name = "victorialogs"
    display_name = "VictoriaLogs"
    embedded = False
    runs_by_default = False
    url_example = "http://user:password@host:9428"
    install_hint = INSTALL_HINT
    notes = (
        "VictoriaLogs (single node, v1.52.1 built from the Go module proxy): a log store; "
        "each event is flattened into fields (nested keys joined with '.', arrays, numbers "
        "and booleans stored as strings, empty values dropped), time_us becomes _time "
        "(ns), kind/commit.operation/commit.collection are the stream fields; LogsQL over "
        "HTTP. No transactions (a file is not one unit), no query plan, JSON nested "
        "deeper than 300 levels is refused; a document without an integer time_us gets "
        "another _time (see README)."
    )

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        self.server: vlserver.VictoriaLogsServer | None = (
            None if url else vlserver.VictoriaLogsServer(workdir)
        )
        self._client: VLClient | None = None

    # ----- discovery ---------------------------------------------------------------------
    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        if url:
            try:
                client = VLClient(url, timeout=10)
                try:
                    version = _server_version(client)
                finally:
                    client.close()
                return Availability(True, version=f"VictoriaLogs {version or '(version unknown)'}")
            except Exception as error:  # noqa: BLE001
                message = redact_text(" ".join(str(error).split()), url)
                return Availability(False, reason=f"cannot reach {redact_url(url)}: {message}")
        binary = vlserver.find_binary()
        if binary is None:
            return Availability(False, reason="victoria-logs not built", install_hint=INSTALL_HINT)
        version = version_of(command_version([str(binary), "-version"]))
        if version is None:
            return Availability(False, reason=f"{binary} does not run", install_hint=INSTALL_HINT)
        return Availability(True, version=f"VictoriaLogs {version}")

    def running_version(self) -> str | None:
        version = _server_version(self.client())
        return f"VictoriaLogs {version}" if version else None

    # ----- connections -------------------------------------------------------------------
    def base_url(self) -> str:
        if self.url:
            return self.url
        assert self.server is not None
        return self.server.url

    def served_url(self) -> str | None:
        return self.url or (self.server.url if self.server is not None and self.server.port else None)

    def connect(self) -> VLClient:
        return VLClient(self.base_url())

    def client(self) -> VLClient:
        """This process's shared connection (closed by :meth:`release`)."""
        if self._client is None:
            self._client = self.connect()
        return self._client

    def release(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # ----- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        if self.server is not None:
            self.server.start()
        else:
            self.client().request("GET", "/health", tenant=False)

    def stop(self) -> None:
        self.release()
        if self.server is not None:
            self.server.stop()

    def restart(self) -> None:
        if not self.can_restart or self.server is None:
            return
        self.release()
        self.server.stop()
        self.server.start()

    def is_alive(self) -> bool:
        if self.server is not None and not self.server.running():
            return False
        try:
            client = self.connect()
            try:
                return client.request("GET", "/health", tenant=False).strip() == b"OK"
            finally:
                client.close()
        except Exception:  # noqa: BLE001
            return False

    def server_pids(self) -> list[int]:
        pid = self.server.pid if self.server is not None else None
        return [pid] if pid else []

    def limit_cache(self, cache_bytes: int) -> str:
        raise NotSupported("VictoriaLogs sizes its caches from -memory.allowedPercent at start")

    # ----- docbench's tenant ---------------------------------------------------------------
    def count(self) -> int:
        rows = self.client().query("* | count() rows")
        return int(rows[0]["rows"]) if rows else 0

    def empty(self) -> None:
        """Remove every document of docbench's tenant: on docbench's own server, the data
        directory goes (a restart); by URL, through the server's delete API."""
        if self.server is not None:
            self.release()
            self.server.wipe()
            return
        client = self.client()
        client.force_flush()
        if self.count() == 0:
            return
        try:
            client.request(
                "POST",
                "/delete/run_task",
                urlencode({"filter": "*"}).encode(),
                "application/x-www-form-urlencoded",
            )
        except VictoriaLogsError as error:
            raise RuntimeError(
                f"docbench's tenant {TENANT} on {redact_url(self.base_url())} holds "
                "documents and the server's delete API refused to remove them "
                f"({error}); start it with -delete.enable or delete them"
            ) from error
        deadline = time.monotonic() + 600
        while self.count() and time.monotonic() < deadline:
            time.sleep(0.5)
        if self.count():
            raise RuntimeError("VictoriaLogs did not delete docbench's tenant in 10 minutes")


def _server_version(client: VLClient) -> str | None:
    """The running server's version, from its /metrics (``vm_app_version{version=...}``)."""
    text = client.request("GET", "/metrics", tenant=False).decode("utf-8", "replace")
    match = re.search(r'^vm_app_version\{[^}]*version="([^"]*)"', text, re.M)
    return version_of(match.group(1)) if match else None


ENGINE = VictoriaLogsEngine

__all__ = ["ENGINE", "TENANT", "VLClient", "VictoriaLogsEngine", "VictoriaLogsError"]
