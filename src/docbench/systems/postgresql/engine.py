"""The PostgreSQL engine: docbench's own managed cluster, or the user's server by URL.

Two ways to run:

* **managed** (default): docbench initdb's its own cluster in the work directory and runs it
  as an unprivileged user on 127.0.0.1 and a free port (see ``server.py``);
* **URL** (``PostgreSQLEngine(workdir, url=...)``, ``--postgresql-url``): the user's server.
  docbench creates and uses its own database ``docbench`` there and touches nothing else; it
  cannot restart or reconfigure that server, so cold runs are not cold (``can_restart`` is
  False) and :meth:`PostgreSQLEngine.limit_cache` raises NotSupported. The database it creates
  carries the comment ``created by docbench ...``; a database ``docbench`` without it is
  someone else's: :meth:`~PostgreSQLEngine.ensure_database` stops (ForeignDatabase) and
  changes nothing. A URL without a password uses libpq's own ways: ``PGPASSWORD``,
  ``~/.pgpass`` (``PGPASSFILE``), whose line must match the database ``docbench`` (or ``*``).

Every workload adapter of PostgreSQL (analytics, updates, storage, the pgbench reference)
reaches the server through this engine: :meth:`~PostgreSQLEngine.conninfo`,
:meth:`~PostgreSQLEngine.connect`, :meth:`~PostgreSQLEngine.admin_connection`, the managed
:attr:`~PostgreSQLEngine.cluster` (None by URL), :attr:`~PostgreSQLEngine.data_dir`,
:attr:`~PostgreSQLEngine.bin_dir`, :meth:`~PostgreSQLEngine.psql_path` and
:meth:`~PostgreSQLEngine.pgbench_path`. The COPY format every adapter loads with and the
classification of refused content live here too.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docbench.contracts.common import Availability, NotSupported, command_version
from docbench.contracts.engine import CacheLimits, Engine
from docbench.core.ownership import MARKER_TEXT, ForeignDatabase, foreign_message, is_marked
from docbench.core.redact import at_encoded, redact_text, redact_url
from docbench.systems.postgresql import server as pgserver

if TYPE_CHECKING:
    import psycopg
    from psycopg.abc import ConnDict

DATABASE = "docbench"
INSTALL_HINT = "docbench setup postgresql  (apt-get install postgresql postgresql-contrib)"

# CSV with \x01 as quote and \x02 as delimiter: neither can appear unescaped in valid JSON,
# and in CSV mode a backslash is an ordinary character, so JSON needs no escaping at all.
# Every line is sent quoted, so a raw carriage return (JSON whitespace) or a line that reads
# "\." stays data; a \x01 inside a line is doubled (it is invalid JSON and gets refused).
COPY_OPTIONS = "FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02'"

# SQLSTATE classes that mean "the engine refused the content": 22 data exception (invalid
# JSON, \u0000, invalid UTF-8, numeric overflow, bad COPY data), 23 integrity constraint,
# 54 program limit exceeded (nesting beyond the stack depth limit, jsonb too large).
CONTENT_SQLSTATE_CLASSES = ("22", "23", "54")


def psycopg_module():
    """psycopg, imported on first use (docbench runs without it for other systems)."""
    import psycopg

    return psycopg


def copy_buffer(lines: list[bytes]) -> bytes:
    """The COPY data (:data:`COPY_OPTIONS`) for these raw lines: every line one quoted field."""
    if any(b"\x01" in line for line in lines):
        lines = [line.replace(b"\x01", b"\x01\x01") for line in lines]
    return b"\x01" + b"\x01\n\x01".join(lines) + b"\x01\n"


_COPY_LINE = re.compile(r"^COPY [^,]+, line (\d+)", re.MULTILINE)


def copy_line(error: Exception) -> int | None:
    """The line of the COPY data PostgreSQL refused (1-based, from the error's context
    "COPY t, line N..."), or None when the error names none."""
    context = getattr(getattr(error, "diag", None), "context", None) or ""
    found = _COPY_LINE.search(context)
    return int(found.group(1)) if found else None


def is_content_error(error: Exception) -> bool:
    """Whether PostgreSQL refused the data itself (not: the server failed)."""
    state = getattr(error, "sqlstate", None) or ""
    return state[:2] in CONTENT_SQLSTATE_CLASSES


def error_message(error: Exception, where: bool = True) -> str:
    """PostgreSQL's own words: primary message, detail, and where (COPY line; left out with
    ``where=False``, when the caller names the file's line itself)."""
    diag = getattr(error, "diag", None)
    if diag is None or not diag.message_primary:
        return str(error).strip()
    parts = [diag.message_primary]
    if diag.message_detail:
        parts.append(diag.message_detail)
    if diag.context and where:
        # "JSON data, line 1: ...\nCOPY t, line 5, column data: "<the document>"": keep the
        # COPY line number, not the document again.
        copy_lines = [ln for ln in diag.context.splitlines() if ln.startswith("COPY")]
        if copy_lines:
            parts.append(copy_lines[0].split(", column")[0])
    text = " | ".join(parts)
    state = getattr(error, "sqlstate", None)
    return f"{text} [SQLSTATE {state}]" if state else text


