"""PostgreSQL's native reference for the throughput workload: the real ``pgbench``.

For each docbench run, pgbench runs with the same clients (``-c``), worker threads (``-j`` =
docbench's processes), duration, rate and ``-M prepared``:

* the same JSON operations as docbench's, as custom scripts written from the SQL of
  ``updates.point_statements`` (so both send the same statements): read by key, jsonb_set
  of one field, insert, read-modify-write, weighted as the mix (``-f script@weight``).
  pgbench draws the key number and computes the key in SQL ('user' || 20 digits of
  ``(i * M + offset) mod 10^20``, the generator's own formula); values are md5 text made
  by the server. ``zipfian`` uses pgbench's ``random_zipfian`` (not scrambled);
* once per (scenario, clients), pgbench's built-in ``select-only`` (read-only mixes) or
  ``tpcb-like`` (others), in a database of its own (``docbench_pgbench``, scale 10),
  only on the cluster docbench manages.

The reference returns pgbench's TPS (without initial connection time) and latency; the
runner puts docbench-TPS / pgbench-TPS next to it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from docbench.systems.postgresql.server import find_bin_dir
from docbench.systems.postgresql.updates import point_statements
from docbench.workloads.throughput.mixes import INSERT, READ, READ_MODIFY_WRITE, UPDATE, mix_named
from docbench.workloads.updates import documents as ycsb

BUILTIN_DATABASE = "docbench_pgbench"
BUILTIN_SCALE = 10
_BUILTINS_DONE: dict[tuple[str, int], dict[str, Any]] = {}


def _key_expression(seed: int) -> str:
    offset = (seed * 1_442_695_040_888_963_407) % ycsb.KEY_MODULUS
    return (f"'user' || lpad(((:i::numeric * {ycsb.KEY_MULTIPLIER} + {offset}) "
            f"% {ycsb.KEY_MODULUS})::text, {ycsb.KEY_DIGITS}, '0')")


def _draw(distribution: str, docs: int) -> str:
    if distribution == "zipfian":
        return f"\\set i random_zipfian(0, {docs - 1}, {ycsb.ZIPFIAN_THETA})"
    return f"\\set i random(0, {docs - 1})"


_VALUE = f"substr(repeat(md5(random()::text), 5), 1, {ycsb.FIELD_LENGTH})"


def scripts(spec: dict[str, Any], distribution: str, docs: int, seed: int) -> dict[str, str]:
    """pgbench script text per docbench operation."""
    sql = point_statements(spec)
    key = _key_expression(seed)
    read = sql["read"].replace("%(key)s", key)
    update = (sql["update"].replace("%(key)s", key).replace("%(field)s", "('field' || :f)")
              .replace("%(value)s", _VALUE))
    fields = ", ".join(f"'{name}', {_VALUE}" for name in ycsb.FIELDS)
    doc = (f"jsonb_build_object('ycsb_key', 'user' || lpad(:n::text, {ycsb.KEY_DIGITS}, '0'), "
           f"{fields})::text")
    insert = sql["insert"].replace("%(doc)s", f"({doc})")
    draw = _draw(distribution, docs)
    field = f"\\set f random(1, {ycsb.FIELD_COUNT})"
    # Inserted keys: random 19-digit numbers (pgbench has no per-client counter); clashes
    # with loaded keys or each other are possible but the table has no unique constraint.
    new_key = "\\set n random(1000000000000000000, 9000000000000000000)"
    return {READ: f"{draw}\n{read};\n",
            UPDATE: f"{draw}\n{field}\n{update};\n",
            INSERT: f"{new_key}\n{insert};\n",
            READ_MODIFY_WRITE: f"{draw}\n{field}\n{read};\n{update};\n"}


def _pgbench() -> str:
    bin_dir = find_bin_dir()
    if bin_dir is None or not (bin_dir / "pgbench").exists():
        raise RuntimeError("pgbench not found under /usr/lib/postgresql/*/bin")
    return str(bin_dir / "pgbench")


def parse_output(text: str) -> dict[str, Any]:
    def number(pattern: str) -> float | None:
        match = re.search(pattern, text)
        return float(match.group(1)) if match else None

    return {"tps": number(r"tps = ([\d.]+) \(without initial connection time\)"),
            "latency_avg_ms": number(r"latency average = ([\d.]+) ms"),
            "latency_stddev_ms": number(r"latency stddev = ([\d.]+) ms"),
            "initial_connection_ms": number(r"initial connection time = ([\d.]+) ms"),
            "transactions": number(r"number of transactions actually processed: (\d+)"),
            "failed": number(r"number of failed transactions: (\d+)")}


def _run(argv: list[str], timeout: float) -> dict[str, Any]:
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    result = parse_output(completed.stdout)
    result["command"] = " ".join(argv[:-1] + ["<conninfo>"])
    if completed.returncode != 0 or result["tps"] is None:
        result["error"] = (completed.stderr or completed.stdout)[-800:]
    return result


def _common(run: Any) -> list[str]:
    request = run.request
    argv = ["-n", "-M", "prepared", "-c", str(run.clients), "-j", str(run.processes),
            "-T", str(max(1, round(request.duration_s)))]
    if request.rate:
        argv += ["-R", f"{request.rate:g}"]
    return argv


def _custom(target: Any, run: Any, workdir: Path) -> dict[str, Any]:
    request = run.request
    texts = scripts(target.session_spec(), request.distribution, request.docs, request.seed)
    argv = [_pgbench(), *_common(run)]
    for operation, weight in mix_named(run.mix).weights:
        path = workdir / f"pgbench-{operation}.sql"
        path.write_text(texts[operation])
        argv += ["-f", f"{path}@{max(1, round(weight * 100))}"]
    result = _run([*argv, target.system.conninfo()], timeout=request.duration_s + 300)
    result["scripts"] = texts
    return result


def _builtin(target: Any, run: Any) -> dict[str, Any]:
    """pgbench's own select-only / tpcb-like on its own tables (managed cluster only)."""
    if target.system.cluster is None:
        return {"skipped": "built-in scripts need their own database: only on docbench's cluster"}
    name = "select-only" if mix_named(run.mix).read_only else "tpcb-like"
    key = (f"{run.scenario}-{name}", run.clients)
    if key in _BUILTINS_DONE:
        return _BUILTINS_DONE[key]
    conninfo = target.system.conninfo(BUILTIN_DATABASE)
    with target.system._connection().cursor() as cur:  # the admin connection of the adapter
        cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (BUILTIN_DATABASE,))
        if cur.fetchone() is None:
            cur.execute(f"CREATE DATABASE {BUILTIN_DATABASE}")
            subprocess.run([_pgbench(), "-i", "-q", "-s", str(BUILTIN_SCALE), conninfo],
                           capture_output=True, check=True, timeout=600)
    result = _run([_pgbench(), "-b", name, *_common(run), conninfo],
                  timeout=run.request.duration_s + 300)
    result.update({"script": name, "scale": BUILTIN_SCALE})
    _BUILTINS_DONE[key] = result
    return result


def native_reference(target: Any, run: Any) -> dict[str, Any]:
    workdir = target.system.workdir / "pgbench"
    workdir.mkdir(parents=True, exist_ok=True)
    custom = _custom(target, run, workdir)
    return {"tool": "pgbench", "tps": custom.get("tps"), "custom": custom,
            "builtin": _builtin(target, run)}
