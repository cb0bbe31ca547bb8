"""Shared pytest fixtures."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


def _own_directories_per_worker() -> None:
    """Under pytest-xdist (``make test`` runs two workers) each worker gets its own
    DOCBENCH_HOME and DOCBENCH_DATA below the session's: work directories are named after the
    system and variant, run locks and caches live there, and two workers must not share them."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    for name, default in (("DOCBENCH_HOME", ".docbench"), ("DOCBENCH_DATA", "data")):
        own = Path(os.environ.get(name, default)).resolve() / f"xdist-{worker}"
        own.mkdir(parents=True, exist_ok=True)
        own.chmod(0o755)  # the unprivileged server user enters it
        os.environ[name] = str(own)


_own_directories_per_worker()

# Search-engine nodes of the tests get a small heap (the tests load a few thousand documents):
# a 3 GB heap pre-touched at every JVM start costs seconds and memory. Cluster tests set theirs.
os.environ.setdefault("DOCBENCH_SEARCH_HEAP", "512m")
# ... and the JVM's quick compiler only: a node's start took 33 s of CPU with the optimizing
# compiler and 19-20 s without it, and the suite starts dozens of nodes on 2 cores.
os.environ.setdefault("DOCBENCH_SEARCH_JVM_OPTIONS", "-XX:TieredStopAtLevel=1")
# The same for Spark's JVMs, with 1 GiB each (a few thousand documents).
os.environ.setdefault("DOCBENCH_SPARK_JVM_OPTIONS", "-XX:TieredStopAtLevel=1")
os.environ.setdefault("DOCBENCH_SPARK_MEMORY", "1g")


def shared_dir() -> Path:
    """The shared directory beside the repository (``$DOCBENCH_SHARED`` overrides it)."""
    env = os.environ.get("DOCBENCH_SHARED")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The real Bluesky events of ``shared/data/bluesky-real`` (skips when absent)."""
    path = shared_dir() / "data" / "bluesky-real"
    if not path.is_dir():
        # CI always has shared/ beside the clone: there a missing directory is a failure.
        missing = pytest.fail if os.environ.get("CI") else pytest.skip
        missing(f"real events not found at {path} (set DOCBENCH_SHARED)")
    return path


@contextlib.contextmanager
def fresh_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh DOCBENCH_HOME for a test's engines and kept results, removed after.

    Not under pytest's private (0700) temp root: servers that refuse root (PostgreSQL,
    MariaDB, Elasticsearch) run as an unprivileged user that must be able to enter it. The
    installed servers stay where they are (DOCBENCH_OPT).
    """
    from docbench.core import paths

    home = Path(tempfile.mkdtemp(prefix="docbench-test-home-"))
    home.chmod(0o755)
    monkeypatch.setenv("DOCBENCH_OPT", str(paths.opt_dir()))
    monkeypatch.setenv("DOCBENCH_HOME", str(home))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def own_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The test's own DOCBENCH_HOME (fresh_home): modules that need it for every test say
    ``pytestmark = pytest.mark.usefixtures("own_home")``."""
    with fresh_home(monkeypatch) as home:
        yield home


def small_copy(real_data_dir: Path, tmp_path: Path) -> Path:
    """A dataset directory of one file: the first 1,000 real events."""
    target = tmp_path / "data" / "small"
    target.mkdir(parents=True)
    shutil.copy(real_data_dir / "jsonbench_file_0001_first1000.jsonl", target / "file_0001.json")
    return target


@pytest.fixture
def real_small(real_data_dir: Path, tmp_path: Path) -> Path:
    """One file of 1,000 real events (small_copy)."""
    return small_copy(real_data_dir, tmp_path)


@pytest.fixture(scope="session")
def generated_6k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated dataset of 6,000 documents in two files (with its manifest and answers);
    file_0001 holds one hard document of each of the five kinds."""
    from docbench.dataset.generate import generate_dataset

    out = tmp_path_factory.mktemp("bluesky-6k")
    generate_dataset(6_000, out, seed=20, jobs=2, docs_per_file=3_000, quiet=True)
    return out


def broad_systems() -> list[str]:
    """The systems the broad tests (runner, workloads) run: all but those that are another
    version of a system (their smoke tests cover them: Engine.smoke_tests_only)."""
    from docbench.systems import REGISTERED, engine_class

    return [name for name in REGISTERED if not engine_class(name).smoke_tests_only]


def managed_server_systems() -> list[str]:
    """The broad systems whose server docbench starts itself."""
    from docbench.systems import engine_class

    return [
        name
        for name in broad_systems()
        if not engine_class(name).embedded and not engine_class(name).url_only
    ]


@dataclass(frozen=True)
class Role:
    """A system and variant a cross-cutting test borrows for what it is (a quick embedded
    engine, a server, a search engine...), not for its name: the test asserts what any system
    in that role must do. A system's own behaviour is tested in its ``test_system_*.py``."""

    system: str
    variant: str

    @property
    def display_name(self) -> str:
        from docbench.systems import engine_class

        return engine_class(self.system).display_name


