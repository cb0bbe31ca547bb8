"""MongoDB's engine handle: a server the user brings, reached by URL (``--mongodb-url``).

docbench cannot install a MongoDB server here, so this engine has no managed mode: without a
URL it is unavailable. With one, docbench uses its own database ``docbench`` on that server and
touches nothing else; it cannot restart the server (cold runs are not cold), cannot make its
cache small, and measures no server process (it runs elsewhere or as someone else).

The database is marked as docbench's by a document ``{_id: "docbench", created_by: "created by
docbench ..."}`` in its collection ``docbench_marker``, written when docbench finds the database
empty (MongoDB has no empty databases: it does not exist yet). A database ``docbench`` with
collections and no mark is someone else's: :meth:`MongoDBEngine.ensure_database` stops
(ForeignDatabase) before anything is dropped.

The FerretDB engine (``docbench/systems/ferretdb/engine.py``) subclasses this one with a
managed FerretDB server; :meth:`MongoDBEngine.uri`, :meth:`on_disk` and
:meth:`storage_detail` are what it overrides.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from docbench.contracts.common import Availability
from docbench.contracts.engine import Engine
from docbench.core.jsontypes import JsonMapping, JsonObject
from docbench.core.ownership import MARKER_TEXT, ForeignDatabase, foreign_message, is_marked
from docbench.core.redact import at_encoded, redact_text, redact_url

# docbench's own database on the server: every collection it makes lives there.
DATABASE = "docbench"
PYMONGO_HINT = "pip install pymongo"
SERVER_SELECTION_MS = 10_000
# The collection and document that mark the database as docbench's.
MARKER_COLLECTION = "docbench_marker"
MARKER_ID = "docbench"


def import_pymongo():
    """The pymongo module (ImportError when it is not installed)."""
    import pymongo

    return pymongo


def mongo_client(uri: str, **options: Any):
    """A new pymongo client (the caller closes it): docbench's app name and a 10 s server
    selection timeout unless ``options`` say otherwise."""
    pymongo = import_pymongo()
    settings: dict[str, Any] = {
        "serverSelectionTimeoutMS": SERVER_SELECTION_MS,
        "appname": "docbench",
        **options,
    }
    # pymongo refuses an unencoded "@" in the password: it ends at the last "@", as elsewhere.
    return pymongo.MongoClient(at_encoded(uri), **settings)


def ferretdb_version(info: JsonMapping) -> str | None:
    """FerretDB's version in buildInfo: ``ferretdb.version`` (v2), ``ferretdbVersion`` (v1)."""
    nested = info.get("ferretdb")
    if isinstance(nested, dict) and nested.get("version"):
        return str(nested["version"])
    return str(info["ferretdbVersion"]) if info.get("ferretdbVersion") else None


def version_text(info: JsonMapping) -> str:
    """``MongoDB 7.0.14`` or ``FerretDB v2.7.0 (MongoDB 7.0.77 API)`` from buildInfo."""
    ferret = ferretdb_version(info)
    if ferret:
        return f"FerretDB {ferret} (MongoDB {info.get('version')} API)"
    return f"MongoDB {info.get('version')}"


