"""MariaDB in the updates workload: ``ycsb (doc JSON, ycsb_key VARCHAR(32) AS
(JSON_VALUE(doc, '$.ycsb_key')) VIRTUAL, INDEX (ycsb_key))`` in InnoDB: the index on the
extracted key is an index on a virtual generated column. Loaded with the engine's
``LOAD DATA LOCAL INFILE`` loader. Lifecycle, the server PID and the io scenario's cache
limit (a buffer pool resize; NotSupported by URL) are the engine's. Bulk styles:
``JSON_SET`` and ``JSON_MERGE_PATCH``.
Maintenance: ``OPTIMIZE TABLE`` (InnoDB: recreate + analyze, gives the space back).
Sizes: information_schema.TABLES after ``ANALYZE TABLE`` (InnoDB's page-count estimates)
and the table's .ibd file."""

from __future__ import annotations

import contextlib
import json
import select
from typing import Any, ClassVar

from docbench.contracts.common import StorageSize, Variant
from docbench.contracts.updates import KeyValueSession, NonBlockingSession, UpdatesTarget
from docbench.core.jsontypes import JsonMapping, JsonObject, as_object, json_record
from docbench.systems.mariadb.engine import DATABASE, MariaDBEngine, connect, json_params
from docbench.systems.mariadb.loader import MariaDBLoader

VARIANTS: list[Variant] = [
    Variant(
        "default",
        "JSON (LONGTEXT) column, index on a VIRTUAL column JSON_VALUE(doc, '$.ycsb_key')",
        settings={"type": "JSON (text)", "index": "virtual column"},
    ),
]
TABLE = "ycsb"


class MariaDBKeyValueSession(KeyValueSession):
    def __init__(self, spec: JsonMapping) -> None:
        self.conn = connect(json_params(spec["params"]))

    def _run(self, sql: str, args: Any) -> tuple[int, list[tuple]]:
        with self.conn.cursor() as cur:
            changed = cur.execute(sql, args)
            return changed, list(cur.fetchall())

    def read(self, key: str) -> JsonObject | None:
        _, rows = self._run(f"SELECT doc FROM {TABLE} WHERE ycsb_key = %s", (key,))
        return as_object(json.loads(rows[0][0]), "document") if rows else None

    def update_field(self, key: str, field: str, value: str) -> int:
        changed, _ = self._run(
            f"UPDATE {TABLE} SET doc = JSON_SET(doc, %s, %s) WHERE ycsb_key = %s", (f"$.{field}", value, key)
        )
        return changed

    def insert(self, doc: JsonMapping) -> None:
        self._run(f"INSERT INTO {TABLE} (doc) VALUES (%s)", (json.dumps(doc),))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


class NonBlockingMariaDBSession(MariaDBKeyValueSession, NonBlockingSession):
    """The same statements as text-protocol COM_QUERY packets written to the session's own
    connection (authenticated by PyMySQL, then used without it: PyMySQL has no non-blocking
    mode) and their answers parsed as they arrive: an OK packet's affected rows, a result
    set's rows, an ERR packet's message. PyMySQL does not ask for CLIENT_DEPRECATE_EOF, so a
    result set ends with an EOF packet. Once ``send_*`` is used, the blocking methods are not."""

    def __init__(self, spec: JsonMapping) -> None:
        super().__init__(spec)
        self.sock = self.conn._sock  # noqa: SLF001 - PyMySQL exposes no other way to it
        self.buffer = bytearray()
        self.closed = False
        self.state = "first"
        self.rows = 0

    def broken(self) -> bool:
        return self.closed

    def fileno(self) -> int:
        # From here on the socket is the driver's (the updates workload never calls this).
        self.sock.setblocking(False)
        return self.sock.fileno()

    def _query(self, sql: str) -> None:
        payload = b"\x03" + sql.encode()
        packet = len(payload).to_bytes(3, "little") + b"\x00" + payload
        self.buffer.clear()
        self.state, self.rows = "first", 0
        view = memoryview(packet)
        while view:
            try:
                view = view[self.sock.send(view) :]
            except BlockingIOError:
                select.select([], [self.sock], [], 1.0)

    def send_read(self, key: str) -> None:
        self._query(f"SELECT doc FROM {TABLE} WHERE ycsb_key = {self.conn.escape(key)}")

    def send_update(self, key: str, field: str, value: str) -> None:
        escape = self.conn.escape
        self._query(
            f"UPDATE {TABLE} SET doc = JSON_SET(doc, {escape('$.' + field)}, {escape(value)}) "
            f"WHERE ycsb_key = {escape(key)}"
        )

    def send_insert(self, doc: JsonMapping) -> None:
        self._query(f"INSERT INTO {TABLE} (doc) VALUES ({self.conn.escape(json.dumps(doc))})")

    def receive(self) -> int | None:
        try:
            data = self.sock.recv(262_144)
        except BlockingIOError:
            return None
        if not data:
            self.closed = True
            raise ConnectionError("the server closed the connection")
        buffer = self.buffer
        buffer += data
        position = 0
        while len(buffer) - position >= 4:
            length = int.from_bytes(buffer[position : position + 3], "little")
            if len(buffer) - position - 4 < length:
                break
            payload = bytes(buffer[position + 4 : position + 4 + length])
            position += 4 + length
            count = self._packet(payload)
            if count is not None:
                buffer.clear()
                return count
        del buffer[:position]
        return None

    def _packet(self, payload: bytes) -> int | None:
        """One packet of the answer; the count once the answer is complete."""
        kind = payload[0]
        if kind == 0xFF:
            self.state = "first"
            raise pymysql_error(payload)
        end_of_rows = kind == 0xFE and len(payload) < 9
        if self.state == "first":
            if kind == 0x00:  # OK: affected rows
                return _length_encoded(payload, 1)
            self.state = "columns"
        elif self.state == "columns":
            if end_of_rows:
                self.state = "rows"
        elif end_of_rows:
            return self.rows
        else:
            self.rows += 1
        return None