# The one place outside the systems' own test modules that names systems (the architecture
# test holds the rest of the tests to the registry): each role's system, chosen for what it is.
QUICK = Role("sqlite", "jsonb")  # the quickest embedded engine: the runner's default probe
QUICK_OTHER = Role("sqlite", "text")  # the same engine, another representation
EMBEDDED = Role("duckdb", "default")  # a second embedded engine, another family
COLUMNAR = Role("clickhouse", "lz4")  # an embedded columnar engine with a JSON type
OLD_VERSION = Role("duckdb113", "jsonbench")  # another version of a system (smoke tests only)
SQL_SERVER = Role("postgresql", "pglz")  # a managed SQL server
SQL_SERVER_OTHER = Role("mariadb", "default")  # a second SQL server, another family
DOCUMENT_SERVER = Role("ferretdb", "lz4")  # a managed MongoDB-compatible server
BY_URL_ONLY = Role("mongodb", "snappy")  # a system docbench reaches by URL only
SEARCH = Role("elasticsearch", "default")  # a managed search engine
SEARCH_OTHER = Role("opensearch", "default")  # a second search engine
LOGS = Role("victorialogs", "default")  # a log store


class SharedServers:
    """One managed server per system for the whole test session, started on first use and
    handed to tests by URL (``served_url``): docbench creates and marks its own database or
    index there, as on any user's server. Tests about managing a server (lifecycle, cold
    restarts, clusters, a variant that reconfigures its server) start their own instead."""

    def __init__(self) -> None:
        self.engines: dict[str, Any] = {}
        self.bases: list[Path] = []

    def url(self, name: str) -> str:
        """The URL of the session's server of system ``name`` (installed by `docbench setup`
        first, idempotent; a system that cannot run here skips the test, or fails it in CI)."""
        if name not in self.engines:
            self.engines[name] = self._start(name)
        elif not self.engines[name].is_alive():
            # A shared server that died would fail every later test of its system with
            # "connection refused": say why once, with its log, and start another one.
            dead = self.engines.pop(name)
            server = getattr(dead, "server", None)
            tail = server.log_tail(40) if server is not None and hasattr(server, "log_tail") else ""
            pytest.fail(f"the session's {name} server died; its log ends:\n{tail}")
        url = self.engines[name].served_url()
        assert url, f"{name} has no URL to share"
        return str(url)

    def _start(self, name: str) -> Any:
        from docbench.setup import setup_systems
        from docbench.systems import engine_class

        cls = engine_class(name)
        if not cls.availability().ok and setup_systems([name]) != 0:
            reason = cls.availability().reason
            (pytest.fail if os.environ.get("CI") else pytest.skip)(f"{name}: {reason}")
        # Not pytest's 0700 temp root: the unprivileged server user must reach its data.
        base = Path(tempfile.mkdtemp(prefix=f"docbench-shared-{name}-"))
        base.chmod(0o755)
        self.bases.append(base)
        engine = cls(base / "work")
        engine.start()
        return engine

    def stop_all(self) -> None:
        for engine in self.engines.values():
            with contextlib.suppress(Exception):
                engine.stop()
        for base in self.bases:
            shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def shared_servers() -> Iterator[SharedServers]:
    servers = SharedServers()
    try:
        yield servers
    finally:
        servers.stop_all()


@pytest.fixture(scope="session")
def server_url(shared_servers: SharedServers, request: pytest.FixtureRequest) -> Any:
    """``server_url(name)``: the session's server of a server system by URL, None for an
    embedded engine (which each test opens in its own directory), the mongodb system's server
    (see mongodb_url) for ``mongodb``."""
    from docbench.systems import engine_class

    def url_of(name: str) -> str | None:
        if name == "mongodb":
            return str(request.getfixturevalue("mongodb_url"))
        return None if engine_class(name).embedded else shared_servers.url(name)

    return url_of


@pytest.fixture(scope="session")
def mongodb_url(shared_servers: SharedServers) -> str:
    """The server the mongodb system's tests reach by URL: $DOCBENCH_MONGODB_URL when set (a
    real MongoDB), else the session's FerretDB 2 on DocumentDB (``docbench setup ferretdb``),
    so that no mongodb test is skipped for want of a server."""
    return os.environ.get("DOCBENCH_MONGODB_URL") or shared_servers.url("ferretdb")


# Modules by falling run time on a quiet 2-core machine (`make test`'s --durations; the clusters
# and the runner's every-system pass first). pytest-xdist hands whole modules to its two workers
# in collection order: the longest first, so that the workers finish together (the longest last
# left one worker idle for minutes). The others keep their order, after these.
SLOWEST_MODULES = (
    "test_search_cluster",
    "test_runner",
    "test_storage_workload",
    "test_native_refusals",
    "test_system_spark",
    "test_updates_workload",
    "test_throughput_workload",
    "test_documents",
    "test_damaged_checkpoints",
    "test_compressed",
    "test_shapes_workload",
    "test_ingest",
    "test_lifecycle",
    "test_resume_load",
    "test_system_elasticsearch",
    "test_system_opensearch",
    "test_url_servers",
    "test_native_crate",
)


# Fixtures that start or reach a database server: a test that asks for one is a server test.
SERVER_FIXTURES = {"server_url", "shared_servers", "mongodb_url"}


def is_quick(item: pytest.Item) -> bool:
    """A test of `make test-quick` (the inner loop, under a minute): no server, not in a
    system's own module, not in one of the slowest modules."""
    stem = item.path.stem
    return not (
        SERVER_FIXTURES & set(getattr(item, "fixturenames", ()))
        or stem.startswith("test_system_")
        or stem in SLOWEST_MODULES
        or stem
        in ("test_url_servers", "test_dashboard", "test_site", "test_portable_queries", "test_concurrency")
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(SLOWEST_MODULES)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))
    for item in items:
        if item.get_closest_marker("server") is None:  # a test may say it is one itself
            item.add_marker(pytest.mark.quick if is_quick(item) else pytest.mark.server)
