"""Result files: one JSON document per (workload, system, variant, dataset) run.

The analytics result is a superset of JSONBench's format (its dashboard reads the JSONBench
keys); docbench's additions live under new keys. Files are written atomically (temporary
file + rename), so an interrupted run leaves either the old file or the new one, and
``--resume`` can trust any file whose ``complete`` is true.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import orjson

from docbench import __version__, paths, procstats

RESULT_FORMAT = 1
SCHEMA_PATH = Path(__file__).parent / "schema" / "result.schema.json"


def result_path(results_dir: Path, system: str, variant: str, dataset_label: str,
                workload: str = "analytics") -> Path:
    prefix = "" if workload == "analytics" else f"{workload}."
    return results_dir / f"{prefix}{system}.{variant}.{dataset_label}.json"


def write_atomically(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_result(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def is_complete(path: Path) -> bool:
    document = read_result(path)
    return bool(document and document.get("complete"))


def load_results(results_dirs: list[Path]) -> list[dict[str, Any]]:
    """Every result document under the directories (recursively), with its path recorded."""
    documents = []
    for directory in results_dirs:
        candidates = [directory] if directory.is_file() else sorted(directory.rglob("*.json"))
        for path in candidates:
            if path.name.startswith("."):
                continue
            document = read_result(path)
            if isinstance(document, dict) and "system" in document and "result" in document:
                document.setdefault("_path", str(path))
                documents.append(document)
    return documents


@cache
def environment() -> dict[str, Any]:
    """What a reader needs to judge the figures: hardware, OS, versions, docbench revision."""
    memory = procstats.total_memory()
    return {
        "cpu_model": procstats.cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": memory,
        "os": procstats.os_name(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "docbench_version": __version__,
        "docbench_git_revision": procstats.git_revision(paths.repo_root()),
        "hostname": platform.node(),
        "root": os.geteuid() == 0,
    }


def machine_label() -> str:
    env = environment()
    return f"{env['cores']} cores, {env['memory_bytes'] / 2**30:.0f} GiB, {env['cpu_model']}"


def today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def validate(document: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError when a result document breaks the published schema."""
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.validate(document, schema)