def _length_encoded(data: bytes, at: int) -> int:
    first = data[at]
    if first < 0xFB:
        return first
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}[first]
    return int.from_bytes(data[at + 1 : at + 1 + size], "little")


def pymysql_error(payload: bytes) -> Exception:
    """An ERR packet as PyMySQL's exception (code and message)."""
    from docbench.systems.mariadb.engine import pymysql_module

    code = int.from_bytes(payload[1:3], "little")
    message = payload[9:] if payload[3:4] == b"#" else payload[3:]
    return pymysql_module().err.OperationalError(code, message.decode(errors="replace"))


class MariaDBUpdates(UpdatesTarget):
    styles: ClassVar[list[str]] = ["json_set", "json_merge_patch"]
    client_loops = ("multiplexed", "threads")
    engine: MariaDBEngine

    def _run(self, sql: str, args: Any = None) -> tuple[int, list[tuple]]:
        with self.engine.admin_connection().cursor() as cur:
            changed = cur.execute(sql, args)
            return changed, list(cur.fetchall())

    def engine_info(self) -> JsonObject:
        return {"mariadb": self._run("SELECT VERSION()")[1][0][0]}

    def create(self) -> None:
        self._run(f"DROP TABLE IF EXISTS {TABLE}")
        self._run(f"""CREATE TABLE {TABLE} (
                        id BIGINT AUTO_INCREMENT PRIMARY KEY,
                        doc JSON NOT NULL,
                        ycsb_key VARCHAR(32) AS (JSON_VALUE(doc, '$.ycsb_key')) VIRTUAL
                      ) ENGINE = InnoDB ROW_FORMAT = DYNAMIC""")

    def load(self, docs: list[bytes]) -> None:
        loader = MariaDBLoader(self.engine.params(), TABLE)
        try:
            for start in range(0, len(docs), 20_000):
                loader.load_batch(docs[start : start + 20_000])
        finally:
            loader.close()

    def create_key_index(self) -> None:
        self._run(f"CREATE INDEX {TABLE}_key ON {TABLE} (ycsb_key)")

    def count(self) -> int:
        return int(self._run(f"SELECT count(*) FROM {TABLE}")[1][0][0])

    def count_field(self, field: str, value: str) -> int:
        return int(
            self._run(f"SELECT count(*) FROM {TABLE} WHERE JSON_VALUE(doc, %s) = %s", (f"$.{field}", value))[
                1
            ][0][0]
        )

    def bulk_update_styles(self) -> list[str]:
        return list(self.styles)

    def bulk_add_field(self, style: str, field: str, value: str) -> int:
        if style == "json_set":
            return self._run(f"UPDATE {TABLE} SET doc = JSON_SET(doc, %s, %s)", (f"$.{field}", value))[0]
        if style == "json_merge_patch":
            return self._run(
                f"UPDATE {TABLE} SET doc = JSON_MERGE_PATCH(doc, JSON_OBJECT(%s, %s))", (field, value)
            )[0]
        raise ValueError(f"unknown style {style!r}")

    def maintain(self) -> str:
        self._run(f"OPTIMIZE TABLE {TABLE}")
        return "OPTIMIZE TABLE (InnoDB: recreate + analyze)"

    def sizes(self) -> StorageSize:
        self._run(f"ANALYZE TABLE {TABLE}")
        data, index, free = self._run(
            "SELECT data_length, index_length, data_free FROM information_schema.TABLES "
            "WHERE table_schema = %s AND table_name = %s",
            (DATABASE, TABLE),
        )[1][0]
        on_disk = None
        if self.engine.data_dir is not None:
            ibd = self.engine.data_dir / DATABASE / f"{TABLE}.ibd"
            with contextlib.suppress(OSError):
                on_disk = ibd.stat().st_blocks * 512
        return StorageSize(
            total=int(data) + int(index),
            data=int(data),
            index=int(index),
            on_disk=on_disk,
            detail={"data_free": int(free)},
        )

    def session_spec(self) -> JsonObject:
        return {"params": json_record(self.engine.params(), "params")}

    @classmethod
    def open_session(cls, spec: JsonMapping) -> MariaDBKeyValueSession:
        return NonBlockingMariaDBSession(spec)


ADAPTER = MariaDBUpdates
