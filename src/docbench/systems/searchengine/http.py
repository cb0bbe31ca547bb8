"""HTTP to a node or a cluster: keep-alive HTTP/1.1 connections (standard library only) that
send bytes and decode the JSON answers with orjson, spread requests over the nodes and fail over
when one does not answer; the engines' error answers as an exception, and the server's
version."""

from __future__ import annotations

import base64
import contextlib
import http.client
import itertools
import json
import select
import socket
import time
from collections.abc import Sequence
from typing import TypedDict
from urllib.parse import unquote, urlsplit

import orjson

from docbench.core.jsontypes import JsonArray, JsonObject, JsonValue, as_array, as_object

# Socket timeouts (seconds): any request, one _bulk batch, the force-merge of a whole index.
REQUEST_TIMEOUT = 600.0
BULK_TIMEOUT = 1800.0
MERGE_TIMEOUT = 6 * 3600.0
NDJSON = "application/x-ndjson"


class Failover(TypedDict):
    """A request sent again to another node because its node did not answer."""

    at: float
    node: str
    request: str
    error: str
    sent_to: str


def member(value: JsonValue, *keys: str) -> JsonValue:
    """``value[k1][k2]...`` of a JSON answer: each step must be an object (a TypeError naming
    the path otherwise), a missing key is a KeyError as with plain subscripts."""
    for depth, key in enumerate(keys):
        value = as_object(value, ".".join(keys[:depth]) or "answer")[key]
    return value


def member_object(value: JsonValue, *keys: str) -> JsonObject:
    """:func:`member`, which must be an object."""
    return as_object(member(value, *keys), ".".join(keys) or "answer")


def member_array(value: JsonValue, *keys: str) -> JsonArray:
    """:func:`member`, which must be an array."""
    return as_array(member(value, *keys), ".".join(keys) or "answer")


def to_int(value: JsonValue, what: str = "value") -> int:
    """``int(value)`` of a JSON scalar, as int() reads it (a number, a string of digits); a
    TypeError for null, an object or an array, as int() raises."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"{what}: expected a number, got {type(value).__name__ if value is not None else 'null'}")


def to_float(value: JsonValue, what: str = "value") -> float:
    """``float(value)`` of a JSON scalar, as float() reads it."""
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"{what}: expected a number, got {type(value).__name__ if value is not None else 'null'}")


def objects(value: JsonValue, what: str = "answer") -> list[JsonObject]:
    """An array of objects (a list of buckets, hits, bulk items...)."""
    return [as_object(item, what) for item in as_array(value, what)]


def first_value(value: JsonValue, what: str = "answer") -> JsonObject:
    """The value of an object's first key, itself an object (one node's entry under
    ``nodes``, a bulk item's action)."""
    return as_object(next(iter(as_object(value, what).values())), what)


class SearchEngineError(RuntimeError):
    """An HTTP error answer of the engine (status and its JSON error)."""

    def __init__(self, status: int, body: JsonValue, what: str) -> None:
        self.status = status
        self.body = body
        super().__init__(f"{what}: HTTP {status}: {error_text(body)}")


def error_text(body: JsonValue) -> str:
    """One line saying what an error answer (or a bulk item's ``{"error": ...}``) says."""
    if isinstance(body, dict) and "error" in body:
        error = body["error"]
        if isinstance(error, dict):
            cause = as_object(error.get("caused_by") or {}, "caused_by")
            text = f"{error.get('type')}: {error.get('reason')}"
            if cause:
                text += f" (caused by {cause.get('type')}: {cause.get('reason')})"
            return text
        return str(error)
    text = body if isinstance(body, str) else json.dumps(body)[:500]
    return " ".join(str(text).split())[:500]


def split_urls(urls: str | Sequence[str]) -> list[str]:
    """Node URLs from ``http://h1:9200,http://h2:9200`` (or a list)."""
    parts = urls.split(",") if isinstance(urls, str) else list(urls)
    found = [part.strip() for part in parts if part.strip()]
    if not found:
        raise ValueError("no node URL given")
    return found


