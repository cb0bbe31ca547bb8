"""Life of the servers docbench starts: loopback only, own data directory, stopped by PID.

Every process started through :class:`ManagedProcess` is remembered in a registry and stopped
at interpreter exit (also after Ctrl-C, SIGHUP and SIGTERM: see docbench/runlock.py) if the run
did not stop it, so a failed run leaves no server behind. docbench only ever signals PIDs it
started itself.

Two more guards cover the ends no Python code sees (SIGKILL, a crash of the interpreter):

* the server dies with docbench: the child sets PR_SET_PDEATHSIG to its stop signal before it
  execs the server, so the kernel sends it that signal when docbench's process ends;
* a pid file (``docbench-server.pid`` in the work directory, next to the data directory)
  records the server's PID, its start time (``/proc/PID/stat``) and command line. Before a
  server starts in that directory, a server left running there by an earlier docbench is
  stopped; a PID that now belongs to another process is left alone.

Every server docbench manages builds on :class:`ManagedServer` (one process; :class:`PortedServer`
for what starts several, a search cluster): ports on 127.0.0.1 kept across restarts in a port
file, a free pick otherwise, start, readiness wait, another try when the server exits during
start-up (a port taken meanwhile), the pid file through :class:`ManagedProcess`. A server only
says what is its own: its command line and configuration, its readiness probe.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import logging
import multiprocessing
import os
import pwd
import select
import shlex
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from docbench.core import runlock
from docbench.core.jsontypes import JsonObject, as_array, as_int, as_object, as_str, is_object, optional_int
from docbench.core.ownership import claim_directory, removal_refusal, remove_owned_tree
from docbench.core.procstats import boot_id, process_start_time

log = logging.getLogger(__name__)
_RUNNING: dict[int, ManagedProcess] = {}

UNPRIVILEGED_USER = "docbench"
PID_FILE_NAME = "docbench-server.pid"
# How long a server left running by an earlier docbench gets to stop before SIGKILL (a
# shutdown checkpoint after a big load takes a while; a SIGKILL is recovered at the next start).
LEFTOVER_STOP_TIMEOUT = 120.0
_PR_SET_PDEATHSIG = 1
_CLONE_NEWNS = 0x00020000
_MS_BIND, _MS_REC, _MS_PRIVATE = 4096, 16384, 1 << 18


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def ensure_unprivileged_user(name: str = UNPRIVILEGED_USER) -> pwd.struct_passwd | None:
    """Servers that refuse to run as root (PostgreSQL, Elasticsearch) run as this user.

    Returns None when docbench is not root (then servers simply run as the current user).
    """
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(name)


def chown_tree(path: Path, user: pwd.struct_passwd | None) -> None:
    if user is None:
        return
    for root, dirs, files in os.walk(path):
        for entry in [root, *(os.path.join(root, d) for d in dirs), *(os.path.join(root, f) for f in files)]:
            with contextlib.suppress(FileNotFoundError):
                os.lchown(entry, user.pw_uid, user.pw_gid)


def first_blocked_ancestor(path: Path, user: pwd.struct_passwd | None) -> str | None:
    """The first ancestor of ``path`` (or path itself) that ``user`` cannot traverse, or None
    if the unprivileged server user can reach it (or the server runs as the current user)."""
    if user is None:
        return None
    groups = set(os.getgrouplist(user.pw_name, user.pw_gid))
    for ancestor in reversed([path, *path.parents]):
        try:
            st = ancestor.stat()
        except FileNotFoundError:
            return None
        if st.st_uid == user.pw_uid:
            ok = bool(st.st_mode & stat.S_IXUSR)
        elif st.st_gid in groups:
            ok = bool(st.st_mode & stat.S_IXGRP)
        else:
            ok = bool(st.st_mode & stat.S_IXOTH)
        if not ok:
            return str(ancestor)
    return None


def demote(user: pwd.struct_passwd | None) -> Callable[[], None] | None:
    """A preexec_fn that drops root privileges to `user` in the child."""
    if user is None:
        return None

    def _drop() -> None:
        os.setgid(user.pw_gid)
        os.initgroups(user.pw_name, user.pw_gid)
        os.setuid(user.pw_uid)

    return _drop


# ----- processes by identity: (boot, PID, start time), never a bare PID ---------------------
# (process_start_time and boot_id: docbench.core.procstats, which the results use too)
def process_cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


class ProcessIdentity(TypedDict):
    """A process as a pid file records it: what tells it from a later process of its PID."""

    pid: int
    start_time: int | None
    command: str


def _identity(pid: int, command: str = "") -> ProcessIdentity:
    return {"pid": pid, "start_time": process_start_time(pid), "command": process_cmdline(pid) or command}


def _open_same(pid: int, start_time: int | None) -> int | None:
    """A pidfd of process ``pid`` if it is still the one that started at ``start_time`` (the
    pidfd is opened before the check, so a signal sent through it cannot reach a successor)."""
    if start_time is None:
        return None
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return None
    if process_start_time(pid) != start_time:
        os.close(fd)
        return None
    return fd


def stop_process(pid: int, start_time: int | None, sig: int = signal.SIGTERM, timeout: float = 30.0) -> bool:
    """Stop the process (pid, start_time) that is not our child: ``sig`` (and SIGCONT, so that
    a stopped process acts on it), SIGKILL after ``timeout``. Nothing happens when that process
    is gone (the PID may be another process's by now). Returns whether it was signalled."""
    fd = _open_same(pid, start_time)
    if fd is None:
        return False
    try:
        for each in (sig, signal.SIGCONT):
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(fd, each)
        # A pidfd turns readable when its process exits.
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(timeout * 1000):
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(fd, signal.SIGKILL)
            poller.poll(30_000)
    finally:
        os.close(fd)
    return True


# ----- the pid file of a work directory --------------------------------------------------
def pid_file_in(workdir: Path) -> Path:
    return workdir / PID_FILE_NAME


def recorded_pids(workdir: Path) -> list[int]:
    """The live processes the pid file of ``workdir`` records (another process of the run --
    a query worker -- asking which processes the server is)."""
    record = _read_pid_file(pid_file_in(workdir))
    entries = as_array(record["processes"], "processes") if record else []
    pids = [as_object(entry, "process").get("pid") for entry in entries]
    return [pid for pid in pids if isinstance(pid, int) and process_start_time(pid) is not None]


def _say(message: str) -> None:
    print(f"docbench: {message}", file=sys.stderr, flush=True)


def _read_pid_file(path: Path) -> JsonObject | None:
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        record = None
    if not is_object(record) or not isinstance(record.get("processes"), list):
        _say(f"removed unreadable pid file {path}")
        path.unlink(missing_ok=True)
        return None
    return record


def _same_process(entry: JsonObject, record: JsonObject) -> bool:
    pid = entry.get("pid")
    return (
        record.get("boot_id") == boot_id()
        and isinstance(pid, int)
        and entry.get("start_time") is not None
        and process_start_time(pid) == entry["start_time"]
    )


def reap_leftovers(pid_file: Path) -> None:
    """Before a server starts in ``pid_file``'s directory: stop a server an earlier docbench
    left running there (killed by SIGKILL, or on a system without PR_SET_PDEATHSIG), then
    remove the file. Only a process that is still the one recorded (same boot, PID and start
    time) and whose command line names this directory is stopped; a PID that now belongs to
    something else is left alone. A server of another live docbench process is an error."""
    record = _read_pid_file(pid_file)
    if record is None:
        return
    owner = as_object(record.get("owner") or {}, "owner")
    if owner.get("pid") != os.getpid() and _same_process(owner, record):
        raise RuntimeError(
            f"{pid_file.parent} has a server of docbench process {owner['pid']}, which is still running"
        )
    for entry in as_array(record["processes"], "processes"):
        _reap_entry(as_object(entry, "process"), record, pid_file)
    pid_file.unlink(missing_ok=True)


def _reap_entry(entry: JsonObject, record: JsonObject, pid_file: Path) -> None:
    pid = entry.get("pid")
    if not isinstance(pid, int) or process_start_time(pid) is None:
        return  # gone
    command = process_cmdline(pid)
    stop_signal = as_int(record.get("stop_signal", int(signal.SIGTERM)), "stop_signal")
    if _same_process(entry, record) and not command:
        # The recorded process itself (same boot, PID and start time) with its command line
        # gone: it is exiting (e.g. a worker whose docbench was just killed, ending by its
        # death signal). It is waited for, not taken for another process.
        stop_process(pid, optional_int(entry["start_time"], "start_time"), stop_signal, LEFTOVER_STOP_TIMEOUT)
        return
    if not _same_process(entry, record) or str(pid_file.parent) not in command:
        _say(f"stale {pid_file}: PID {pid} is now another process ({command[:80]}), left alone")
        return
    mine = _RUNNING.get(pid)
    if mine is not None:  # this very process runs it: stop it the ordinary way
        mine.stop()
        return
    _say(
        f"stopping server PID {pid} left running in {pid_file.parent} by docbench process "
        f"{as_object(record.get('owner') or {}, 'owner').get('pid')} "
        f"({as_str(entry.get('command', ''), 'command')[:80]})"
    )
    stop_process(pid, optional_int(entry["start_time"], "start_time"), stop_signal, LEFTOVER_STOP_TIMEOUT)


# ----- jails: a server of another distribution's userland ------------------------------------
@dataclass(frozen=True)
class Jail:
    """Run a server inside ``root`` (a chroot docbench made, e.g. Debian sid for PostgreSQL 18),
    with host directories bind-mounted at paths inside it: ``binds`` = (host dir, path in root).

    The child enters a mount namespace of its own before it binds and chroots, so the binds are
    seen by the server's processes only and vanish with the last of them, also after SIGKILL:
    nothing is left mounted on the host, and two servers can bind different directories at the
    same path. Needs root (CAP_SYS_ADMIN), as the server user is dropped to after the chroot."""

    root: Path
    binds: tuple[tuple[Path, str], ...] = ()


def _libc_calls() -> tuple[Callable[..., int], Callable[..., int]]:
    """libc's unshare and mount, loaded in the parent (a forked child should not dlopen)."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.unshare, libc.mount


def _enter_jail(jail: Jail) -> Callable[[], None]:
    """The part of a preexec_fn that enters ``jail`` (run as root, before dropping it)."""
    unshare, mount = _libc_calls()
    root = str(jail.root).encode()
    pairs = [(str(src).encode(), str(jail.root / dst.lstrip("/")).encode()) for src, dst in jail.binds]

    def enter() -> None:
        # Private propagation first: the binds must not leak back into the host's namespace.
        if unshare(_CLONE_NEWNS) != 0 or mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
            os._exit(126)
        for source, target in pairs:
            if mount(source, target, None, _MS_BIND, None) != 0:
                os._exit(126)
        os.chroot(root)
        os.chdir("/")

    return enter


def jailed(user: pwd.struct_passwd | None, jail: Jail | None) -> Callable[[], None] | None:
    """A preexec_fn for a one-off command (initdb): enter ``jail`` if any, then drop to ``user``."""
    enter = _enter_jail(jail) if jail is not None else None
    drop = demote(user)
    if enter is None:
        return drop

    def setup() -> None:
        enter()
        if drop is not None:
            drop()

    return setup


# ----- dying with docbench -----------------------------------------------------------------
def _prctl() -> Callable[..., int] | None:
    """libc's prctl, loaded in the parent (a child between fork and exec should not dlopen)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def child_setup(
    user: pwd.struct_passwd | None, death_signal: int, jail: Jail | None = None
) -> Callable[[], None]:
    """The preexec_fn of every server: enter its ``jail`` if it has one, drop root to ``user``,
    then ask the kernel for ``death_signal`` when docbench's process ends (PR_SET_PDEATHSIG,
    kept across exec).

    The order matters: the jail needs root, and a change of user clears the death signal. The
    death signal follows the thread that forked, so it is only set from the main thread (a
    worker thread's end would stop the server); a server started elsewhere relies on the pid
    file."""
    drop = jailed(user, jail)
    parent = os.getpid()
    prctl = _prctl() if threading.current_thread() is threading.main_thread() else None

    def setup() -> None:
        if drop is not None:
            drop()
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(death_signal), 0, 0, 0)
            if os.getppid() != parent:  # docbench ended before the death signal was set
                os._exit(1)

    return setup


