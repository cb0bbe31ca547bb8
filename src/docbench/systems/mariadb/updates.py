"""MariaDB in the updates workload: ``ycsb (doc JSON, ycsb_key VARCHAR(32) AS
(JSON_VALUE(doc, '$.ycsb_key')) VIRTUAL, INDEX (ycsb_key))`` in InnoDB: the index on the
extracted key is an index on a virtual generated column. Loaded with the analytics adapter's
``LOAD DATA LOCAL INFILE`` loader. Bulk styles: ``JSON_SET`` and ``JSON_MERGE_PATCH``.
Maintenance: ``OPTIMIZE TABLE`` (InnoDB: recreate + analyze, gives the space back).
Sizes: information_schema.TABLES after ``ANALYZE TABLE`` (InnoDB's page-count estimates)
and the table's .ibd file."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, ClassVar

from docbench.systems.base import StorageSize, Variant
from docbench.systems.mariadb.adapter import DATABASE, MariaDB, MariaDBLoader, connect

UPDATE_VARIANTS: list[Variant] = [
    Variant("default", "JSON (LONGTEXT) column, index on a VIRTUAL column JSON_VALUE(doc, "
            "'$.ycsb_key')", settings={"type": "JSON (text)", "index": "virtual column"}),
]
TABLE = "ycsb"


class MariaDBKeyValueSession:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.conn = connect(spec["params"])

    def _run(self, sql: str, args: Any) -> tuple[int, list[tuple]]:
        with self.conn.cursor() as cur:
            changed = cur.execute(sql, args)
            return changed, list(cur.fetchall())

    def read(self, key: str) -> dict[str, Any] | None:
        _, rows = self._run(f"SELECT doc FROM {TABLE} WHERE ycsb_key = %s", (key,))
        return json.loads(rows[0][0]) if rows else None

    def update_field(self, key: str, field: str, value: str) -> int:
        changed, _ = self._run(f"UPDATE {TABLE} SET doc = JSON_SET(doc, %s, %s) "
                               "WHERE ycsb_key = %s", (f"$.{field}", value, key))
        return changed

    def insert(self, doc: dict[str, Any]) -> None:
        self._run(f"INSERT INTO {TABLE} (doc) VALUES (%s)", (json.dumps(doc),))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


class UpdatesTarget:
    styles: ClassVar[list[str]] = ["json_set", "json_merge_patch"]

    def __init__(self, workdir: Path, variant: Variant, url: str | None = None) -> None:
        self.variant = variant
        self.system = MariaDB(workdir, MariaDB.variants[0], url)

    def start(self) -> None:
        self.system.start()

    def stop(self) -> None:
        self.system.stop()

    # throughput workload hooks ---------------------------------------------------------
    def server_pid(self) -> int | None:
        return self.system.server.pid if self.system.server is not None else None

    def limit_cache(self, cache_bytes: int) -> str:
        """IO-bound scenario: shrink the InnoDB buffer pool (a dynamic resize, no restart)."""
        if self.system.server is None:
            raise RuntimeError("a server reached by URL is not reconfigured by docbench")
        self._pool_before = self._run("SELECT @@innodb_buffer_pool_size")[1][0][0]
        return f"innodb_buffer_pool_size = {self._resize_pool(cache_bytes):,} bytes (resized)"

    def restore_cache(self) -> None:
        if getattr(self, "_pool_before", None):
            self._resize_pool(int(self._pool_before))

    def _resize_pool(self, size: int) -> int:
        import time

        self._run(f"SET GLOBAL innodb_buffer_pool_size = {int(size)}")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the resize runs in the background
            status = self._run("SHOW STATUS LIKE 'Innodb_buffer_pool_resize_status'")[1]
            if not status or "complete" in str(status[0][1]).lower() or not status[0][1]:
                break
            time.sleep(0.2)
        return int(self._run("SELECT @@innodb_buffer_pool_size")[1][0][0])

    def _run(self, sql: str, args: Any = None) -> tuple[int, list[tuple]]:
        with self.system._connection().cursor() as cur:
            changed = cur.execute(sql, args)
            return changed, list(cur.fetchall())

    def engine_info(self) -> dict[str, Any]:
        return {"mariadb": self._run("SELECT VERSION()")[1][0][0]}

    def create(self) -> None:
        self._run(f"DROP TABLE IF EXISTS {TABLE}")
        self._run(f"""CREATE TABLE {TABLE} (
                        id BIGINT AUTO_INCREMENT PRIMARY KEY,
                        doc JSON NOT NULL,
                        ycsb_key VARCHAR(32) AS (JSON_VALUE(doc, '$.ycsb_key')) VIRTUAL
                      ) ENGINE = InnoDB ROW_FORMAT = DYNAMIC""")

    def load(self, docs: list[bytes]) -> None:
        loader = MariaDBLoader(self.system._params(), TABLE)
        try:
            for start in range(0, len(docs), 20_000):
                loader.load_batch(docs[start:start + 20_000])
        finally:
            loader.close()

    def create_key_index(self) -> None:
        self._run(f"CREATE INDEX {TABLE}_key ON {TABLE} (ycsb_key)")

    def count(self) -> int:
        return int(self._run(f"SELECT count(*) FROM {TABLE}")[1][0][0])

    def count_field(self, field: str, value: str) -> int:
        return int(self._run(f"SELECT count(*) FROM {TABLE} WHERE JSON_VALUE(doc, %s) = %s",
                             (f"$.{field}", value))[1][0][0])

    def bulk_update_styles(self) -> list[str]:
        return list(self.styles)

    def bulk_add_field(self, style: str, field: str, value: str) -> int:
        if style == "json_set":
            return self._run(f"UPDATE {TABLE} SET doc = JSON_SET(doc, %s, %s)",
                             (f"$.{field}", value))[0]
        if style == "json_merge_patch":
            return self._run(f"UPDATE {TABLE} SET doc = JSON_MERGE_PATCH(doc, JSON_OBJECT(%s, %s))",
                             (field, value))[0]
        raise ValueError(f"unknown style {style!r}")

    def maintain(self) -> str:
        self._run(f"OPTIMIZE TABLE {TABLE}")
        return "OPTIMIZE TABLE (InnoDB: recreate + analyze)"

    def sizes(self) -> StorageSize:
        self._run(f"ANALYZE TABLE {TABLE}")
        data, index, free = self._run(
            "SELECT data_length, index_length, data_free FROM information_schema.TABLES "
            "WHERE table_schema = %s AND table_name = %s", (DATABASE, TABLE))[1][0]
        on_disk = None
        server = self.system.server
        if server is not None:
            ibd = server.data_dir / DATABASE / f"{TABLE}.ibd"
            with contextlib.suppress(OSError):
                on_disk = ibd.stat().st_blocks * 512
        return StorageSize(total=int(data) + int(index), data=int(data), index=int(index),
                           on_disk=on_disk, detail={"data_free": int(free)})

    def extra_stats(self) -> dict[str, Any]:
        return {}

    def session_spec(self) -> dict[str, Any]:
        return {"params": self.system._params()}

    @classmethod
    def open_session(cls, spec: dict[str, Any]) -> MariaDBKeyValueSession:
        return MariaDBKeyValueSession(spec)

    def session(self) -> MariaDBKeyValueSession:
        return self.open_session(self.session_spec())