class Endpoint:
    """One node's address: scheme, host, port, path prefix and its Basic auth header."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        self.scheme = parts.scheme or "http"
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if self.scheme == "https" else 9200)
        self.prefix = parts.path.rstrip("/")
        self.auth: str | None = None
        if parts.username is not None:
            # URLs carry user and password percent-encoded (a '@' or ':' in a password).
            token = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            self.auth = "Basic " + base64.b64encode(token).decode()

    @property
    def name(self) -> str:
        """host:port (what a failover event names: never the password)."""
        return f"{self.host}:{self.port}"


# Errors after which a request goes to the next node: the node refused the connection, closed
# it, or reset it (a node that crashed or was killed).
NODE_DOWN_ERRORS = (
    ConnectionRefusedError,
    ConnectionResetError,
    BrokenPipeError,
    http.client.RemoteDisconnected,
    http.client.CannotSendRequest,
    ConnectionAbortedError,
)
_rotation = itertools.count()
# A node that did not answer is left out of the rotation this long before it is tried again.
DOWN_SECONDS = 30.0


class HttpClient:
    """Keep-alive connections to the nodes of one cluster (one URL, or several). Requests
    go round-robin over the nodes; a node that does not answer (connection refused, closed or
    reset) is left for the next one and the request is sent again there, recorded in
    :attr:`failovers`. Not thread-safe except :meth:`abort`.

    A request resent after its connection broke may have been executed by the dead node
    already: docbench's writes on a cluster are idempotent (bulk with explicit ids)."""

    def __init__(self, base_url: str | Sequence[str], timeout: float | None = REQUEST_TIMEOUT) -> None:
        # A long _update_by_query on OpenSearch answers with more than 100 header lines (one
        # `Warning` per batch of the painless script); http.client refuses over 100 by default.
        # _MAXHEADERS is private (typeshed leaves it out, hence the ignore) but the only knob.
        http.client._MAXHEADERS = max(http.client._MAXHEADERS, 100_000)  # type: ignore[attr-defined]
        self.endpoints = [Endpoint(url) for url in split_urls(base_url)]
        self.timeout = timeout
        # Clients of one process start on different nodes, so that sessions spread.
        self._current = next(_rotation) % len(self.endpoints)
        self._conns: dict[int, http.client.HTTPConnection] = {}
        self.failovers: list[Failover] = []
        self._down_until: dict[int, float] = {}

    # The node the next request goes to (one URL: always that one).
    @property
    def endpoint(self) -> Endpoint:
        return self.endpoints[self._current]

    def _connection(self) -> http.client.HTTPConnection:
        conn = self._conns.get(self._current)
        if conn is None:
            endpoint = self.endpoint
            cls = http.client.HTTPSConnection if endpoint.scheme == "https" else http.client.HTTPConnection
            conn = self._conns[self._current] = cls(endpoint.host, endpoint.port, timeout=self.timeout)
        return conn

    def _drop_connection(self) -> None:
        conn = self._conns.pop(self._current, None)
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _skip_down_nodes(self) -> None:
        """Move past nodes that failed in the last DOWN_SECONDS (when another is left)."""
        now = time.monotonic()
        for _ in range(len(self.endpoints)):
            if self._down_until.get(self._current, 0.0) <= now:
                return
            self._current = (self._current + 1) % len(self.endpoints)

    def _exchange(
        self, method: str, path: str, body: bytes | bytearray | None, content_type: str | None
    ) -> tuple[int, bytes]:
        """One request to the current node; a keep-alive connection the server closed
        meanwhile is reopened once."""
        endpoint = self.endpoint
        headers = {"Content-Type": content_type or "application/json", "Accept": "application/json"}
        if endpoint.auth:
            headers["Authorization"] = endpoint.auth
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, endpoint.prefix + path, body=body, headers=headers)
                response = conn.getresponse()
                return response.status, response.read()
            except (
                http.client.RemoteDisconnected,
                BrokenPipeError,
                ConnectionResetError,
                http.client.CannotSendRequest,
            ):
                self._drop_connection()
                if attempt == 2:
                    raise
            except Exception:
                self._drop_connection()
                raise
        raise AssertionError("unreachable")

    def request(
        self,
        method: str,
        path: str,
        body: bytes | JsonObject | JsonArray | None = None,
        *,
        ok: tuple[int, ...] = (200, 201),
        content_type: str | None = None,
        what: str | None = None,
    ) -> JsonValue:
        """Send one request and return its decoded JSON answer (raises on other statuses):
        None for an empty answer, the text of one that is not JSON."""
        if body is not None and not isinstance(body, bytes | bytearray):
            body = orjson.dumps(body)
        tried = 0
        self._skip_down_nodes()
        while True:
            try:
                status, data = self._exchange(method, path, body, content_type)
                break
            except NODE_DOWN_ERRORS as error:
                tried += 1
                if len(self.endpoints) == 1 or tried >= len(self.endpoints):
                    raise
                failed = self.endpoint.name
                self._down_until[self._current] = time.monotonic() + DOWN_SECONDS
                self._current = (self._current + 1) % len(self.endpoints)
                self.failovers.append(
                    {
                        "at": time.time(),
                        "node": failed,
                        "request": f"{method} {path}",
                        "error": type(error).__name__,
                        "sent_to": self.endpoint.name,
                    }
                )
        if len(self.endpoints) > 1:
            self._current = (self._current + 1) % len(self.endpoints)
        decoded: JsonValue
        try:
            decoded = orjson.loads(data) if data else None
        except orjson.JSONDecodeError:
            decoded = data.decode("utf-8", "replace")
        if status not in ok:
            raise SearchEngineError(status, decoded, what or f"{method} {path}")
        return decoded

    def request_object(
        self,
        method: str,
        path: str,
        body: bytes | JsonObject | JsonArray | None = None,
        *,
        ok: tuple[int, ...] = (200, 201),
        content_type: str | None = None,
        what: str | None = None,
    ) -> JsonObject:
        """:meth:`request` of an answer that is a JSON object (a TypeError otherwise)."""
        answer = self.request(method, path, body, ok=ok, content_type=content_type, what=what)
        return as_object(answer, what or f"the answer to {method} {path}")

    def request_raw(self, method: str, path: str, *, ok: tuple[int, ...] = (200,)) -> bytes:
        """One request; the answer's bytes as the engine sent them (a _source in it is the
        text the engine stored, which decoding would re-type: numbers, duplicate keys)."""
        status, data = self._exchange(method, path, None, None)
        if status not in ok:
            raise SearchEngineError(status, data.decode("utf-8", "replace"), f"{method} {path}")
        return data

    def abort(self) -> None:
        """Shut the sockets down from another thread: the engine cancels the search."""
        for conn in list(self._conns.values()):
            if conn.sock is not None:
                with contextlib.suppress(OSError):
                    conn.sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        for index in list(self._conns):
            conn = self._conns.pop(index, None)
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()