class ServerExited(RuntimeError):
    """A server process ended before it was ready (its log's tail in the message)."""


class ManagedProcess:
    """A long-running server process docbench started; it knows its own PID and log.

    Its pid file (``pid_file``, by default ``docbench-server.pid`` beside the log, in the
    system's work directory) records it and any process it launched that serves in its place
    (:meth:`adopt`), so that a later docbench can stop them if this one dies without doing so.
    """

    # The signal of a normal, prompt shutdown; also the one the server gets when docbench dies.
    stop_signal: int = signal.SIGTERM

    def __init__(
        self,
        argv: Sequence[str],
        log_path: Path,
        *,
        user: pwd.struct_passwd | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        pass_fds: Sequence[int] = (),
        pid_file: Path | None = None,
        jail: Jail | None = None,
        pipes: bool = False,
    ) -> None:
        self.argv = list(argv)
        self.jail = jail
        # A worker that speaks over its stdin and stdout (``proc.stdin``/``proc.stdout``, e.g.
        # the duckdb113 system's DuckDB worker): both are pipes, its stderr goes to the log.
        self.pipes = pipes
        self.log_path = log_path
        self.user = user
        self.env = env
        self.cwd = cwd
        self.pass_fds = tuple(pass_fds)
        self.pid_file = pid_file or pid_file_in(log_path.parent)
        self.proc: subprocess.Popen[bytes] | None = None
        self._recorded: list[ProcessIdentity] = []

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def start(self) -> None:
        reap_leftovers(self.pid_file)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.argv,
                stdout=subprocess.PIPE if self.pipes else log,
                stderr=log if self.pipes else subprocess.STDOUT,
                stdin=subprocess.PIPE if self.pipes else subprocess.DEVNULL,
                env=self.env,
                cwd=self.cwd,
                preexec_fn=child_setup(self.user, self.stop_signal, self.jail),
                start_new_session=True,
                pass_fds=self.pass_fds,
            )
        _RUNNING[self.proc.pid] = self
        self._recorded = [_identity(self.proc.pid, shlex.join(self.argv))]
        self._write_pid_file()

    def adopt(self, pid: int) -> None:
        """Record ``pid``, which this process launched to serve (e.g. Elasticsearch's server
        JVM under its launcher): :meth:`stop` and a later docbench's clean-up stop it too."""
        if pid != self.pid and all(entry["pid"] != pid for entry in self._recorded):
            self._recorded.append(_identity(pid))
            self._write_pid_file()

    def _write_pid_file(self) -> None:
        # The owner by PID and start time only: its command line may hold a URL's password.
        owner = {"pid": os.getpid(), "start_time": process_start_time(os.getpid())}
        record = {
            "boot_id": boot_id(),
            "owner": owner,
            "stop_signal": int(self.stop_signal),
            "processes": self._recorded,
        }
        partial = self.pid_file.with_name(self.pid_file.name + ".tmp")
        partial.write_text(json.dumps(record, indent=1) + "\n")
        os.replace(partial, self.pid_file)

    def _remove_pid_file(self) -> None:
        record = _read_pid_file(self.pid_file)
        first = as_array(record["processes"], "processes")[:1] if record else []
        if record and [as_object(e, "process").get("pid") for e in first] == [self.pid]:
            self.pid_file.unlink(missing_ok=True)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_until(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        """Poll ``ready`` (its exceptions count as not yet) until it says True: ServerExited
        when the process ends meanwhile, TimeoutError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise ServerExited(f"{what} exited during start-up; log:\n{self.log_tail()}")
            with contextlib.suppress(Exception):
                if ready():
                    return
            time.sleep(0.1)
        raise TimeoutError(f"{what} not ready after {timeout:.0f} s; log:\n{self.log_tail()}")

    def stop(self, timeout: float = 30.0, sig: int | None = None) -> None:
        """Signal our own PID (only it), wait, and SIGKILL if it does not go; then the
        processes it launched that we adopted, if they outlived it."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(self.stop_signal if sig is None else sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
                self.proc.wait(timeout=10)
        for entry in self._recorded[1:]:
            stop_process(entry["pid"], entry["start_time"], signal.SIGTERM, timeout)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        self._remove_pid_file()
        _RUNNING.pop(self.proc.pid, None)

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"


# ----- servers on loopback ports: pick, start, wait, retry, remember -------------------------
def free_ports(count: int) -> tuple[int, ...]:
    """``count`` distinct TCP ports on 127.0.0.1 that nothing listens on right now."""
    ports: list[int] = []
    while len(ports) < count:
        port = free_port()
        if port not in ports:
            ports.append(port)
    return tuple(ports)


class PortedServer:
    """What every server docbench manages shares: it listens on 127.0.0.1 only, on
    ``port_count`` ports that are kept across restarts (so that session specs handed out stay
    valid) in ``port_file``, and it is started by one loop:

    1. the ports: the recorded ones (of the running server, else of the port file) for the
       first ``reuse_tries`` tries when none of them is taken, else free ones;
    2. :meth:`boot` on them: start, then wait until ready;
    3. a server that exited during start-up (:class:`ServerExited`, e.g. its port was taken
       after :func:`free_ports`) is tried again, up to ``start_tries`` tries (and ``retry_for``
       seconds, if set) while :meth:`retryable` says so, after a pause of 1, 2... 5 s;
    4. the ports that worked go to the port file.

    A start that times out is not retried (TimeoutError). Subclasses give :meth:`boot`;
    :class:`ManagedServer` is the one for a single process."""

    display_name = "server"
    port_count = 1
    start_timeout = 60.0  # seconds until ready, per try
    start_tries = 4
    reuse_tries = 2
    retry_for: float | None = None

    def __init__(self, workdir: Path, port_file: Path | None = None) -> None:
        self.workdir = workdir
        self.port_file = port_file or workdir / "port"
        # The ports of the server that runs, or ran last (None before its first start here).
        self.ports: tuple[int, ...] | None = None

    @property
    def port(self) -> int | None:
        """The first (or only) port."""
        return self.ports[0] if self.ports else None

    def recorded_ports(self) -> tuple[int, ...] | None:
        """The ports of the last start: this object's, else the port file's (an earlier
        docbench's, on the same work directory)."""
        if self.ports is None:
            with contextlib.suppress(OSError, ValueError):
                numbers = tuple(int(word) for word in self.port_file.read_text().split())
                if len(numbers) == self.port_count:
                    self.ports = numbers
        return self.ports

    def _pick_ports(self, attempt: int) -> tuple[int, ...]:
        recorded = self.recorded_ports()
        if recorded and attempt <= self.reuse_tries and not any(port_open(p) for p in recorded):
            return recorded
        return free_ports(self.port_count)

    def retryable(self, error: ServerExited) -> bool:
        """Whether a server that exited during start-up is worth another try."""
        return True

    def boot(self, ports: tuple[int, ...], timeout: float) -> None:
        """Start on ``ports`` and wait until ready (then set :attr:`ports`). On failure, stop
        what was started, then raise: ServerExited (tried again), TimeoutError or another."""
        raise NotImplementedError

    def start_on_ports(self, timeout: float | None = None) -> None:
        """The loop above: the server runs on :attr:`ports`, written to the port file."""
        timeout = self.start_timeout if timeout is None else timeout
        give_up = None if self.retry_for is None else time.monotonic() + self.retry_for
        attempt = 0
        while True:
            attempt += 1
            ports = self._pick_ports(attempt)
            try:
                self.boot(ports, timeout)
            except ServerExited as error:
                late = give_up is not None and time.monotonic() >= give_up
                if attempt >= self.start_tries or late or not self.retryable(error):
                    tries = "1 try" if attempt == 1 else f"{attempt} tries"
                    raise RuntimeError(f"{self.display_name} did not start after {tries}: {error}") from error
                time.sleep(min(float(attempt), 5.0))
                continue
            self.ports = ports
            partial = self.port_file.with_name(self.port_file.name + ".tmp")
            partial.write_text(" ".join(map(str, ports)) + "\n")
            os.replace(partial, self.port_file)
            return


class ManagedServer(PortedServer):
    """One server process in docbench's work directory (a :class:`ManagedProcess`: pid file,
    death signal, stopped by PID), started by :class:`PortedServer`'s loop.

    :meth:`start` stops a server an earlier docbench left running in the work directory
    (:func:`reap_leftovers`), calls :meth:`prepare` (directories, initdb...), runs the loop and
    then :meth:`started`. A subclass gives what is its own: :meth:`command` (or all of
    :meth:`launch`), :meth:`ready` (its readiness probe), and the hooks it needs."""

    process_class: type[ManagedProcess] = ManagedProcess
    stop_timeout = 30.0  # seconds from the stop signal to SIGKILL

    def __init__(
        self,
        workdir: Path,
        log_path: Path,
        *,
        port_file: Path | None = None,
        user: pwd.struct_passwd | None = None,
        cwd: Path | None = None,
    ) -> None:
        super().__init__(workdir, port_file)
        self.log_path = log_path
        self.user = user  # the unprivileged user it runs as (None: docbench's own)
        self.cwd = cwd or Path("/")
        self.process: ManagedProcess | None = None

    # ----- what a server gives ---------------------------------------------------------
    def prepare(self) -> None:
        """Before the first try: make the work directory ready (data directory, config)."""
        claim_directory(self.workdir)

    def command(self, ports: tuple[int, ...]) -> list[str]:
        """The server's command line, listening on 127.0.0.1 at ``ports``."""
        raise NotImplementedError

    def environment(self) -> dict[str, str] | None:
        """The server's environment (None: docbench's)."""
        return None

    def ready(self, ports: tuple[int, ...]) -> bool:
        """Whether the server started on ``ports`` is ready (an exception counts as not yet)."""
        raise NotImplementedError

    def started(self) -> None:
        """After a successful start (e.g. the accounts of a fresh data directory)."""

    def launch(self, ports: tuple[int, ...]) -> ManagedProcess:
        """Start the server's process on ``ports``, without waiting for it."""
        process = self.process_class(
            self.command(ports), self.log_path, user=self.user, env=self.environment(), cwd=self.cwd
        )
        process.start()
        return process

    def on_ready(self, process: ManagedProcess) -> None:
        """Once ready, before the ports are recorded (e.g. adopt the process that serves)."""

    # ----- the life of the process -----------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None and self.process.alive() else None

    def running(self) -> bool:
        return self.process is not None and self.process.alive()

    def start(self, timeout: float | None = None) -> None:
        """Start the server (nothing if it runs) and wait until it is ready."""
        if self.running():
            return
        self.prepare_start()
        self.start_on_ports(timeout)
        self.started()

    def prepare_start(self) -> None:
        """A server an earlier docbench left running here goes first (:meth:`prepare` may
        remove a half-made data directory), then :meth:`prepare`."""
        reap_leftovers(pid_file_in(self.workdir))
        self.prepare()

    def spawn(self, ports: tuple[int, ...]) -> None:
        """Start the process on ``ports`` (:meth:`await_ready` waits for it)."""
        self.process = self.launch(ports)

    def await_ready(self, ports: tuple[int, ...], timeout: float) -> None:
        """Wait until the process :meth:`spawn` started is ready, then record ``ports``; a
        process that exits or is not ready in time is stopped (ServerExited, TimeoutError)."""
        process = self.process
        if process is None:
            raise RuntimeError(f"{self.display_name} has not been launched")
        try:
            process.wait_until(lambda: self.ready(ports), timeout, self.display_name)
        except BaseException:
            process.stop(timeout=self.stop_timeout)
            self.process = None
            raise
        self.ports = ports
        self.on_ready(process)

    def boot(self, ports: tuple[int, ...], timeout: float) -> None:
        self.spawn(ports)
        self.await_ready(ports, timeout)

    def stop(self) -> None:
        """Stop the process by PID (its stop signal; SIGKILL after ``stop_timeout``)."""
        if self.process is not None:
            self.process.stop(timeout=self.stop_timeout)
            self.process = None


def running_pids() -> list[int]:
    return [pid for pid, proc in _RUNNING.items() if proc.alive()]


def stop_all() -> None:
    for proc in list(_RUNNING.values()):
        with contextlib.suppress(Exception):
            proc.stop(timeout=15)


def _stop_all_at_exit() -> None:
    # A signal arriving now must not cut the stopping short: it waits (blocked) until exit.
    if threading.current_thread() is threading.main_thread():
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, *runlock.EXIT_SIGNALS})
    stop_all()


atexit.register(_stop_all_at_exit)
# SIGHUP/SIGTERM end a process that runs servers as Ctrl-C does: its code unwinds, then the
# atexit hook above stops what is still running. Not in multiprocessing workers (which start
# no server): they end silently, as their parent decides.
if multiprocessing.parent_process() is None:
    runlock.exit_on_signals()


def clear_work_directory(path: Path) -> None:
    """Empty a work directory for a fresh run: first stop any server an earlier, killed
    docbench left running there (its pid file is in the directory), then remove it all --
    only when docbench made it (its mark) and it holds neither the run's data nor its
    results; otherwise it stays as it is, and a warning says why."""
    if not path.is_dir():
        return
    refusal = removal_refusal(path)
    if refusal is not None:
        log.warning("docbench left %s as it is: %s", path, refusal)
        return
    for pid_file in sorted(path.rglob(PID_FILE_NAME)):
        reap_leftovers(pid_file)
    remove_owned_tree(path)
