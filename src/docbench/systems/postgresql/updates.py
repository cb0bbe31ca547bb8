"""PostgreSQL in the updates workload: ``CREATE TABLE ycsb_<variant> (data jsonb|json)``.

Variants (the published comparison's three): jsonb + btree expression index on
``data->>'ycsb_key'``; jsonb + GIN index on the whole document (point operations use
``data @> '{"ycsb_key": ...}'``, which the GIN index serves; no btree); json + btree.

Bulk update styles (each on a freshly created and loaded table):

* ``rebuild``: the document rebuilt with ``jsonb_build_object`` (``json_build_object``)
  listing every field plus field11;
* ``concat``: ``data || jsonb_build_object('field11', ...)`` (json: via a cast to jsonb and
  back, as json has no ``||``);
* ``jsonb_set``: ``jsonb_set(data, '{field11}', ...)`` (json: via jsonb and back).

Point update: ``jsonb_set`` of one field of the row found by the key (json: through jsonb).
Maintenance: plain ``VACUUM (ANALYZE)`` -- the routine one; it makes dead tuples reusable but
does not give the space back (``VACUUM FULL`` would rewrite the table). HOT updates: from
``pg_stat_user_tables`` (n_tup_upd, n_tup_hot_upd). Default fillfactor 100, so a HOT update
needs free space on the page, and the index on an expression of ``data`` rules HOT out anyway.
"""

from __future__ import annotations

import contextlib
import select
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import orjson

from docbench.contracts.common import StorageSize, Variant, directory_size
from docbench.contracts.updates import CompiledClient, NonBlockingSession, UpdatesTarget
from docbench.contracts.ycsb import FIELDS
from docbench.core.jsontypes import JsonMapping, JsonObject, as_object, as_str
from docbench.systems.postgresql.engine import (
    COPY_OPTIONS,
    PostgreSQLEngine,
    copy_buffer,
    psycopg_module,
)

if TYPE_CHECKING:
    from psycopg.pq.abc import PGresult

VARIANTS: list[Variant] = [
    Variant(
        "jsonb-btree",
        "jsonb column, btree expression index on data->>'ycsb_key'",
        settings={"type": "jsonb", "index": "btree"},
    ),
    Variant(
        "jsonb-gin",
        "jsonb column, GIN index (jsonb_ops) on the whole document; key lookups by containment (@>)",
        settings={"type": "jsonb", "index": "gin"},
    ),
    Variant(
        "json-btree",
        "json (text) column, btree expression index on data->>'ycsb_key'",
        settings={"type": "json", "index": "btree"},
    ),
]

COPY_CHUNK = 2_000
_OK_STATUSES = (1, 2)  # libpq's PGRES_COMMAND_OK, PGRES_TUPLES_OK (psycopg.pq.ExecStatus)


def _where(index: str) -> str:
    if index == "gin":
        return "data @> jsonb_build_object('ycsb_key', %(key)s::text)"
    return "data->>'ycsb_key' = %(key)s"


def point_statements(spec: JsonMapping) -> dict[str, str]:
    """The point operations' SQL, with %(key)s, %(field)s, %(value)s, %(doc)s placeholders
    (also the source of the pgbench scripts in throughput.py)."""
    table, kind = as_str(spec["table"], "table"), as_str(spec["type"], "type")
    where = _where(as_str(spec["index"], "index"))
    value = "jsonb_set(data, ARRAY[%(field)s], to_jsonb(%(value)s::text))"
    if kind == "json":
        value = "jsonb_set(data::jsonb, ARRAY[%(field)s], to_jsonb(%(value)s::text))::json"
    return {
        "read": f"SELECT data::text FROM {table} WHERE {where}",
        "update": f"UPDATE {table} SET data = {value} WHERE {where}",
        "insert": f"INSERT INTO {table} (data) VALUES (%(doc)s::{kind})",
    }