class MongoDBEngine(Engine):
    name = "mongodb"
    display_name = "MongoDB"
    embedded = False
    runs_by_default = False
    url_example = "mongodb://user:password@host:27017"
    url_only = True
    install_hint = (
        "run a MongoDB server and pass --mongodb-url mongodb://host:port (or run "
        "the ferretdb system: FerretDB 2 on DocumentDB runs the same pipelines)"
    )
    notes = (
        "MongoDB over the wire protocol (pymongo), only with --mongodb-url (no server can "
        "be installed here): its own database 'docbench', WiredTiger snappy/zstd, compound "
        "index on the five paths, aggregation pipelines. The server is not restarted for "
        "cold runs and its memory is not measured."
    )

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        self._client: Any = None

    # ----- discovery ---------------------------------------------------------------------
    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            import_pymongo()
        except ImportError:
            return Availability(False, reason="pymongo is not installed", install_hint=PYMONGO_HINT)
        if not url:
            return Availability(
                False,
                reason="no MongoDB server can be installed by docbench; "
                "give one with --mongodb-url mongodb://host:port",
                install_hint=cls.install_hint,
            )
        try:
            client = mongo_client(url, serverSelectionTimeoutMS=5000)
            try:
                info = client.admin.command("buildInfo")
            finally:
                client.close()
        except Exception as error:  # noqa: BLE001
            message = redact_text(" ".join(str(error).split()), url)[:300]
            return Availability(False, reason=f"cannot reach {redact_url(url)}: {message}")
        return Availability(True, version=version_text(info))

    @property
    def can_restart(self) -> bool:
        """Never: MongoDB is always someone else's server."""
        return False

    # ----- connections (public: the adapters use them) -------------------------------------
    def uri(self) -> str:
        """The connection string of the server (picklable, for session specs)."""
        if not self.url:
            raise RuntimeError("MongoDB needs a server URL (--mongodb-url)")
        return self.url

    def served_url(self) -> str | None:
        return self.uri()

    def new_client(self, **options: Any):
        """A new pymongo client to the server; the caller closes it."""
        return mongo_client(self.uri(), **options)

    def client(self):
        """This process's shared client (closed by :meth:`release`)."""
        if self._client is None:
            self._client = self.new_client()
        return self._client

    def database(self):
        """docbench's own database on the shared client."""
        return self.client()[DATABASE]

    def connect(self):
        """A new handle to docbench's own database (a pymongo Database on a new client; close
        it with ``db.client.close()``)."""
        return self.new_client()[DATABASE]

    def build_info(self) -> JsonObject:
        return dict(self.client().admin.command("buildInfo"))

    # ----- docbench's database -------------------------------------------------------------
    @property
    def owns_server(self) -> bool:
        """Whether the whole server is docbench's (a managed one): never for MongoDB."""
        return False

    def ensure_database(self) -> None:
        """Mark docbench's database, or check its mark: a database ``docbench`` that has
        collections but no mark is someone else's (:class:`ForeignDatabase`, nothing changed),
        except on a server docbench owns, where it is marked."""
        db = self.database()
        names = db.list_collection_names()
        if MARKER_COLLECTION in names:
            mark = db[MARKER_COLLECTION].find_one({"_id": MARKER_ID}) or {}
            if is_marked(mark.get("created_by")):
                return
        if names and not self.owns_server:
            raise ForeignDatabase(self.foreign_message())
        db[MARKER_COLLECTION].replace_one(
            {"_id": MARKER_ID}, {"_id": MARKER_ID, "created_by": MARKER_TEXT}, upsert=True
        )

    def foreign_message(self) -> str:
        where = redact_url(self.uri())
        return foreign_message(
            f"{self.display_name} database {DATABASE!r}",
            where,
            f"db.getSiblingDB('{DATABASE}').dropDatabase()",
            f"db.getSiblingDB('{DATABASE}').{MARKER_COLLECTION}.insertOne("
            f"{{_id: '{MARKER_ID}', created_by: 'created by docbench'}})",
        )

    # ----- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        """Check that the server answers; make sure its database ``docbench`` is docbench's."""
        self.client().admin.command("ping")
        self.ensure_database()

    def stop(self) -> None:
        self.release()

    def restart(self) -> None:
        """A server reached by URL is not restarted: nothing happens (can_restart False)."""

    def is_alive(self) -> bool:
        try:
            self.client().admin.command("ping")
            return True
        except Exception:  # noqa: BLE001
            return False

    def release(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()
            self._client = None

    # ----- disk --------------------------------------------------------------------------
    def query_pids(self) -> list[int]:
        """The processes whose memory and reads a query is charged with: the server's own
        (none for a server reached by URL)."""
        return self.server_pids()

    def on_disk(self) -> int | None:
        """Bytes of a data directory docbench owns (none for a server reached by URL)."""
        return None

    def storage_detail(self) -> JsonObject:
        """Engine facts for a size's detail (backend files and the like)."""
        return {}

    # ----- versions ----------------------------------------------------------------------
    def version(self) -> str | None:
        with contextlib.suppress(Exception):
            return version_text(self.build_info())
        return self.availability(self.url).version

    def versions(self) -> dict[str, str]:
        found: dict[str, str] = {}
        with contextlib.suppress(Exception):
            info = self.build_info()
            if ferretdb_version(info):
                found["ferretdb"] = str(ferretdb_version(info))
                found["mongodb_api"] = str(info.get("version"))
            else:
                found["mongodb"] = str(info.get("version"))
        with contextlib.suppress(Exception):
            found["pymongo"] = import_pymongo().version
        return found


ENGINE = MongoDBEngine

__all__ = ["DATABASE", "ENGINE", "MARKER_COLLECTION", "MongoDBEngine", "mongo_client", "version_text"]
