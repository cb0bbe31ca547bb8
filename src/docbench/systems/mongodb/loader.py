"""MongoDB's batch loader (the analytics adapter's ``loader()``, also the storage workload's):
``insert_many`` of each batch, with the checks that make a refusal name its document."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from docbench.contracts.analytics import Loader
from docbench.contracts.common import BatchRejected
from docbench.systems.mongodb.engine import DATABASE, mongo_client

# Server error codes that mean "this content cannot be stored" when a whole insert command fails
# (per-document refusals come as BulkWriteError writeErrors, which are always content errors):
# BadValue, Overflow, InvalidBSON, DollarPrefixedFieldName, EmptyFieldName, DottedFieldName,
# BSONObjectTooLarge, InvalidLength, TypeMismatch, FailedToParse.
CONTENT_ERROR_CODES = frozenset({2, 9, 14, 15, 16, 22, 52, 56, 57, 10334, 17280})


# A run of 19+ digits may be an integer literal beyond int64: orjson silently turns integers
# beyond 64 bits into floats, so lines with such runs are checked again exactly (rare: Bluesky
# ids are base32 and time_us has 16 digits). Found by mapping digits to '0' and the rest to ' '
# (newlines kept) and searching 19 '0's: ~15x faster than a regular expression.
_DIGIT_MAP = bytes(0x30 if 0x30 <= i <= 0x39 else (0x0A if i == 0x0A else 0x20) for i in range(256))


_DIGIT_RUN = b"0" * 19


INT64_MIN = -(2**63)


INT64_MAX = 2**63 - 1


def _checked_int(text: str) -> int:
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"integer {text[:30]} is beyond BSON's 64-bit integers")
    return value


def _check_big_ints(line: bytes) -> None:
    """Refuse a line whose integer literals do not fit BSON's int64 (orjson would make them
    floats); called only for lines with long digit runs."""
    try:
        json.loads(line, parse_int=_checked_int)
    except ValueError as error:
        raise BatchRejected(str(error)) from error
    except RecursionError as error:
        raise BatchRejected("document too deeply nested") from error


def _long_digit_lines(joined: bytes) -> set[int]:
    """Indexes of the newline-separated lines of `joined` with a run of 19 or more digits."""
    mapped = joined.translate(_DIGIT_MAP)
    lines: set[int] = set()
    line_index, offset = 0, 0
    position = mapped.find(_DIGIT_RUN)
    while position >= 0:
        line_index += mapped.count(b"\n", offset, position)
        offset = position
        lines.add(line_index)
        position = mapped.find(_DIGIT_RUN, position + len(_DIGIT_RUN))
    return lines


def short_message(message: str, limit: int = 300) -> str:
    """Server messages may quote the whole document: keep the start."""
    message = " ".join(message.split())
    return message if len(message) <= limit else message[:limit] + "..."


def _bson_refusal(error: BaseException, index: int | None) -> str:
    where = f" (batch line {index + 1})" if index is not None else ""
    if isinstance(error, RecursionError):
        return f"too deeply nested for BSON{where}"
    return f"cannot be BSON{where}: {short_message(str(error))}"


class MongoDBLoader(Loader):
    """``insert_many(ordered=False)`` of orjson-parsed documents, all or nothing per batch.

    Every document gets its ``_id`` here (an ObjectId, as the driver would assign), so the
    documents of a batch are known: when the server refuses some of them (BulkWriteError) or the
    driver cannot encode one (an integer beyond 64 bits, a NUL in a key, a document over the
    size limit, too deep nesting) the ones of the batch that were inserted are deleted again and
    the batch is refused. Documents carrying their own ``_id`` (not Bluesky's) are encoded to
    BSON before anything is sent, so that deleting never touches an older document.
    """

    def __init__(self, uri: str, collection: str) -> None:
        import bson
        import bson.errors
        import bson.raw_bson
        import orjson

        self.client = mongo_client(uri)
        self.collection = self.client[DATABASE][collection]
        hello = self.client.admin.command("hello")
        self.max_bson_size = int(hello.get("maxBsonObjectSize", 16 * 1024 * 1024))
        self._loads = orjson.loads
        self._decode_error = orjson.JSONDecodeError
        self._encode = bson.encode
        self._raw = bson.raw_bson.RawBSONDocument
        self._object_id = bson.ObjectId
        # What the BSON encoder raises for content it cannot hold (DocumentTooLarge is an
        # InvalidDocument).
        self._invalid = (
            bson.errors.InvalidDocument,
            bson.errors.InvalidStringData,
            OverflowError,
            RecursionError,
        )

    def _documents(self, lines: list[bytes]) -> tuple[list[Any], list[Any], bool]:
        """(documents, their _id's, whether some came with their own _id)."""
        joined = b"\n".join(lines)
        suspects = _long_digit_lines(joined)
        loads, object_id = self._loads, self._object_id
        docs: list[Any] = []
        ids: list[Any] = []
        own_ids = False
        for index, line in enumerate(lines):
            try:
                doc = loads(line)
            except self._decode_error as error:
                raise BatchRejected(f"invalid JSON (batch line {index + 1}): {error}") from error
            if type(doc) is not dict:
                raise BatchRejected(f"not a JSON object (batch line {index + 1})")
            if index in suspects:
                _check_big_ints(line)
            if "_id" in doc:
                own_ids = True
            else:
                doc["_id"] = object_id()
            ids.append(doc["_id"])
            docs.append(doc)
        return docs, ids, own_ids

    def _encoded(self, docs: list[Any]) -> list[Any]:
        """The documents as RawBSONDocument, refusing the batch on one BSON cannot hold."""
        raws = []
        for index, doc in enumerate(docs):
            try:
                data = self._encode(doc)
            except self._invalid as error:
                raise BatchRejected(_bson_refusal(error, index)) from error
            if len(data) > self.max_bson_size:
                raise BatchRejected(
                    f"document of {len(data)} bytes exceeds the server's "
                    f"maxBsonObjectSize {self.max_bson_size} "
                    f"(batch line {index + 1})"
                )
            raws.append(self._raw(data))
        return raws

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        from pymongo.errors import BulkWriteError, OperationFailure

        docs, ids, own_ids = self._documents(lines)
        if own_ids:
            docs = self._encoded(docs)
        try:
            self.collection.insert_many(docs, ordered=False)
        except BulkWriteError as error:
            details = error.details or {}
            errors = details.get("writeErrors") or []
            if not errors:  # only write concern errors: the server, not the content
                raise
            refused = {int(e.get("index", -1)) for e in errors}
            inserted = [ids[i] for i in range(len(ids)) if i not in refused]
            if inserted and details.get("nInserted", 1):
                self._delete(inserted)
            first = errors[0]
            message = short_message(str(first.get("errmsg")))
            named = {
                int(e.get("index", -1)): f"{short_message(str(e.get('errmsg')))} [code {e.get('code')}]"
                for e in errors
            }
            raise BatchRejected(
                f"{message} [code {first.get('code')}, batch line "
                f"{int(first.get('index', -1)) + 1}; {len(errors)} refused]",
                refused=named,
            ) from error
        except OperationFailure as error:
            if error.code in CONTENT_ERROR_CODES:
                self._delete(ids)
                detail = error.details.get("errmsg") if error.details else str(error)
                raise BatchRejected(f"{short_message(str(detail))} [code {error.code}]") from error
            raise
        except self._invalid as error:
            # Raised by the driver while encoding, before or between wire messages: what was
            # sent (every _id there is one we just made) is deleted.
            self._delete(ids)
            raise BatchRejected(_bson_refusal(error, None)) from error

    def _delete(self, ids: list[Any]) -> None:
        for start in range(0, len(ids), 10_000):
            self.collection.delete_many({"_id": {"$in": ids[start : start + 10_000]}})

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
