"""Databend: the embedded build of the ``databend`` Python package (Databend's query engine and
its fuse storage in-process, no server).

That package starts its engine when it is imported, once per process, in the directory the
process is in (``.databend/_meta`` for the metadata, ``.databend/_data`` for the tables) and
holds the metadata store until the process ends. A database is therefore a process here:
:class:`DatabendHost` runs ``host.py`` in the database directory (``<workdir>/databend``) and
sends it SQL. The engine's own host (loading, counts, sizes) is closed by :meth:`release`, so
that the query worker's host can open the same directory; each query session starts a host of
its own (a fresh process: a cold engine).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import docbench
from docbench.contracts.common import Availability
from docbench.contracts.engine import Engine
from docbench.core.ownership import claim_directory
from docbench.servers.managed import child_setup

DATABASE_DIRECTORY = "databend"
HOST_LOG = "databend-host.log"
# A statement's error that says the documents themselves were refused (not I/O, not a bug).
CONTENT_ERRORS = ("BadBytes", "Invalid JSON", "expected value", "Code: 1046", "Code: 1006")


# Lines joined per write() of a temporary batch file.
WRITE_CHUNK_LINES = 8192


def write_lines(path: Path, lines: list[bytes]) -> None:
    """Write lines as ndjson, a chunk of lines per write."""
    with open(path, "wb") as out:
        for start in range(0, len(lines), WRITE_CHUNK_LINES):
            out.write(b"\n".join(lines[start : start + WRITE_CHUNK_LINES]) + b"\n")


class DatabendError(RuntimeError):
    """A statement Databend refused, with its message (the Rust backtrace left out)."""


class HostGone(DatabendError):
    """The host process ended (killed by :meth:`DatabendHost.kill`, or it crashed)."""


def databend_version() -> str:
    from importlib.metadata import version

    return version("databend")


def is_content_error(error: Exception) -> bool:
    return (
        isinstance(error, DatabendError)
        and not isinstance(error, HostGone)
        and any(marker in str(error) for marker in CONTENT_ERRORS)
    )


def sql_string(text: str) -> str:
    """A Databend string literal (backslashes are escapes in Databend's literals)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


class DatabendHost:
    """One process holding the embedded engine of one database directory; statements run one
    at a time (a lock), from any thread."""

    def __init__(self, directory: Path, log: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        package_root = str(Path(docbench.__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = package_root + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.log = log
        self._log_file: IO[bytes] = open(log, "ab")  # noqa: SIM115 - closed with the host
        self.process = subprocess.Popen(
            [sys.executable, "-m", "docbench.systems.databend.host"],
            cwd=directory,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log_file,
            preexec_fn=child_setup(None, signal.SIGKILL),  # noqa: PLW1509 - dies with its parent
        )
        self._lock = threading.Lock()
        self.version = str(self._answer()[0][0][0])

    @property
    def pid(self) -> int:
        return self.process.pid

    def _log_tail(self) -> str:
        try:
            lines = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(lines[-5:])

    def _answer(self) -> tuple[list[tuple[Any, ...]], float]:
        assert self.process.stdout is not None
        try:
            message = pickle.load(self.process.stdout)
        except (EOFError, pickle.UnpicklingError, OSError) as error:
            code = self.process.wait()
            tail = self._log_tail()
            raise HostGone(
                f"the Databend process ended (exit status {code})" + (f": {tail}" if tail else "")
            ) from error
        if message[0] == "error":
            raise DatabendError(message[1])
        return message[1], message[2]

    def execute(self, text: str) -> tuple[list[tuple[Any, ...]], float]:
        """The statement's rows and Databend's time for it (measured in the host, seconds)."""
        with self._lock:
            if self.process.poll() is not None:
                raise HostGone(f"the Databend process ended (exit status {self.process.returncode})")
            assert self.process.stdin is not None
            try:
                pickle.dump((text,), self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
                self.process.stdin.flush()
            except (BrokenPipeError, OSError) as error:
                raise HostGone(f"the Databend process ended: {error}") from error
            return self._answer()

    def rows(self, text: str) -> list[tuple[Any, ...]]:
        return self.execute(text)[0]

    def kill(self) -> None:
        """Stop the host at once (a statement running in it fails with HostGone)."""
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()

    def close(self) -> None:
        """End the host: its standard input closed, it exits and the metadata store is free."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._log_file.close()


class DatabendEngine(Engine):
    name = "databend"
    display_name = "Databend"
    embedded = True
    runs_by_default = False
    install_hint = "pip install databend"
    notes = (
        "Embedded Databend (the databend Python package: query engine and fuse storage "
        "in-process, in a process of docbench's per database); one VARIANT column, no "
        "virtual columns (a commercial feature in this build). Engine time is measured in "
        "the engine's process around each statement."
    )

    def __init__(self, workdir: Path, url: str | None = None) -> None:
        super().__init__(workdir, url)
        self._host: DatabendHost | None = None

    @property
    def directory(self) -> Path:
        """The database directory docbench owns (the engine's ``.databend`` is in it)."""
        return self.workdir / DATABASE_DIRECTORY

    @classmethod
    def availability(cls, url: str | None = None) -> Availability:
        try:
            version = databend_version()
        except Exception as error:  # noqa: BLE001 - any failure means it cannot run
            return Availability(
                False,
                reason=f"the databend Python package is missing ({error})",
                install_hint=cls.install_hint,
            )
        return Availability(True, version=version)

    def versions(self) -> dict[str, str]:
        version = self.version()
        return {"databend": version} if version else {}

    # ----- connections -------------------------------------------------------------------
    def connect(self) -> DatabendHost:
        """A new host process on the database directory (only one may hold it at a time)."""
        claim_directory(self.workdir)
        return DatabendHost(self.directory, self.workdir / HOST_LOG)

    def connection(self) -> DatabendHost:
        """This process's own host, started on first use."""
        if self._host is None:
            self._host = self.connect()
        return self._host

    def release(self) -> None:
        if self._host is not None:
            host, self._host = self._host, None
            host.close()

    def stop(self) -> None:
        self.release()

    def remove_database(self) -> None:
        """End this process's host and delete the database directory, so that sizes never
        include files of an earlier load."""
        self.release()
        shutil.rmtree(self.directory, ignore_errors=True)


ENGINE = DatabendEngine
