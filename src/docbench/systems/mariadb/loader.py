"""MariaDB's batch loader, the one every MariaDB adapter loads with (analytics, updates, storage).

Loading is ``LOAD DATA LOCAL INFILE`` of the batch (from an in-memory file) with a field
terminator that cannot occur in JSON and no escape character, so each raw line is the column
value, in one transaction per batch. With LOCAL, MariaDB turns per-row errors into warnings
and skips the row: any warning makes the batch roll back and be refused.
"""

from __future__ import annotations

import contextlib
import os

from docbench.contracts.analytics import Loader
from docbench.contracts.common import BatchRejected
from docbench.systems.mariadb.engine import ConnectParams, connect, pymysql_module

# Each line is one field: \x01 cannot appear raw in valid JSON (a line with one has two
# fields -> a warning -> refused); no enclosing and no escape character, so backslashes are
# data; lines end at \n only (a raw \r, JSON whitespace, stays in the document).
LOAD_OPTIONS = (
    "CHARACTER SET utf8mb4 FIELDS TERMINATED BY 0x01 ENCLOSED BY '' ESCAPED BY '' "
    "LINES STARTING BY '' TERMINATED BY '\\n' (doc)"
)


def _problems(warnings: list[tuple]) -> list[str]:
    """MariaDB's warnings of a refused LOAD DATA, the reason first: the CHECK (JSON_VALID)
    failure and json_valid's note saying why; the same parse error reported again by the
    virtual columns' JSON_EXTRACT is left out."""
    found = [(str(level), int(code), str(message)) for level, code, message in warnings]
    if any("json_valid" in message for _, _, message in found):
        found = [w for w in found if "'json_extract'" not in w[2]]
    found.sort(key=lambda w: w[1] != 4025)
    return [f"{level} {code}: {message}" for level, code, message in found]


class MariaDBLoader(Loader):
    """LOAD DATA LOCAL INFILE of each batch from a memfd, one transaction per batch."""

    def __init__(self, params: ConnectParams, table: str) -> None:
        self.conn = connect(params, local_infile=True)
        self.table = table
        with self.conn.cursor() as cur:
            # The batch is refused on a warning; make sure none is hidden.
            cur.execute(
                "SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,"
                "NO_ENGINE_SUBSTITUTION', sql_notes = 1"
            )

    def load_batch(self, lines: list[bytes]) -> None:
        if not lines:
            return
        fd = os.memfd_create("docbench-batch")
        try:
            with os.fdopen(os.dup(fd), "wb", buffering=0) as handle:
                handle.write(b"\n".join(lines) + b"\n")
            path = f"/proc/{os.getpid()}/fd/{fd}"
            self._load(path, len(lines))
        finally:
            os.close(fd)

    def _load(self, path: str, expected: int) -> None:
        pymysql = pymysql_module()
        conn = self.conn
        try:
            conn.begin()
            with conn.cursor() as cur:
                loaded = cur.execute(
                    f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE {self.table} {LOAD_OPTIONS}"
                )
                cur.execute("SELECT @@warning_count")
                warnings = int(cur.fetchone()[0])
                problems: list[str] = []
                if warnings:
                    cur.execute("SHOW WARNINGS LIMIT 5")
                    problems = _problems(cur.fetchall())
                elif loaded != expected:
                    problems = [f"{loaded} of {expected} lines loaded"]
            if problems:
                conn.rollback()
                raise BatchRejected(" | ".join(problems))
            conn.commit()
        except pymysql.err.DataError as error:
            with contextlib.suppress(Exception):
                conn.rollback()
            raise BatchRejected(f"{error.args[0]}: {error.args[1]}") from error
        except pymysql.err.IntegrityError as error:
            with contextlib.suppress(Exception):
                conn.rollback()
            raise BatchRejected(f"{error.args[0]}: {error.args[1]}") from error

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()