def libpq_url(url: str) -> str:
    """The URL as libpq must read it: an ``@`` inside the password percent-encoded.

    libpq ends the user info at the *first* ``@``, so ``postgresql://u:pa@ss@host/db`` would
    connect to host ``ss@host`` (and say so in its error, half the password with it). docbench
    ends the password at the *last* ``@`` of the authority, as its redaction does.
    """
    return at_encoded(url)  # a key=value conninfo string (libpq's own syntax) stays as it is


def is_local_host(params: ConnDict) -> bool:
    host = str(params.get("host") or params.get("hostaddr") or "")
    return host == "" or host.startswith("/") or host in {"localhost", "127.0.0.1", "::1"}


class PostgreSQLEngine(Engine, CacheLimits):
    name = "postgresql"
    display_name = "PostgreSQL"
    embedded = False
    url_example = "postgresql://user@localhost:5432/postgres"
    install_hint = INSTALL_HINT
    notes = (
        "PostgreSQL JSONB + composite expression btree index on the five paths; managed "
        "cluster (initdb, 127.0.0.1, own port) or the user's server via URL. TOAST "
        "compresses only rows over ~2 kB, so most documents are stored uncompressed."
    )

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        # docbench's own cluster; None for a user's server reached by URL.
        self.cluster: pgserver.Cluster | None = None if url else pgserver.Cluster(workdir)
        # The admin connection of this process (docbench's database).
        self._conn: psycopg.Connection[Any] | None = None

    # ----- discovery ---------------------------------------------------------------------
    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            psycopg = psycopg_module()
        except ImportError:
            return Availability(
                False, reason="psycopg is not installed", install_hint="pip install 'psycopg[binary]'"
            )
        if url:
            try:
                with psycopg.connect(libpq_url(url), connect_timeout=5) as conn:
                    version = conn.execute("SELECT version()").fetchone()[0]
                return Availability(True, version=version.split(",")[0])
            except Exception as error:  # noqa: BLE001
                message = redact_text(" ".join(str(error).split()), url)
                return Availability(False, reason=f"cannot connect to {redact_url(url)}: {message}")
        bin_dir = pgserver.find_bin_dir()
        if bin_dir is None:
            return Availability(
                False,
                reason="no PostgreSQL server binaries under /usr/lib/postgresql/*/bin",
                install_hint=INSTALL_HINT,
            )
        version = command_version([str(bin_dir / "postgres"), "--version"])
        if version is None:
            return Availability(False, reason=f"{bin_dir}/postgres does not run", install_hint=INSTALL_HINT)
        return Availability(True, version=version.replace("postgres (PostgreSQL) ", "PostgreSQL "))

    def running_version(self) -> str | None:
        return str(self.admin_connection().execute("SHOW server_version").fetchone()[0])

    def versions(self) -> dict[str, str]:
        return super().versions() | {"psycopg": psycopg_module().__version__}

    # ----- where things are --------------------------------------------------------------
    @property
    def data_dir(self) -> Path | None:
        """The managed cluster's data directory (None by URL)."""
        return self.cluster.data_dir if self.cluster is not None else None

    @property
    def password_file(self) -> Path | None:
        """The managed cluster's password file (mode 0600; None by URL)."""
        return self.cluster.password_file if self.cluster is not None else None

    @property
    def bin_dir(self) -> Path | None:
        """The PostgreSQL binary directory: the managed cluster's, else the newest installed."""
        if self.cluster is not None and self.cluster.bin_dir is not None:
            return self.cluster.bin_dir
        return pgserver.find_bin_dir()

    def psql_path(self) -> str:
        """psql of the server's version when installed, else the one on PATH."""
        bin_dir = self.bin_dir
        if bin_dir is not None and (bin_dir / "psql").exists():
            return str(bin_dir / "psql")
        return "psql"

    def pgbench_path(self) -> str:
        bin_dir = self.bin_dir
        if bin_dir is None or not (bin_dir / "pgbench").exists():
            raise RuntimeError("pgbench not found under /usr/lib/postgresql/*/bin")
        return str(bin_dir / "pgbench")

    # ----- connections -------------------------------------------------------------------
    def conninfo_params(self, dbname: str = DATABASE) -> ConnDict:
        """libpq connection parameters for a database of the server (password included)."""
        from psycopg.conninfo import conninfo_to_dict

        if self.url:
            # No password in the URL: libpq finds it (PGPASSWORD, ~/.pgpass) in every client.
            params = conninfo_to_dict(libpq_url(self.url))
            params["dbname"] = dbname
            params.setdefault("connect_timeout", 10)
        else:
            assert self.cluster is not None
            params = conninfo_to_dict(self.cluster.connection(dbname).conninfo())
        params["client_encoding"] = "UTF8"
        params.setdefault("application_name", "docbench")
        return params

    def conninfo(self, dbname: str = DATABASE) -> str:
        from psycopg.conninfo import make_conninfo

        return make_conninfo("", **self.conninfo_params(dbname))

    def served_url(self) -> str | None:
        if self.url:
            return self.url
        from urllib.parse import quote

        params = self.conninfo_params("postgres")
        return (
            f"postgresql://{quote(str(params['user']), safe='')}:"
            f"{quote(str(params['password']), safe='')}@{params['host']}:{params['port']}/postgres"
        )

    def is_local(self) -> bool:
        """Whether the server runs on this machine (its backend PIDs mean something here)."""
        return is_local_host(self.conninfo_params())

    def connect(self, dbname: str = DATABASE):
        """A new autocommit connection to docbench's database (or ``dbname``)."""
        return psycopg_module().connect(self.conninfo(dbname), autocommit=True)

    def admin_connection(self):
        """This process's shared autocommit connection to docbench's database (DDL, counts,
        sizes); reopened when closed, closed by :meth:`release`, a restart and :meth:`stop`."""
        if self._conn is None or self._conn.closed:
            self._conn = self.connect()
        return self._conn

    def maintenance_database(self) -> str:
        """The database docbench connects to for CREATE DATABASE: the URL's, unless it names
        docbench's own (which may not exist yet), else ``postgres``."""
        if self.url:
            from psycopg.conninfo import conninfo_to_dict

            given = conninfo_to_dict(libpq_url(self.url)).get("dbname")
            if given and given != DATABASE:
                return str(given)
        return "postgres"

    def ensure_database(self) -> None:
        """Create docbench's own database (UTF8, C collation, commented as docbench's) if it is
        not there. On a server by URL a database of that name without docbench's comment is
        someone else's: :class:`ForeignDatabase`, and nothing is changed. On docbench's own
        cluster an unmarked one (an older docbench's) is marked."""
        psycopg = psycopg_module()
        with psycopg.connect(self.conninfo(self.maintenance_database()), autocommit=True) as conn:
            row = conn.execute(
                "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
                (DATABASE,),
            ).fetchone()
            if row is not None and not is_marked(row[0]) and self.cluster is None:
                raise ForeignDatabase(self.foreign_message())
            if row is None:
                conn.execute(
                    f"CREATE DATABASE {DATABASE} ENCODING 'UTF8' TEMPLATE template0 "
                    "LC_COLLATE 'C' LC_CTYPE 'C'"
                )
            if row is None or not is_marked(row[0]):
                from psycopg import sql

                # The mark that lets later runs recognise the database (COMMENT, a utility
                # statement, takes no bound parameter: the text goes in as a literal).
                conn.execute(
                    sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                        sql.Identifier(DATABASE), sql.Literal(MARKER_TEXT)
                    )
                )
        with psycopg.connect(self.conninfo(), autocommit=True) as conn:
            encoding = conn.execute("SHOW server_encoding").fetchone()[0]
            if encoding.upper() not in {"UTF8", "UTF-8"}:
                raise RuntimeError(
                    f"database {DATABASE!r} has encoding {encoding}, not UTF8; "
                    f"drop it or let docbench create it"
                )
            # Engine-side query timings; needs the library preloaded (managed: always).
            with contextlib.suppress(psycopg.Error):
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")

    def foreign_message(self) -> str:
        params = self.conninfo_params()
        where = f"{params.get('host') or 'localhost'}:{params.get('port') or 5432}"
        return foreign_message(
            f"PostgreSQL database {DATABASE!r}",
            where,
            f"DROP DATABASE {DATABASE};",
            f"COMMENT ON DATABASE {DATABASE} IS 'created by docbench';",
        )

    # ----- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        if self.cluster is not None:
            self.cluster.start()
        self.ensure_database()

    def stop(self) -> None:
        self.release()
        if self.cluster is not None:
            self.cluster.stop()

    def restart(self) -> None:
        """Managed: stop (fast shutdown) and start again, so caches are empty. A server reached
        by URL cannot be restarted: nothing happens (``can_restart`` is False)."""
        if not self.can_restart or self.cluster is None:
            return
        self.release()
        self.cluster.stop()
        self.cluster.start()

    def is_alive(self) -> bool:
        if self.cluster is not None:
            return self.cluster.accepting()
        try:
            with psycopg_module().connect(self.conninfo(), connect_timeout=5) as conn:
                conn.execute("SELECT 1")
            return True
        except Exception:  # noqa: BLE001
            return False

    def release(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    def server_pids(self) -> list[int]:
        """The postmaster, then its children (backends, checkpointer...); [] by URL."""
        if self.cluster is None or self.cluster.pid is None:
            return []
        return [self.cluster.pid, *self.cluster.children()]

    # ----- cache limits (the throughput workload's io scenario) --------------------------
    def limit_cache(self, cache_bytes: int) -> str:
        """A small shared_buffers, which needs a restart: managed cluster only."""
        if self.cluster is None:
            raise NotSupported(
                "shared_buffers of a server reached by URL is not docbench's to "
                "change (and it would need a restart)"
            )
        value = f"{max(1, cache_bytes >> 20)}MB"
        self._restart_with({"shared_buffers": value})
        return f"shared_buffers = {value} (server restarted)"

    def restore_cache(self) -> None:
        if self.cluster is None or "shared_buffers" not in self.cluster.settings_override:
            return
        self._restart_with({"shared_buffers": None})

    def _restart_with(self, settings: dict[str, str | None]) -> None:
        assert self.cluster is not None
        for name, value in settings.items():
            if value is None:
                self.cluster.settings_override.pop(name, None)
            else:
                self.cluster.settings_override[name] = value
        self.restart()


ENGINE = PostgreSQLEngine

__all__ = [
    "COPY_OPTIONS",
    "DATABASE",
    "ENGINE",
    "PostgreSQLEngine",
    "copy_buffer",
    "error_message",
    "is_content_error",
    "psycopg_module",
]