def libpq_candidates() -> list[str]:
    """libpq for docbench-client: the machine's (Debian's libpq5, what pgbench links), then
    the copy psycopg's binary wheel bundles."""
    import glob
    import importlib.util

    found = ["libpq.so.5"]
    spec = importlib.util.find_spec("psycopg_binary")
    if spec is not None and spec.origin:
        site = Path(spec.origin).parent.parent
        found += sorted(glob.glob(str(site / "psycopg_binary.libs" / "libpq*.so*")))
    return found


def _numbered(sql: str, names: list[str]) -> str:
    """%(name)s placeholders -> $1, $2... (libpq's prepared statements)."""
    for number, name in enumerate(names, start=1):
        sql = sql.replace(f"%({name})s", f"${number}")
    return sql


def prepared_statements(spec: JsonMapping) -> dict[str, str]:
    """The point operations as libpq prepares them ($1...): read (key), update (field, value,
    key), insert (the document), for the Python session and docbench-client alike."""
    sql = point_statements(spec)
    return {
        "read": _numbered(sql["read"], ["key"]),
        "update": _numbered(sql["update"], ["field", "value", "key"]),
        "insert": _numbered(sql["insert"], ["doc"]),
    }


class PostgreSQLKeyValueSession(NonBlockingSession):
    """Point operations as prepared statements run through psycopg's libpq layer
    (``psycopg.pq``): the high-level cursor API costs about three times the client CPU per
    operation, which made a Python driver, not the server, the bottleneck under load. The
    ``send_*``/``receive`` pair is libpq's asynchronous command processing on the same
    prepared statements (the throughput driver multiplexes many such sessions on a thread)."""

    def __init__(self, spec: JsonMapping) -> None:
        self.conn = psycopg_module().connect(as_str(spec["conninfo"], "conninfo"), autocommit=True)
        statements = prepared_statements(spec)
        self.pgconn = self.conn.pgconn
        for name in ("read", "update", "insert"):
            self._prepare(f"docbench_{name}".encode(), statements[name])
        self._reading = False
        self._result: PGresult | None = None  # the command's result, until its end comes

    def _prepare(self, name: bytes, sql: str) -> None:
        self._check(self.pgconn.prepare(name, sql.encode()))

    def _check(self, result):
        if result.status not in _OK_STATUSES:
            raise psycopg_module().DatabaseError(result.error_message.decode(errors="replace").strip())
        return result

    def read(self, key: str) -> JsonObject | None:
        result = self._check(self.pgconn.exec_prepared(b"docbench_read", [key.encode()]))
        return as_object(orjson.loads(result.get_value(0, 0)), "document") if result.ntuples else None

    def update_field(self, key: str, field: str, value: str) -> int:
        result = self._check(
            self.pgconn.exec_prepared(b"docbench_update", [field.encode(), value.encode(), key.encode()])
        )
        return int(result.command_tuples or 0)

    def insert(self, doc: JsonMapping) -> None:
        self._check(self.pgconn.exec_prepared(b"docbench_insert", [orjson.dumps(doc)]))

    # the non-blocking pair ----------------------------------------------------------------
    def fileno(self) -> int:
        return self.pgconn.socket

    def _send(self, name: bytes, params: list[bytes], reading: bool) -> None:
        pgconn = self.pgconn
        pgconn.send_query_prepared(name, params)
        if pgconn.flush():
            self._flush_rest()
        self._reading = reading
        self._result = None

    def _flush_rest(self) -> None:
        """The rest of a long statement (psycopg keeps libpq's socket non-blocking)."""
        while self.pgconn.flush():
            select.select([], [self.pgconn.socket], [], 1.0)

    def send_read(self, key: str) -> None:  # (inlined: the throughput driver's hot path)
        pgconn = self.pgconn
        pgconn.send_query_prepared(b"docbench_read", [key.encode()])
        if pgconn.flush():
            self._flush_rest()
        self._reading = True
        self._result = None

    def send_update(self, key: str, field: str, value: str) -> None:
        self._send(b"docbench_update", [field.encode(), value.encode(), key.encode()], False)

    def send_insert(self, doc: JsonMapping) -> None:
        self._send(b"docbench_insert", [orjson.dumps(doc)], False)

    def broken(self) -> bool:
        return self.pgconn.status != 0  # CONNECTION_OK

    def receive(self) -> int | None:
        pgconn = self.pgconn
        pgconn.consume_input()
        while not pgconn.is_busy():
            result = pgconn.get_result()
            if result is None:  # the command's end: its result came before
                done, self._result = self._result, None
                assert done is not None, "libpq gives a command's result before its end"
                if done.status not in _OK_STATUSES:
                    self._check(done)
                return done.ntuples if self._reading else int(done.command_tuples or 0)
            self._result = result
        return None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


