"""Life of the servers docbench starts: loopback only, own data directory, stopped by PID.

Every process started through :class:`ManagedProcess` is remembered in a registry and stopped
at interpreter exit (and on SIGTERM/SIGINT) if the run did not stop it, so a failed run leaves
no server behind. docbench only ever signals PIDs it started itself.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

_RUNNING: dict[int, ManagedProcess] = {}

UNPRIVILEGED_USER = "docbench"


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
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        name], check=True, capture_output=True)
        return pwd.getpwnam(name)


def chown_tree(path: Path, user: pwd.struct_passwd | None) -> None:
    if user is None:
        return
    for root, dirs, files in os.walk(path):
        for entry in [root, *(os.path.join(root, d) for d in dirs),
                      *(os.path.join(root, f) for f in files)]:
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


class ManagedProcess:
    """A long-running server process docbench started; it knows its own PID and log."""

    def __init__(self, argv: Sequence[str], log_path: Path, *,
                 user: pwd.struct_passwd | None = None, env: dict[str, str] | None = None,
                 cwd: Path | None = None) -> None:
        self.argv = list(argv)
        self.log_path = log_path
        self.user = user
        self.env = env
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - kept open for the child's lifetime
        self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=self.env, cwd=self.cwd,
                                     preexec_fn=demote(self.user), start_new_session=True)
        log.close()
        _RUNNING[self.proc.pid] = self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_until(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"{what} exited during start-up; log:\n{self.log_tail()}")
            with contextlib.suppress(Exception):
                if ready():
                    return
            time.sleep(0.1)
        raise TimeoutError(f"{what} not ready after {timeout:.0f} s; log:\n{self.log_tail()}")

    def stop(self, timeout: float = 30.0, sig: int = signal.SIGTERM) -> None:
        """Signal our own PID (only it), wait, and SIGKILL if it does not go."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
                self.proc.wait(timeout=10)
        _RUNNING.pop(self.proc.pid, None)

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"


def running_pids() -> list[int]:
    return [pid for pid, proc in _RUNNING.items() if proc.alive()]


def stop_all() -> None:
    for proc in list(_RUNNING.values()):
        with contextlib.suppress(Exception):
            proc.stop(timeout=15)


def _on_signal(signum: int, _frame: object) -> None:
    stop_all()
    raise SystemExit(128 + signum)


atexit.register(stop_all)
for _sig in (signal.SIGTERM,):
    with contextlib.suppress(ValueError):  # not in the main thread
        signal.signal(_sig, _on_signal)
