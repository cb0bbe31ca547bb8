"""The cases every system shares in the analytics workload (docbench/contracts/analytics.py:
AnalyticsAdapter, Loader, QuerySession), written once; each tests/test_system_<name>.py is a
subclass that names its system and adds only what is its own.

Not collected by itself (no ``Test`` prefix): a class ``TestX(AnalyticsAdapterSuite)`` in a
test module is. The pieces:

* :class:`AnalyticsAdapterSuite` -- every system: registered and available, every real event
  loaded (count, round trip), the five queries against the oracle (engine seconds, plan),
  storage. Its ``loaded`` fixture is class-scoped and holds, for a server system, the session's
  shared server by URL (conftest's ``server_url``: docbench makes and marks its own database
  there); an embedded engine gets a directory of its own.
* :class:`SQLTableCases` -- the engines that keep each document as a row of one table
  (PostgreSQL, MariaDB, DuckDB, SQLite): each refused line alone and among good ones, the hard
  documents through the load driver, the native bulk load, a running statement cancelled.
* :class:`EmbeddedCases` -- DuckDB and SQLite: create() on a fresh directory.
* :class:`SQLServerCases` -- PostgreSQL and MariaDB: the plan check of their index (on
  ``loaded``), then what only a managed server of the class's own shows (private and sized,
  URL mode against it, a killed server, stop). Storage runs there too (the data directory is
  measured only on docbench's own server).
* :class:`BadLinesCases` -- the MongoDB wire protocol (mongodb, ferretdb): lines refused or
  stored among good ones.

A subclass lists the mixins before the suite (``class TestX(SQLTableCases,
AnalyticsAdapterSuite)``): pytest runs a class's inherited cases in reverse MRO order, so the
suite's come first, then the mixins', then the subclass's own.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest

from docbench.contracts.analytics import AnalyticsAdapter, QueryOutcome
from docbench.contracts.common import BatchRejected, StorageSize
from docbench.contracts.engine import Engine, setup_script
from docbench.core.answers import check_answer
from docbench.dataset.oracle import compute_answers
from docbench.dataset.reader import dataset_files, iter_lines
from docbench.systems import adapter_class, engine_class, open_engine
from docbench.workloads.load import load_files

# A document every engine stores (the good neighbour of a refused line in a batch).
GOOD_LINE = b'{"did": "did:plc:good", "kind": "commit"}'
# The text of the accepted hard document "backslashes" (did:plc:bs), as stored.
BACKSLASHES_TEXT = 'a\\b "q" \n \t \u00e9 \U0001f600'


# ----- helpers ----------------------------------------------------------------------------


def real_files_of(data_dir: Path) -> list[Path]:
    """The real events: *.jsonl only (other tools may leave metadata files beside them)."""
    files = [p for p in dataset_files(data_dir) if p.name.endswith(".jsonl")]
    assert files
    return files


def non_empty_lines(files: list[Path]) -> list[bytes]:
    return [line for path in files for line in iter_lines(path) if line.strip()]


def work_dir(name: str) -> Path:
    """A work directory the unprivileged server user can reach (pytest's tmp is 0700 root),
    outside pytest's temp root (which other pytest sessions may clean up)."""
    base = Path(tempfile.mkdtemp(prefix=f"docbench-test-{name}-"))
    os.chmod(base, 0o711)
    return base


def same_documents(stored: list[str], lines: list[bytes]) -> None:
    """The stored documents are the loaded ones (as JSON values, in any order)."""
    assert sorted(json.dumps(json.loads(s), sort_keys=True) for s in stored) == sorted(
        json.dumps(json.loads(line), sort_keys=True) for line in lines
    )


def reload(system: AnalyticsAdapter, files: list[Path]) -> None:
    """Back to every real event loaded (after a test that added documents)."""
    system.create()
    report = load_files(system.loader(), files, type(system).load_batch_size)
    assert report.refused_count == 0, report.refused
    system.finish_load()


@contextmanager
def query_session(system: AnalyticsAdapter, timeout: float = 30) -> Iterator[Any]:
    """A session opened as the query worker opens it (from the picklable spec, after the
    adapter released the database), closed after."""
    spec = json.loads(json.dumps({**system.session_spec(), "timeout": timeout}))
    system.release()
    session = type(system).open_session(spec)
    try:
        yield session
    finally:
        session.close()


def check_oracle_answer(system: AnalyticsAdapter, number: int, outcome: QueryOutcome, expected: dict) -> None:
    check = check_answer(number, outcome.rows, expected, time_precision_us=type(system).time_precision_us)
    assert check.status == "ok", (number, check.detail, outcome.rows[:5])
    assert check.detail


def processes_under(path: Path) -> list[int]:
    """PIDs of live processes whose command line mentions `path` (servers we started)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(path) in cmdline:
            found.append(int(proc.name))
    return found


def zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def gone(pid: int) -> bool:
    """The process has exited (or is a zombie its parent has not reaped yet)."""
    return not Path(f"/proc/{pid}").exists() or zombie(pid)


def listening_addresses(port: int) -> set[str]:
    """Local addresses of LISTEN sockets on `port` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if int(port_hex, 16) != port or fields[3] != "0A":  # 0A = LISTEN
                continue
            if len(address) == 8:
                found.add(".".join(str(b) for b in reversed(bytes.fromhex(address))))
            else:
                found.add("ipv6:" + address)
    return found


# ----- every system -----------------------------------------------------------------------


class AnalyticsAdapterSuite:
    """The cases every system shares. A subclass sets the class attributes and overrides the
    ``check_*`` hooks where its engine says more."""

    system_name: ClassVar[str]
    engine_type: ClassVar[type[Engine]]
    adapter_type: ClassVar[type[AnalyticsAdapter]]
    # [(name, role)] of the adapter's variants, in order.
    variant_roles: ClassVar[list[tuple[str, str]]]
    runs_by_default: ClassVar[bool] = True
    has_setup_script: ClassVar[bool] = False
    # True: the cases run once per variant of the adapter (else on the first only).
    every_variant: ClassVar[bool] = False
    # With every_variant: the variants the cases run on (None: all of them); a variant left
    # out is tested by the system's own tests.
    suite_variants: ClassVar[list[str] | None] = None

    # ----- fixtures ----------------------------------------------------------------------
    @pytest.fixture(scope="class")
    @classmethod
    def real_files(cls, real_data_dir: Path) -> list[Path]:
        return real_files_of(real_data_dir)

    @pytest.fixture(scope="class")
    @classmethod
    def real_lines(cls, real_files: list[Path]) -> list[bytes]:
        return non_empty_lines(real_files)

    @pytest.fixture(scope="class")
    @classmethod
    def expected(cls, real_files: list[Path]) -> dict[str, Any]:
        """The oracle's answers for the real events."""
        return compute_answers(real_files)

    @pytest.fixture(scope="class")
    @classmethod
    def variant(cls, request: pytest.FixtureRequest) -> str | None:
        """The variant ``loaded`` loads (None: the first; every one with ``every_variant``)."""
        return getattr(request, "param", None)

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if self.every_variant and "variant" in metafunc.fixturenames:
            names = self.suite_variants or [variant.name for variant in self.adapter_type.variants]
            metafunc.parametrize("variant", names, indirect=True, scope="class")

    @pytest.fixture(scope="class")
    @classmethod
    def engine(cls, server_url, variant: str | None):
        """The engine ``loaded`` loads into, started: the session's server by URL (a server
        system), an embedded engine in a directory of its own (one per variant)."""
        base = work_dir(cls.system_name)
        engine = open_engine(cls.system_name, base / "work", server_url(cls.system_name))
        try:
            engine.start()
            yield engine
        finally:
            engine.stop()
            shutil.rmtree(base, ignore_errors=True)

    @pytest.fixture(scope="class")
    @classmethod
    def loaded_with_report(cls, engine: Engine, variant: str | None, real_files: list[Path]):
        """Every real event loaded through the generic driver (finish_load done), and the
        driver's report."""
        chosen = cls.adapter_type.variant_named(variant) if variant else cls.adapter_type.variants[0]
        system = cls.adapter_type(engine, chosen)
        system.create()
        report = load_files(system.loader(), real_files, cls.adapter_type.load_batch_size)
        assert report.refused_count == 0, report.refused
        system.finish_load()
        try:
            yield system, report
        finally:
            system.release()

    @pytest.fixture(scope="class")
    @classmethod
    def loaded(cls, loaded_with_report):
        return loaded_with_report[0]

    @pytest.fixture(scope="class")
    @classmethod
    def storage_system(cls, loaded):
        """The system test_storage measures (SQLServerCases: ``managed``)."""
        return loaded

    # ----- hooks -------------------------------------------------------------------------
    def check_version(self, version: str | None) -> None:
        assert version

    def check_registration(self) -> None:
        """What else the system declares about itself."""

    def check_stored(self, system: Any, lines: list[bytes]) -> None:
        """The stored documents are the loaded ones (where the engine gives them back)."""

    def check_outcome(self, number: int, outcome: QueryOutcome) -> None:
        assert outcome.engine_seconds is not None and 0 <= outcome.engine_seconds < 30

    def check_explain(self, system: Any, number: int, plan: str | None) -> None:
        assert plan
        assert system.check_plan(number, plan) is None, (number, plan[:500])

    def check_session(self, system: Any, session: Any) -> None:
        """The session after the five queries."""

    def check_storage(self, system: Any, size: StorageSize) -> None:
        pass

    # ----- cases -------------------------------------------------------------------------
    def test_registered_and_available(self):
        assert engine_class(self.system_name) is self.engine_type
        assert adapter_class(self.system_name, "analytics") is self.adapter_type
        assert [(v.name, v.role) for v in self.adapter_type.variants] == self.variant_roles
        assert self.engine_type.runs_by_default is self.runs_by_default
        assert (setup_script(self.engine_type) is not None) is self.has_setup_script
        availability = self.engine_type.availability()
        if self.engine_type.url_only:
            assert not availability.ok and f"--{self.system_name}-url" in availability.reason
        else:
            assert availability.ok, availability.reason
            self.check_version(availability.version)
        self.check_registration()

    def test_count_and_round_trip(
        self, loaded_with_report, real_lines: list[bytes], expected: dict[str, Any]
    ):
        system, report = loaded_with_report
        assert system.count() == len(real_lines) == report.offered == expected["documents"]
        self.check_stored(system, real_lines)

    def test_queries_match_the_oracle(self, loaded, expected: dict[str, Any]):
        with query_session(loaded) as session:
            for number, text in enumerate(loaded.queries(), start=1):
                outcome = session.execute(number, text)
                check_oracle_answer(loaded, number, outcome, expected)
                self.check_outcome(number, outcome)
                self.check_explain(loaded, number, session.explain(number, text))
            self.check_session(loaded, session)

    def test_storage(self, storage_system):
        system = storage_system
        size = system.storage()
        assert size.total and size.total > 0 and size.data and size.data > 0
        self.check_storage(system, size)


# ----- one table of documents: PostgreSQL, MariaDB, DuckDB, SQLite -------------------------


class SQLTableCases:
    """Refused lines, hard documents, native load and cancel, on the suite's ``loaded``."""

    adapter_type: ClassVar[type[AnalyticsAdapter]]
    # Lines the engine refuses (-> BatchRejected) and lines it stores, by name; the accepted
    # ones hold a document did:plc:bs with a "text" of BACKSLASHES_TEXT.
    refused: ClassVar[dict[str, bytes]]
    accepted: ClassVar[dict[str, bytes]]
    # test_cancel: a statement that runs for seconds, what it raises when cancelled (and
    # stopped by the session's statement timeout, where the engine has one), in how long.
    slow_query: ClassVar[str]
    cancel_error: ClassVar[type[BaseException]] = Exception
    cancel_match: ClassVar[str | None] = None
    cancel_within: ClassVar[float] = 5
    statement_timeout: ClassVar[bool] = False

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        suite = getattr(super(), "pytest_generate_tests", None)
        if suite is not None:  # the suite's own parametrization (its variants)
            suite(metafunc)
        if "refused_name" in metafunc.fixturenames:
            metafunc.parametrize("refused_name", sorted(self.refused))

    # ----- hooks -------------------------------------------------------------------------
    def check_refusal(self, alone: str, among: str) -> None:
        """The engine's messages for a refused line alone and among good lines."""

    def after_refusals(self, system: Any, loader: Any, before: int) -> None:
        """The loader after its refusals (still open)."""

    def stored_text(self, system: Any, did: str) -> str:
        """The "text" of the stored document ``did``."""
        raise NotImplementedError

    def check_hard_documents(self, system: Any) -> None:
        """The stored hard documents, read back."""

    def native_load_files(self, real_files: list[Path], tmp_path: Path) -> tuple[list[list[Path]], int]:
        """The groups of files given to native_load() one after the other, and how many
        documents they add: by default a real file plain and gzipped."""
        import gzip

        plain = real_files[0]
        packed = tmp_path / (plain.name + ".gz")
        packed.write_bytes(gzip.compress(plain.read_bytes()))
        return [[plain, packed]], 2 * len(non_empty_lines([plain]))

    def no_statement_timeout(self, session: Any) -> None:
        """Turn the session's statement timeout off."""

    # ----- cases -------------------------------------------------------------------------
    def test_refused_documents(self, loaded, refused_name: str):
        line = self.refused[refused_name]
        loader = loaded.loader()
        before = loaded.count()
        try:
            with pytest.raises(BatchRejected) as alone:
                loader.load_batch([line])
            # All or nothing: a good document in the same batch is not kept either.
            with pytest.raises(BatchRejected) as among:
                loader.load_batch([GOOD_LINE, line, GOOD_LINE])
            assert str(alone.value) and str(among.value)
            self.check_refusal(str(alone.value), str(among.value))
            assert loaded.count() == before
            self.after_refusals(loaded, loader, before)
        finally:
            loader.close()

    def test_hard_documents(self, loaded, real_files: list[Path], tmp_path: Path):
        """The accepted hard documents and the refused lines in one file, through the generic
        driver: exactly the refused lines are isolated, the others stored, and the answers
        still match the oracle."""
        hard = tmp_path / "hard.jsonl"
        lines = [*self.accepted.values(), *self.refused.values()]
        hard.write_bytes(b"\n".join(lines) + b"\n")
        before = loaded.count()
        try:
            report = load_files(loaded.loader(), [hard], 4)
            assert report.refused_count == len(self.refused)
            assert sorted(r.line for r in report.refused) == list(
                range(len(self.accepted) + 1, len(lines) + 1)
            )
            assert loaded.count() == before + len(self.accepted)
            assert self.stored_text(loaded, "did:plc:bs") == BACKSLASHES_TEXT
            self.check_hard_documents(loaded)
            accepted = tmp_path / "accepted.jsonl"
            accepted.write_bytes(b"\n".join(self.accepted.values()) + b"\n")
            expected = compute_answers([*real_files, accepted])
            assert expected["documents"] == loaded.count()
            spec = loaded.session_spec()
            loaded.release()
            session = self.adapter_type.open_session(spec)
            try:
                for number, query in enumerate(loaded.queries(), start=1):
                    rows = session.execute(number, query).rows
                    check = check_answer(
                        number, rows, expected, time_precision_us=self.adapter_type.time_precision_us
                    )
                    assert check.status == "ok", (number, check.detail, rows)
            finally:
                session.close()
        finally:
            reload(loaded, real_files)
        assert loaded.count() == before

    def test_native_load(self, loaded, real_files: list[Path], tmp_path: Path):
        groups, added = self.native_load_files(real_files, tmp_path)
        before = loaded.count()
        try:
            for files in groups:
                loaded.native_load(files)
            assert loaded.count() == before + added
        finally:
            reload(loaded, real_files)  # back to the loaded state for the tests after this one

    def test_cancel(self, loaded):
        """A running statement is cancelled from another thread (and stopped by the session's
        statement timeout, where the engine has one) within seconds."""
        loaded.release()
        spec = loaded.session_spec()
        session = self.adapter_type.open_session({**spec, "timeout": 0.5} if self.statement_timeout else spec)
        try:
            if self.statement_timeout:
                started = time.monotonic()
                with pytest.raises(self.cancel_error):
                    session.execute(0, self.slow_query)
                assert time.monotonic() - started < self.cancel_within
                self.no_statement_timeout(session)
            timer = threading.Timer(0.5, session.cancel)
            timer.start()
            started = time.monotonic()
            with pytest.raises(self.cancel_error, match=self.cancel_match):
                session.execute(0, self.slow_query)
            assert time.monotonic() - started < self.cancel_within
        finally:
            session.close()


# ----- embedded engines with a database file: DuckDB, SQLite --------------------------------


class EmbeddedCases:
    engine_type: ClassVar[type[Engine]]
    adapter_type: ClassVar[type[AnalyticsAdapter]]

    def stored_text(self, system: Any, did: str) -> str:
        """(SQLTableCases) The "text" of the stored document ``did``, by the engine's JSON
        operators (both engines' table is ``documents (doc)``)."""
        return (
            system.engine.connection()
            .execute("SELECT doc ->> '$.text' FROM documents WHERE doc ->> '$.did' = ?", [did])
            .fetchone()[0]
        )

    def check_one_loaded(self, system: Any) -> None:
        """After the first document was loaded and the loader closed."""

    def check_recreated(self, system: Any) -> None:
        """After create() made the table again."""

    def test_create_starts_empty_and_release_is_safe(self, tmp_path: Path):
        system = self.adapter_type(self.engine_type(tmp_path / "work"), self.adapter_type.variants[0])
        system.create()
        loader = system.loader()
        loader.load_batch([b'{"did": "did:plc:a"}'])
        loader.close()
        assert system.count() == 1
        self.check_one_loaded(system)
        system.create()
        assert system.count() == 0
        self.check_recreated(system)
        system.release()
        system.release()
        system.engine.stop()


# ----- SQL servers docbench manages: PostgreSQL, MariaDB --------------------------------------


class SQLServerCases:
    """The plan check of the index, on ``loaded``; then what only a managed server shows, on
    one of the class's own (``managed``: the first variant with every real event loaded),
    started once. The last case stops it."""

    system_name: ClassVar[str]
    engine_type: ClassVar[type[Engine]]
    adapter_type: ClassVar[type[AnalyticsAdapter]]
    # The engine's attribute holding its managed server (None by URL).
    server_attribute: ClassVar[str]
    # The variant the URL-mode case loads on the managed server, reached by URL.
    url_variant: ClassVar[str]
    # How many processes the running server has at least (PostgreSQL: postmaster + children).
    server_processes: ClassVar[int] = 1
    # test_plan_check: the session settings of its first plan (which must use the index), and
    # the word of the plan's full scan when the index is not used.
    plan_session_settings: ClassVar[dict[str, str] | None] = None
    full_scan: ClassVar[str]

    @pytest.fixture(scope="class")
    @classmethod
    def managed(cls, real_files: list[Path]):
        """A managed server with every real event loaded and the index built."""
        base = work_dir(f"{cls.system_name}-managed")
        system = cls.adapter_type(cls.engine_type(base / "work"), cls.adapter_type.variants[0])
        try:
            system.engine.start()
            system.create()
            report = load_files(system.loader(), real_files, cls.adapter_type.load_batch_size)
            assert report.refused_count == 0, report.refused
            system.finish_load()
            yield system
        finally:
            system.engine.stop()
            shutil.rmtree(base, ignore_errors=True)

    @pytest.fixture(scope="class")
    @classmethod
    def storage_system(cls, managed):
        """Storage on docbench's own server: its data directory is measured too."""
        return managed

    def server_of(self, engine: Engine) -> Any:
        return getattr(engine, self.server_attribute)

    # ----- hooks -------------------------------------------------------------------------
    def check_plan_text(self, plan: str) -> None:
        """The plan is the engine's EXPLAIN (JSON)."""

    def explain_without_index(self, system: Any, session: Any, query: str) -> str:
        """The plan of ``query`` when the index is not used."""
        raise NotImplementedError

    def check_server_settings(self, system: Any, server: Any) -> None:
        """The server's own settings, as the server reports them."""

    def server_socket(self, server: Any) -> Path:
        raise NotImplementedError

    def server_pid_file(self, server: Any) -> Path:
        raise NotImplementedError

    def user_database(self, system: Any) -> str:
        """Make a database of a user's on the managed server, holding a table named like
        docbench's (one row 'mine'); the URL that names it, password included."""
        raise NotImplementedError

    def check_url_system(self, system: Any, size: StorageSize, server: Any) -> None:
        """The system by URL after its load: its storage, its session spec."""

    def check_user_database(self, system: Any) -> None:
        """After the load by URL: the server's databases, the user's table untouched."""

    # ----- cases -------------------------------------------------------------------------
    def test_plan_check(self, loaded):
        spec = loaded.session_spec()
        if self.plan_session_settings:
            spec = {**spec, "session_settings": self.plan_session_settings}
        session = self.adapter_type.open_session(spec)
        try:
            q2 = loaded.queries()[1]
            plan = session.explain(2, q2)
            assert loaded.index in plan
            self.check_plan_text(plan)
            assert loaded.check_plan(2, plan) is None
            warning = loaded.check_plan(2, self.explain_without_index(loaded, session, q2))
            assert warning and loaded.index in warning and self.full_scan in warning
            assert loaded.check_plan(1, session.explain(1, loaded.queries()[0])) is None
        finally:
            session.close()

    def test_server_is_private_and_sized(self, managed):
        server = self.server_of(managed.engine)
        assert server is not None and server.port
        self.check_server_settings(managed, server)
        # Every listening TCP socket on our port is bound to 127.0.0.1 only.
        listening = listening_addresses(server.port)
        assert listening == {"127.0.0.1"}, listening
        # The unix socket is inside the work directory; the server runs as the unprivileged user.
        assert self.server_socket(server).is_socket()
        if os.geteuid() == 0:
            assert os.stat(f"/proc/{server.pid}").st_uid == server.user.pw_uid

    def test_url_mode_uses_its_own_database(self, managed, real_files: list[Path], real_lines: list[bytes]):
        """The managed server as a user's server, reached by URL: docbench makes and uses its
        own database there, touches nothing else, never restarts or stops that server."""
        server = self.server_of(managed.engine)
        url = self.user_database(managed)
        base = work_dir(f"{self.system_name}-url")
        system = self.adapter_type(
            self.engine_type(base / "url-work", url=url), self.adapter_type.variant_named(self.url_variant)
        )
        try:
            assert system.engine.can_restart is False and self.server_of(system.engine) is None
            assert self.engine_type.availability(url).ok
            system.engine.start()
            system.create()
            load_files(system.loader(), real_files, self.adapter_type.load_batch_size)
            system.finish_load()
            assert system.count() == len(real_lines)
            size = system.storage()
            assert size.on_disk is None and size.total
            self.check_url_system(system, size, server)
            pid = server.pid
            system.engine.restart()  # a user's server is never restarted
            assert server.pid == pid and system.engine.is_alive()
            self.check_user_database(managed)
            system.engine.stop()
            assert server.accepting()  # stop() of a URL system leaves the server running
        finally:
            system.engine.stop()
            shutil.rmtree(base, ignore_errors=True)

    def test_crash_is_detected_and_restart_recovers(self, managed):
        server = self.server_of(managed.engine)
        assert server is not None and managed.engine.is_alive()
        count = managed.count()
        managed.release()
        port = server.port
        idle = self.adapter_type.open_session(managed.session_spec())  # a client outlives the kill
        try:
            os.kill(server.pid, signal.SIGKILL)  # our own server
            server.process.proc.wait(timeout=10)
            assert not managed.engine.is_alive()
            managed.engine.restart()
        finally:
            idle.close()
        assert managed.engine.is_alive() and server.port == port
        assert managed.count() == count  # committed documents survive (crash recovery)

    def test_stop_leaves_no_process(self, managed):
        server = self.server_of(managed.engine)
        pids = managed.engine.server_pids()
        assert len(pids) >= self.server_processes and pids[0] == server.pid
        managed.engine.stop()
        managed.engine.stop()  # safe twice
        for pid in pids:
            assert gone(pid), pid
        assert not self.server_pid_file(server).exists()


# ----- the MongoDB wire protocol: mongodb, ferretdb -----------------------------------------


class BadLinesCases:
    """Lines refused or stored among good ones, in a collection of the case's own on the
    class's engine."""

    adapter_type: ClassVar[type[AnalyticsAdapter]]
    good_line: ClassVar[bytes]
    # name -> (line, refused?)
    bad_lines: ClassVar[dict[str, tuple[bytes, bool]]]

    def test_bad_lines(self, engine: Engine):
        variant = dataclasses.replace(self.adapter_type.variants[0], name="bad_lines")
        system: Any = self.adapter_type(engine, variant)
        system.create()
        loader = system.loader()
        refused = set()
        try:
            for name, (line, _) in self.bad_lines.items():
                before = system.count()
                try:
                    loader.load_batch([self.good_line, line, self.good_line])
                except BatchRejected as error:
                    assert str(error)
                    refused.add(name)
                    assert system.count() == before, f"{name}: part of a refused batch was kept"
                else:
                    assert system.count() == before + 3, name
        finally:
            loader.close()
            system.collection().drop()
        assert refused == {name for name, (_, bad) in self.bad_lines.items() if bad}
