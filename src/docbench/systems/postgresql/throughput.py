"""PostgreSQL's native reference for the throughput workload: the real ``pgbench``.

For each docbench run, pgbench runs with the same clients (``-c``), worker threads (``-j`` =
docbench's processes), rate and ``-M prepared``, for the same warm-up + duration (``-T``) with
a progress line a second (``-P 1``): its TPS is that of the seconds after the warm-up, as
docbench's (its own whole-run figure is kept as ``tps_whole_run``):

* the same JSON operations as docbench's, as custom scripts written from the SQL of
  ``updates.point_statements`` (so both send the same statements): read by key, jsonb_set
  of one field, insert, read-modify-write, weighted as the mix (``-f script@weight``).
  pgbench draws the key number and computes the key in SQL ('user' || 20 digits of
  ``(i * M + offset) mod 10^20``, the generator's own formula); values are md5 text made
  by the server. ``zipfian`` uses pgbench's ``random_zipfian`` (not scrambled);
* once per (scenario, clients), pgbench's built-in ``select-only`` (read-only mixes) or
  ``tpcb-like`` (others), in a database of its own (``docbench_pgbench``, scale 10),
  only on the cluster docbench manages.

``PgbenchReference(target).measure(run)`` runs both for one docbench run; ``target`` is the
run's :class:`~docbench.systems.postgresql.updates.PostgreSQLUpdates`, whose engine gives the
server's conninfo, pgbench and (managed only) the cluster. The reference returns pgbench's
TPS (without initial connection time) and latency; the runner puts docbench-TPS /
pgbench-TPS next to it.

pgbench never gets the password on its command line (``ps`` shows that to every user of the
machine): the conninfo it gets has none, and the password (the managed cluster's, or the
URL's) is in a PGPASSFILE of mode 0600 in a private temporary directory, removed when pgbench
ends. A URL without a password leaves libpq's own PGPASSWORD / ~/.pgpass to pgbench.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from docbench.contracts import ycsb
from docbench.contracts.mixes import INSERT, READ, READ_MODIFY_WRITE, UPDATE, mix_named
from docbench.contracts.throughput import NativeReference, ThroughputRun
from docbench.core.jsontypes import JsonMapping, JsonObject
from docbench.core.redact import redact_text
from docbench.systems.postgresql.engine import DATABASE, PostgreSQLEngine
from docbench.systems.postgresql.updates import PostgreSQLUpdates, point_statements

BUILTIN_DATABASE = "docbench_pgbench"
BUILTIN_SCALE = 10
_BUILTINS_DONE: dict[tuple[str, int], JsonObject] = {}


def _key_expression(seed: int) -> str:
    offset = (seed * 1_442_695_040_888_963_407) % ycsb.KEY_MODULUS
    return (
        f"'user' || lpad(((:i::numeric * {ycsb.KEY_MULTIPLIER} + {offset}) "
        f"% {ycsb.KEY_MODULUS})::text, {ycsb.KEY_DIGITS}, '0')"
    )


def _draw(distribution: str, docs: int) -> str:
    if distribution == "zipfian":
        return f"\\set i random_zipfian(0, {docs - 1}, {ycsb.ZIPFIAN_THETA})"
    return f"\\set i random(0, {docs - 1})"


_VALUE = f"substr(repeat(md5(random()::text), 5), 1, {ycsb.FIELD_LENGTH})"


def scripts(spec: JsonMapping, distribution: str, docs: int, seed: int) -> dict[str, str]:
    """pgbench script text per docbench operation."""
    sql = point_statements(spec)
    key = _key_expression(seed)
    read = sql["read"].replace("%(key)s", key)
    update = (
        sql["update"]
        .replace("%(key)s", key)
        .replace("%(field)s", "('field' || :f)")
        .replace("%(value)s", _VALUE)
    )
    fields = ", ".join(f"'{name}', {_VALUE}" for name in ycsb.FIELDS)
    doc = f"jsonb_build_object('ycsb_key', 'user' || lpad(:n::text, {ycsb.KEY_DIGITS}, '0'), {fields})::text"
    insert = sql["insert"].replace("%(doc)s", f"({doc})")
    draw = _draw(distribution, docs)
    field = f"\\set f random(1, {ycsb.FIELD_COUNT})"
    # Inserted keys: random 19-digit numbers (pgbench has no per-client counter); clashes
    # with loaded keys or each other are possible but the table has no unique constraint.
    new_key = "\\set n random(1000000000000000000, 9000000000000000000)"
    return {
        READ: f"{draw}\n{read};\n",
        UPDATE: f"{draw}\n{field}\n{update};\n",
        INSERT: f"{new_key}\n{insert};\n",
        READ_MODIFY_WRITE: f"{draw}\n{field}\n{read};\n{update};\n",
    }


def parse_output(text: str) -> dict[str, float | None]:
    def number(pattern: str) -> float | None:
        match = re.search(pattern, text)
        return float(match.group(1)) if match else None

    return {
        "tps": number(r"tps = ([\d.]+) \(without initial connection time\)"),
        "latency_avg_ms": number(r"latency average = ([\d.]+) ms"),
        "latency_stddev_ms": number(r"latency stddev = ([\d.]+) ms"),
        "initial_connection_ms": number(r"initial connection time = ([\d.]+) ms"),
        "transactions": number(r"number of transactions actually processed: (\d+)"),
        "failed": number(r"number of failed transactions: (\d+)"),
    }


def _pgpass_line(password: str) -> str:
    """A ~/.pgpass line for any host, port, database and user (the file serves one pgbench)."""
    return "*:*:*:*:" + password.replace("\\", "\\\\").replace(":", "\\:") + "\n"


@contextlib.contextmanager
def pgbench_connection(engine: PostgreSQLEngine, dbname: str) -> Iterator[tuple[str, dict[str, str]]]:
    """(conninfo without the password, environment of pgbench) for a database of the server.

    The password, if docbench has one, goes into a PGPASSFILE (0600, in a 0700 temporary
    directory, removed afterwards): not on the command line, not in docbench's work directory.
    """
    from psycopg.conninfo import make_conninfo

    params = engine.conninfo_params(dbname)
    password = params.pop("password", None)
    env = dict(os.environ)
    if not password:
        yield make_conninfo("", **params), env
        return
    folder = tempfile.mkdtemp(prefix="docbench-pgbench-")
    try:
        passfile = Path(folder) / "pgpass"
        fd = os.open(passfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(_pgpass_line(str(password)))
        env["PGPASSFILE"] = str(passfile)
        env.pop("PGPASSWORD", None)  # it would win over the file
        yield make_conninfo("", **params), env
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run(
    argv: list[str],
    timeout: float,
    env: dict[str, str] | None = None,
    url: str | None = None,
    window: ThroughputRun | None = None,
) -> JsonObject:
    """Run pgbench; its figures, and the CPU time it used (os.wait4's rusage of the child)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        try:
            status, usage = _wait4(process.pid, timeout)
        finally:
            if process.poll() is None and process.returncode is None:
                process.kill()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    figures = parse_output(stdout)
    result: JsonObject = {**figures}
    result["command"] = " ".join(argv[:-1] + ["<conninfo>"])
    cpu_seconds = usage.ru_utime + usage.ru_stime
    result["cpu_seconds"] = cpu_seconds
    done = (figures["transactions"] or 0) + (figures["failed"] or 0)
    result["cpu_us_per_op"] = cpu_seconds * 1e6 / done if done else None
    if window is not None and result["tps"] is not None:
        measured = measured_window(stderr, window.warmup_s, window.duration_s)
        result["tps_whole_run"] = result["tps"]
        result["tps"] = measured["tps"] if measured else None
        result["measured_window"] = measured
    if process.returncode != 0 or result["tps"] is None:
        # pgbench's error may quote the connection; never the URL's password.
        result["error"] = redact_text((stderr or stdout)[-800:], url)
    return result


def _wait4(pid: int, timeout: float):
    """os.wait4 with a deadline (the child is killed at it)."""
    deadline = time.monotonic() + timeout
    while True:
        waited, status, usage = os.wait4(pid, os.WNOHANG)
        if waited == pid:
            return status, usage
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            _, status, usage = os.wait4(pid, 0)
            return status, usage
        time.sleep(0.05)


def _common(run: ThroughputRun, warmup: bool = False) -> list[str]:
    seconds = max(1, round(run.duration_s)) + (round(run.warmup_s) if warmup else 0)
    argv = ["-n", "-M", "prepared", "-c", str(run.clients), "-j", str(run.processes), "-T", str(seconds)]
    if warmup:
        argv += ["-P", "1"]
    if run.rate:
        argv += ["-R", f"{run.rate:g}"]
    return argv


_PROGRESS = re.compile(r"progress: ([\d.]+) s, ([\d.]+) tps, lat ([\d.]+) ms")


def measured_window(progress: str, warmup_s: float, duration_s: float) -> JsonObject | None:
    """pgbench's figures over the seconds after the warm-up, from its ``-P 1`` lines (pgbench
    has no warm-up of its own: it runs warm-up + duration, as docbench's clients do, and the
    warm-up seconds are left out here as docbench leaves them out)."""
    seconds = [(float(t), float(tps), float(lat)) for t, tps, lat in _PROGRESS.findall(progress)]
    first, last = round(warmup_s), round(warmup_s) + max(1, round(duration_s))
    kept = [(tps, lat) for t, tps, lat in seconds if first < t <= last + 0.5]
    if not kept:
        return None
    transactions = sum(tps for tps, _ in kept)
    return {
        "tps": transactions / len(kept),
        "seconds": len(kept),
        "latency_avg_ms": sum(tps * lat for tps, lat in kept) / transactions if transactions else None,
    }


class PgbenchReference(NativeReference):
    """The real pgbench beside each run: custom scripts of the same statements, and the
    built-in script once per (scenario, clients) on the managed cluster."""

    tool = "pgbench"
    target: PostgreSQLUpdates
    engine: PostgreSQLEngine

    def measure(self, run: ThroughputRun) -> JsonObject:
        workdir = self.engine.workdir / "pgbench"
        workdir.mkdir(parents=True, exist_ok=True)
        custom = self._custom(run, workdir)
        return {"tool": self.tool, "tps": custom.get("tps"), "custom": custom, "builtin": self._builtin(run)}

    def _custom(self, run: ThroughputRun, workdir: Path) -> JsonObject:
        texts = scripts(self.target.session_spec(), run.distribution, run.docs, run.seed)
        argv = [self.engine.pgbench_path(), *_common(run, warmup=True)]
        for operation, weight in mix_named(run.mix).weights:
            path = workdir / f"pgbench-{operation}.sql"
            path.write_text(texts[operation])
            argv += ["-f", f"{path}@{max(1, round(weight * 100))}"]
        with pgbench_connection(self.engine, DATABASE) as (conninfo, env):
            result = _run(
                [*argv, conninfo],
                timeout=run.warmup_s + run.duration_s + 300,
                env=env,
                url=self.engine.url,
                window=run,
            )
        result["scripts"] = {**texts}
        return result

    def _builtin(self, run: ThroughputRun) -> JsonObject:
        """pgbench's own select-only / tpcb-like on its own tables (managed cluster only)."""
        if not run.builtin:
            return {"skipped": "not asked for"}
        if self.engine.cluster is None:
            return {"skipped": "built-in scripts need their own database: only on docbench's cluster"}
        name = "select-only" if mix_named(run.mix).read_only else "tpcb-like"
        key = (f"{run.scenario}-{name}", run.clients)
        if key in _BUILTINS_DONE:
            return _BUILTINS_DONE[key]
        pgbench = self.engine.pgbench_path()
        with pgbench_connection(self.engine, BUILTIN_DATABASE) as (conninfo, env):
            with self.engine.admin_connection().cursor() as cur:
                cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (BUILTIN_DATABASE,))
                if cur.fetchone() is None:
                    cur.execute(f"CREATE DATABASE {BUILTIN_DATABASE}")
                    failure = _initialize(pgbench, conninfo, env)
                    if failure:
                        # No half-made tables (without their keys pgbench's scripts scan
                        # whole tables) for the next try; the custom scripts' figure stays.
                        self._drop_builtin()
                        return {"script": name, "error": failure}
            result = _run(
                [pgbench, "-b", name, *_common(run), conninfo], timeout=run.duration_s + 300, env=env
            )
        result.update({"script": name, "scale": BUILTIN_SCALE})
        _BUILTINS_DONE[key] = result
        return result

    def _drop_builtin(self, patience_s: float = 120.0) -> None:
        """Drop the built-in tables' database, on a new connection while the server does not
        answer (a backend killed during ``pgbench -i`` -- by the io scenario's memory cap --
        restarts every backend, this process's connection too) for up to ``patience_s``."""
        deadline = time.monotonic() + patience_s
        while True:
            try:
                with self.engine.admin_connection().cursor() as cur:
                    cur.execute(f"DROP DATABASE IF EXISTS {BUILTIN_DATABASE}")
                return
            except Exception:  # noqa: BLE001 - retried until the deadline, then left
                if time.monotonic() > deadline:
                    return
                self.engine.release()
                time.sleep(1.0)


def _initialize(pgbench: str, conninfo: str, env: dict[str, str]) -> str | None:
    """``pgbench -i`` of the built-in tables; None, or why it failed (its last words)."""
    try:
        subprocess.run(
            [pgbench, "-i", "-q", "-s", str(BUILTIN_SCALE), conninfo],
            capture_output=True,
            check=True,
            timeout=600,
            env=env,
        )
    except subprocess.CalledProcessError as error:
        said = (error.stderr or b"").decode(errors="replace").strip().splitlines()[-3:]
        return f"pgbench -i failed (exit {error.returncode}): {' | '.join(said)}"
    except subprocess.TimeoutExpired:
        return "pgbench -i did not finish in 600 s"
    return None


ADAPTER = PgbenchReference
