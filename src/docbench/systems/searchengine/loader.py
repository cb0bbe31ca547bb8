"""``_bulk`` loading, all or nothing per batch (the analytics and storage workloads' loader)."""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable
from urllib.parse import quote

import orjson

from docbench.contracts.analytics import Loader
from docbench.contracts.common import BatchRejected
from docbench.core.jsontypes import JsonObject, as_array, as_str
from docbench.systems.searchengine.http import NDJSON, HttpClient, SearchEngineError, error_text, first_value

# Bulk item statuses that mean "try again later", not "this document is refused".
RETRYABLE_STATUSES = {429, 500, 502, 503, 504}
BULK_RETRIES = 5
_INDEX_ACTION = b'{"index":{}}\n'
_BULK_QUERY = "?refresh=false&filter_path=errors,items.*._id,items.*.status,items.*.error"


def bulk_body(lines: list[bytes]) -> bytes:
    """The NDJSON body of a _bulk request indexing these raw lines as documents."""
    return _INDEX_ACTION + (b"\n" + _INDEX_ACTION).join(lines) + b"\n"


class BulkLoader(Loader):
    """``_bulk`` with auto-generated ids (explicit ones on a cluster), one request per batch,
    on ``client`` (a connection with the bulk timeout, which the loader owns and closes).

    _bulk is not transactional: when some items are refused, the items of the same request
    that were indexed are deleted again (by the ids the answer returns) before
    :class:`BatchRejected` is raised, so a batch is loaded entirely or not at all. Items
    refused for load reasons (429 queue full, 503) make the whole batch be retried.
    """

    def __init__(
        self,
        client: HttpClient,
        index: str,
        explicit_ids: bool = False,
        events: Callable[[list[bytes]], list[bytes]] | None = None,
    ) -> None:
        self.client = client
        # What is indexed for each raw line, when not the line itself (one document per line,
        # in order: JSONBench's Filebeat events, searchengine/filebeat.py).
        self.events = events
        self.path = f"/{quote(index)}/_bulk{_BULK_QUERY}"
        self.index = index
        # Explicit ids (this loader's token, then a sequence number): a batch sent again to
        # another node after its connection broke overwrites what the first try indexed
        # instead of adding it twice. Auto ids (faster: no lookup) on a single node.
        self.id_prefix = f"{os.getpid():x}{secrets.token_hex(4)}-" if explicit_ids else None
        self.sequence = 0

    def _body(self, lines: list[bytes]) -> bytes:
        if self.events is not None:
            lines = self.events(lines)
        if self.id_prefix is None:
            return bulk_body(lines)
        first = self.sequence
        self.sequence += len(lines)
        prefix = self.id_prefix.encode()
        return b"".join(
            b'{"index":{"_id":"' + prefix + str(first + i).encode() + b'"}}\n' + line + b"\n"
            for i, line in enumerate(lines)
        )

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        body = self._body(lines)
        for attempt in range(BULK_RETRIES):
            answer = self._send(body)
            if not answer.get("errors"):
                return
            items = [first_value(item, "bulk item") for item in as_array(answer["items"], "items")]
            kept = [as_str(item["_id"], "_id") for item in items if "error" not in item and item.get("_id")]
            failed = [item for item in items if "error" in item]
            self._delete(kept)
            content = [item for item in failed if item.get("status") not in RETRYABLE_STATUSES]
            if content:
                first = content[0]
                position = items.index(first) + 1
                named = {
                    i: error_text({"error": item["error"]})
                    for i, item in enumerate(items)
                    if "error" in item and item.get("status") not in RETRYABLE_STATUSES
                }
                raise BatchRejected(
                    f"{error_text({'error': first['error']})} "
                    f"[document {position} of {len(lines)}, "
                    f"{len(content)} refused]",
                    refused=named,
                )
            time.sleep(min(30.0, 0.5 * 2**attempt))
        raise RuntimeError(
            f"_bulk into {self.index}: the engine kept rejecting the batch "
            f"as overloaded after {BULK_RETRIES} tries"
        )

    def _send(self, body: bytes) -> JsonObject:
        try:
            return self.client.request_object("POST", self.path, body, content_type=NDJSON, what="_bulk")
        except SearchEngineError as error:
            # A whole request refused for its content (the engine could not read it at all).
            if error.status == 400:
                raise BatchRejected(str(error)) from error
            raise

    def _delete(self, ids: list[str]) -> None:
        if not ids:
            return
        body = b"".join(b'{"delete":{"_id":' + orjson.dumps(i) + b"}}\n" for i in ids)
        answer = self.client.request_object(
            "POST",
            f"/{quote(self.index)}/_bulk?refresh=false&filter_path=errors,items.*.error",
            body,
            content_type=NDJSON,
            what="_bulk delete",
        )
        if answer.get("errors"):
            raise RuntimeError(
                f"could not delete the indexed part of a refused batch from "
                f"{self.index}: {as_array(answer.get('items', []), 'items')[:1]}"
            )

    def close(self) -> None:
        self.client.close()