def server_version(client: HttpClient) -> tuple[str | None, str]:
    """(distribution, version number) of the node: ``GET /`` (OpenSearch says "opensearch"),
    or the nodes info API where ``GET /`` is missing (Elasticsearch 8.19's integ-test-zip has
    no rest-root module; OpenSearch always serves ``GET /``)."""
    try:
        version = member_object(client.request("GET", "/"), "version")
        distribution = version.get("distribution")
        return (None if distribution is None else str(distribution)), str(version["number"])
    except SearchEngineError as error:
        if error.status not in (400, 404, 405):
            raise
    info = client.request("GET", "/_nodes/_local?filter_path=nodes.*.version")
    return None, str(first_value(member(info, "nodes"), "nodes")["version"])


def node_process_id(client: HttpClient) -> int:
    """The PID the node reports for itself (the JVM that serves requests)."""
    info = client.request("GET", "/_nodes/_local/process?filter_path=nodes.*.process.id")
    return to_int(member(first_value(member(info, "nodes"), "nodes"), "process", "id"), "process.id")


class NonBlockingHttp:
    """One HTTP/1.1 exchange at a time on a non-blocking keep-alive socket (plain http only):
    :meth:`send` writes the request, :meth:`receive` reads what has arrived and returns
    ``(status, body)`` once the answer is whole (Content-Length or chunked). The throughput
    driver multiplexes many of these on one thread."""

    def __init__(self, base_url: str, node: int = 0) -> None:
        # Several node URLs: this connection goes to the node-th (modulo), so that the
        # driver's clients spread over the cluster.
        urls = split_urls(base_url)
        base_url = urls[node % len(urls)]
        parts = urlsplit(base_url if "://" in base_url else f"http://{base_url}")
        if parts.scheme not in ("", "http"):
            raise ValueError("non-blocking HTTP is plain http only")
        host, port = parts.hostname or "127.0.0.1", parts.port or 9200
        self.prefix = parts.path.rstrip("/").encode()
        head = f"Host: {host}:{port}\r\nAccept: application/json\r\n"
        if parts.username is not None:
            token = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            head += "Authorization: Basic " + base64.b64encode(token).decode() + "\r\n"
        self.head = head.encode()
        self.sock = socket.create_connection((host, port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.buffer = bytearray()
        self.closed = False

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, method: bytes, path: bytes, body: bytes | None = None) -> None:
        request = method + b" " + self.prefix + path + b" HTTP/1.1\r\n" + self.head
        if body is not None:
            request += (
                b"Content-Type: application/json\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
        else:
            request += b"\r\n"
        self.buffer.clear()
        view = memoryview(request)
        while view:
            try:
                view = view[self.sock.send(view) :]
            except BlockingIOError:
                select.select([], [self.sock], [], 1.0)

    def receive(self) -> tuple[int, bytes] | None:
        try:
            data = self.sock.recv(262_144)
        except BlockingIOError:
            return None
        if not data:
            self.closed = True
            raise ConnectionError("the node closed the connection")
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = bytes(self.buffer[:end]).lower()
        status = int(head[9:12])
        body = self.buffer[end + 4 :]
        marker = head.find(b"content-length:")
        if marker >= 0:
            length = int(
                head[
                    marker + 15 : head.find(b"\r\n", marker) if head.find(b"\r\n", marker) > 0 else len(head)
                ]
            )
            return (status, bytes(body[:length])) if len(body) >= length else None
        if b"transfer-encoding: chunked" in head:
            return (status, _dechunk(bytes(body))) if body.endswith(b"0\r\n\r\n") else None
        raise ConnectionError("an answer without Content-Length or chunked encoding")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def _dechunk(body: bytes) -> bytes:
    out, position = bytearray(), 0
    while True:
        line_end = body.index(b"\r\n", position)
        size = int(body[position:line_end].split(b";")[0], 16)
        if size == 0:
            return bytes(out)
        out += body[line_end + 2 : line_end + 2 + size]
        position = line_end + 2 + size + 2