class PostgreSQLUpdates(UpdatesTarget, CompiledClient):
    """``ycsb_<variant>`` in docbench's database on the engine's server (managed or URL).

    Lifecycle, the server PID and the io scenario's cache limit (shared_buffers + restart;
    NotSupported by URL) are the engine's: the base class's defaults delegate to it."""

    styles: ClassVar[list[str]] = ["rebuild", "concat", "jsonb_set"]
    client_loops = ("compiled", "multiplexed", "threads")
    engine: PostgreSQLEngine

    def __init__(self, engine: PostgreSQLEngine, variant: Variant) -> None:
        super().__init__(engine, variant)
        self.kind = variant.settings["type"]
        self.index = variant.settings["index"]
        self.table = "ycsb_" + variant.name.replace("-", "_")

    def conn(self):
        """The engine's admin connection (closed by release(), stop() and a restart)."""
        return self.engine.admin_connection()

    def engine_info(self) -> JsonObject:
        return {"server_version": self.conn().execute("SHOW server_version").fetchone()[0]}

    def limit_cache(self, cache_bytes: int) -> str:
        """The engine's small shared_buffers, and no autovacuum on the table while the io
        scenario runs (statistics made fresh first): an autovacuum ANALYZE samples 30,000
        documents, ~50MB, and the scenario's memory cap killed it, which restarts the whole
        server in the middle of a run."""
        what = super().limit_cache(cache_bytes)
        conn = self.conn()
        conn.execute(f"VACUUM ANALYZE {self.table}")
        conn.execute(f"ALTER TABLE {self.table} SET (autovacuum_enabled = false)")
        return f"{what}; autovacuum off on {self.table} (VACUUM ANALYZE before)"

    def restore_cache(self) -> None:
        super().restore_cache()
        self.conn().execute(f"ALTER TABLE {self.table} RESET (autovacuum_enabled)")

    # loading ----------------------------------------------------------------------------
    def create(self) -> None:
        conn = self.conn()
        conn.execute(f"DROP TABLE IF EXISTS {self.table}")
        conn.execute(f"CREATE TABLE {self.table} (data {self.kind} NOT NULL)")

    def load(self, docs: list[bytes]) -> None:
        sql = f"COPY {self.table} (data) FROM STDIN WITH ({COPY_OPTIONS})"
        conn = self.conn()
        with conn.transaction(), conn.cursor() as cur, cur.copy(sql) as copy:
            for start in range(0, len(docs), COPY_CHUNK):
                copy.write(copy_buffer(docs[start : start + COPY_CHUNK]))

    def create_key_index(self) -> None:
        conn = self.conn()
        if self.index == "gin":
            conn.execute(f"CREATE INDEX {self.table}_doc ON {self.table} USING gin (data)")
        else:
            conn.execute(f"CREATE INDEX {self.table}_key ON {self.table} ((data->>'ycsb_key'))")
        conn.execute(f"VACUUM ANALYZE {self.table}")

    def count(self) -> int:
        return int(self.conn().execute(f"SELECT count(*) FROM {self.table}").fetchone()[0])

    def count_field(self, field: str, value: str) -> int:
        return int(
            self.conn()
            .execute(f"SELECT count(*) FROM {self.table} WHERE data->>%s = %s", (field, value))
            .fetchone()[0]
        )

    # the bulk update --------------------------------------------------------------------
    def bulk_update_styles(self) -> list[str]:
        return list(self.styles)

    def bulk_expression(self, style: str) -> str:
        jb = "jsonb" if self.kind == "jsonb" else "json"
        if style == "rebuild":
            pairs = ", ".join(f"'{name}', data->'{name}'" for name in ["ycsb_key", *FIELDS])
            return f"{jb}_build_object({pairs}, %(field)s::text, %(value)s::text)"
        source = "data" if self.kind == "jsonb" else "data::jsonb"
        if style == "concat":
            value = f"{source} || jsonb_build_object(%(field)s::text, %(value)s::text)"
        elif style == "jsonb_set":
            value = f"jsonb_set({source}, ARRAY[%(field)s::text], to_jsonb(%(value)s::text))"
        else:
            raise ValueError(f"unknown style {style!r}")
        return value if self.kind == "jsonb" else f"({value})::json"

    def bulk_add_field(self, style: str, field: str, value: str) -> int:
        sql = f"UPDATE {self.table} SET data = {self.bulk_expression(style)}"
        return self.conn().execute(sql, {"field": field, "value": value}).rowcount

    def maintain(self) -> str:
        self.conn().execute(f"VACUUM (ANALYZE) {self.table}")
        return "VACUUM (ANALYZE)"

    # figures ----------------------------------------------------------------------------
    def sizes(self) -> StorageSize:
        self.conn().execute("CHECKPOINT")
        total, table, index, heap, toast = (
            self.conn()
            .execute(
                "SELECT pg_total_relation_size(c.oid), pg_table_size(c.oid), pg_indexes_size(c.oid), "
                "pg_relation_size(c.oid), coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) "
                "FROM pg_class c WHERE c.relname = %s",
                (self.table,),
            )
            .fetchone()
        )
        on_disk = None
        if self.engine.data_dir is not None:
            on_disk = directory_size(self.engine.data_dir / "base")
        return StorageSize(
            total=int(total),
            data=int(table),
            index=int(index),
            on_disk=on_disk,
            detail={
                "heap": int(heap),
                "toast": int(toast),
                "on_disk_is": "pgdata/base (all databases, no WAL)",
            },
        )

    def extra_stats(self) -> JsonObject:
        conn = self.conn()
        with contextlib.suppress(Exception):
            conn.execute("SELECT pg_stat_force_next_flush()")
        conn.execute("SELECT 1")
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT n_tup_ins, n_tup_upd, n_tup_hot_upd, n_live_tup, n_dead_tup, "
            "vacuum_count, autovacuum_count FROM pg_stat_user_tables WHERE relname = %s",
            (self.table,),
        ).fetchone()
        if row is None:
            return {}
        names = [
            "n_tup_ins",
            "n_tup_upd",
            "n_tup_hot_upd",
            "n_live_tup",
            "n_dead_tup",
            "vacuum_count",
            "autovacuum_count",
        ]
        counts = dict(zip(names, (int(v) for v in row), strict=True))
        stats: JsonObject = {**counts}
        stats["hot_share"] = counts["n_tup_hot_upd"] / counts["n_tup_upd"] if counts["n_tup_upd"] else None
        return stats

    # point operations -------------------------------------------------------------------
    def session_spec(self) -> JsonObject:
        return {
            "conninfo": self.engine.conninfo(),
            "table": self.table,
            "type": self.kind,
            "index": self.index,
        }

    @classmethod
    def open_session(cls, spec: JsonMapping) -> PostgreSQLKeyValueSession:
        return PostgreSQLKeyValueSession(spec)

    @classmethod
    def compiled_client(cls, spec: JsonMapping) -> JsonObject:
        """The same prepared statements for docbench-client, through libpq's asynchronous
        calls as pgbench makes them (the machine's libpq first, as pgbench's, else the one
        psycopg brings)."""
        return {
            "protocol": "libpq",
            "library": [*libpq_candidates()],
            "conninfo": spec["conninfo"],
            "statements": {**prepared_statements(spec)},
        }


ADAPTER = PostgreSQLUpdates
