"""``docbench generate``: synthetic Bluesky Jetstream events in JSONBench's file layout.

The work is done by the native generator ``docbench-gen`` (Rust, ``native/docbench-gen``),
one process per output file, ``jobs`` at a time. This module finds (or builds) the binary,
runs it, shows a progress bar, and keeps ``dataset.json`` (see :mod:`.manifest`) correct for
the files present, merging with what an earlier run generated.

Determinism: a file's bytes depend only on (seed, file number, docs per file, hard rate,
dirty rate); the last file of a dataset is a prefix of the full file. So any ``--jobs`` gives
the same bytes, and a big dataset can be generated piecewise (``--files``), on several
machines.

Hard documents (valid JSON that some systems refuse): at the default rate of
:data:`DEFAULT_HARD_RATE` (1 per million). ``file_0001`` always holds one of each of the five
kinds (``nul_escape``, ``lone_surrogate``, ``bigint``, ``deep_nesting``, ``long_text``) at its
document indexes ⌊D·(2j+1)/10⌋ for kind j (D = docs per file: lines 100001, 300001, 500001,
700001, 900001 for 1M per file); every file additionally holds ⌊R·D⌋ (+1 with probability
frac(R·D)) hard documents of random kinds at random lines (R = hard rate). A hard document
replaces the regular document of its line (same ``time_us``), is a well-formed
``app.bsky.feed.post`` create and is listed in the manifest. ``--hard-rate 0`` disables them.
Dirty lines (``--dirty-rate``, default 0) are *extra* invalid lines (``truncated``,
``invalid_utf8``, ``empty``) inserted after a document; they are listed too.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import click
import orjson

from docbench.core import paths
from docbench.dataset.manifest import (
    FileEntry,
    Manifest,
    Marked,
    file_name,
    read_manifest,
    write_manifest,
)
from docbench.dataset.native_scan import find_native

DEFAULT_DOCS_PER_FILE = 1_000_000
DEFAULT_HARD_RATE = 1e-6
COMPRESSIONS = ("none", "gzip", "zstd")
#: Environment override of the documents per file (for tests and small experiments).
DOCS_PER_FILE_ENV = "DOCBENCH_DOCS_PER_FILE"
#: Environment override of the generator binary.
BINARY_ENV = "DOCBENCH_GEN_BIN"
PROGRESS_EVERY = 50_000

CRATE_DIR = Path("native") / "docbench-gen"
BUILD_SCRIPT = Path("scripts") / "build-native.sh"


class GeneratorError(click.ClickException):
    """A generation failure with a message for the user (the CLI prints it without a
    traceback)."""


class GenerateArgumentError(GeneratorError, ValueError):
    """Invalid arguments to :func:`generate_dataset`."""


# --------------------------------------------------------------------------- the binary


def _crate_dir() -> Path:
    return paths.repo_root() / CRATE_DIR


def find_binary() -> Path | None:
    """The generator binary: ``$DOCBENCH_GEN_BIN``, else the crate's build (see
    :func:`docbench.dataset.native_scan.find_native`)."""
    env = os.environ.get(BINARY_ENV)
    if env:
        return Path(env) if Path(env).is_file() else None
    return find_native("docbench-gen")


def build_binary(quiet: bool = False) -> Path:
    """Build the generator with ``scripts/build-native.sh`` and return the installed path."""
    script = paths.repo_root() / BUILD_SCRIPT
    if not script.is_file():
        raise GeneratorError(f"the generator binary is missing and {script} is not here to build it")
    cargo = shutil.which("cargo") or (Path.home() / ".cargo" / "bin" / "cargo")
    if not Path(cargo).exists():
        raise GeneratorError(
            "the native generator (docbench-gen) is not built and cargo is not installed: "
            "install Rust (https://rustup.rs), then run scripts/build-native.sh"
        )
    dest = paths.opt_dir() / "bin"
    if not quiet:
        print(f"building the native generator ({_crate_dir()}) ...", flush=True)
    proc = subprocess.run(["bash", str(script), str(dest)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise GeneratorError(f"building docbench-gen failed:\n{proc.stderr[-4000:]}")
    binary = dest / "docbench-gen"
    if not binary.is_file():
        raise GeneratorError(f"build finished but {binary} is missing")
    return binary


def ensure_binary(quiet: bool = False) -> Path:
    return find_binary() or build_binary(quiet=quiet)


def generator_version(binary: Path) -> str:
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True)
    return out.stdout.strip().split()[-1]


# --------------------------------------------------------------------------- helpers


def docs_per_file_default() -> int:
    value = os.environ.get(DOCS_PER_FILE_ENV)
    return int(value) if value else DEFAULT_DOCS_PER_FILE


def parse_file_selection(spec: str | None, files_total: int) -> list[int]:
    """``"1,3-5"`` -> [1, 3, 4, 5]; None -> every file. Numbers are 1-based."""
    if spec is None or not str(spec).strip():
        return list(range(1, files_total + 1))
    chosen: set[int] = set()
    for part in str(spec).split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo_s, hi_s = part.split("-", 1)
            lo, hi = int(lo_s), int(hi_s)
            if lo > hi:
                raise ValueError(f"bad file range {part!r}")
            chosen.update(range(lo, hi + 1))
        else:
            chosen.add(int(part))
    bad = sorted(n for n in chosen if n < 1 or n > files_total)
    if bad:
        raise ValueError(f"file numbers {bad} out of range 1-{files_total}")
    return sorted(chosen)


@dataclass
class RunStats:
    """What a generation run measured (for ``docbench bench generate``)."""

    files: int = 0
    docs: int = 0
    bytes: int = 0
    uncompressed_bytes: int = 0
    seconds: float = 0.0
    peak_rss_bytes: int = 0
    per_file: list[dict] = field(default_factory=list)


@dataclass
class _Job:
    number: int
    count: int
    path: Path
    proc: subprocess.Popen | None = None
    done_docs: int = 0
    stderr_tail: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None
    started: float = 0.0
    exit_code: int | None = None
    peak_rss: int = 0
    stdout: bytes = b""
    stdout_reader: threading.Thread | None = None


def _read_stdout(job: _Job) -> None:
    """Collect the summary concurrently: with many dirty lines it outgrows a pipe buffer."""
    assert job.proc is not None and job.proc.stdout is not None
    job.stdout = job.proc.stdout.read()


def _read_stderr(job: _Job, lock: threading.Lock) -> None:
    assert job.proc is not None and job.proc.stderr is not None
    for raw in job.proc.stderr:
        line = raw.decode("utf-8", "replace").strip()
        if line.startswith("progress "):
            try:
                n = int(line.split()[1])
            except (IndexError, ValueError):
                continue
            with lock:
                job.done_docs = n
        elif line:
            job.stderr_tail = (job.stderr_tail + [line])[-20:]


def _command(
    binary: Path, job: _Job, seed: int, dpf: int, compress: str, hard_rate: float, dirty_rate: float
) -> list[str]:
    return [
        str(binary),
        "--file",
        str(job.number),
        "--seed",
        str(seed),
        "--docs-per-file",
        str(dpf),
        "--count",
        str(job.count),
        "--out",
        str(job.path),
        "--compress",
        compress,
        "--hard-rate",
        repr(float(hard_rate)),
        "--dirty-rate",
        repr(float(dirty_rate)),
        "--progress-every",
        str(PROGRESS_EVERY),
    ]


def _reap(job: _Job, block: bool) -> bool:
    """Reap the child if it has exited (``block``: wait for it), recording its exit code and
    peak RSS (from wait4, so only this child is counted). Returns True once reaped."""
    if job.exit_code is not None:
        return True
    assert job.proc is not None
    pid, status, usage = os.wait4(job.proc.pid, 0 if block else os.WNOHANG)
    if pid == 0:
        return False
    job.exit_code = os.waitstatus_to_exitcode(status)
    job.proc.returncode = job.exit_code  # reaped here: Popen must not wait for it again
    job.peak_rss = usage.ru_maxrss * 1024
    return True


def _make_progress(total_docs: int, quiet: bool):
    if quiet:
        return None
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class DocsPerSecond(ProgressColumn):
        def render(self, task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed / 1000:,.0f}k docs/s" if speed else "- docs/s", style="cyan")

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        DocsPerSecond(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        transient=False,
    )


# --------------------------------------------------------------------------- generation


def generate_dataset(
    n_docs: int,
    out: Path,
    *,
    seed: int = 1,
    jobs: int = 1,
    compress: str = "none",
    dirty_rate: float = 0.0,
    hard_rate: float | None = None,
    only_files: str | None = None,
    docs_per_file: int | None = None,
    quiet: bool = False,
    answers: bool = True,
    stats: RunStats | None = None,
    force: bool = False,
) -> Manifest:
    """Generate ``n_docs`` documents into ``out`` (``file_0001.json`` ...) and return the
    manifest (also written to ``out/dataset.json``).

    ``only_files`` ("1,3-5") generates only those file numbers; the manifest then merges
    with an existing ``dataset.json`` of the same dataset. ``docs_per_file`` (default
    1,000,000, or ``$DOCBENCH_DOCS_PER_FILE``) is a hidden knob for tests. ``stats``, if
    given, is filled with throughput and peak memory. Files the manifest already lists (same
    dataset, same size on disk) are not generated again unless ``force``. When the dataset is
    complete, ``answers.json`` is written too (if the answer oracle is available and
    ``answers``)."""
    if n_docs <= 0:
        raise GenerateArgumentError("the number of documents must be positive")
    if compress not in COMPRESSIONS:
        raise GenerateArgumentError(f"compress must be one of {COMPRESSIONS}")
    if not 0.0 <= dirty_rate < 1.0:
        raise GenerateArgumentError("dirty rate must be in [0, 1)")
    hard_rate = DEFAULT_HARD_RATE if hard_rate is None else float(hard_rate)
    if not 0.0 <= hard_rate <= 1.0:
        raise GenerateArgumentError("hard rate must be in [0, 1]")
    dpf = int(docs_per_file or docs_per_file_default())
    if dpf <= 0:
        raise GenerateArgumentError("docs per file must be positive")
    jobs = max(1, int(jobs))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)

    files_total = math.ceil(n_docs / dpf)
    try:
        numbers = parse_file_selection(only_files, files_total)
    except ValueError as exc:
        raise GenerateArgumentError(f"--files: {exc}") from exc
    binary = ensure_binary(quiet=quiet)
    version = generator_version(binary)

    fresh = Manifest(
        generator="docbench-gen",
        generator_version=version,
        seed=int(seed),
        docs=int(n_docs),
        docs_per_file=dpf,
        compress=compress,
        hard_rate=hard_rate,
        dirty_rate=float(dirty_rate),
        files_total=files_total,
    )
    existing = read_manifest(out)
    if existing is not None:
        existing.keep_present(out)
    manifest = fresh
    if existing is not None and existing.same_content(fresh):
        # Same generator and parameters: files already here are kept when they hold what the
        # new dataset needs (e.g. growing 10m to 20m keeps files 1-10); the others go.
        for f in existing.files:
            if f.number <= files_total and f.docs == fresh.expected_docs(f.number):
                fresh.put_file(
                    f,
                    [h for h in existing.hard_documents if h.file == f.name],
                    [d for d in existing.dirty_lines if d.file == f.name],
                )
            else:
                (out / f.name).unlink(missing_ok=True)
    elif existing is not None and existing.files:
        if set(numbers) != set(range(1, files_total + 1)):
            raise GeneratorError(
                f"{out} holds a different dataset (seed {existing.seed}, {existing.docs} docs, "
                f"{existing.docs_per_file}/file, compress {existing.compress}, rates "
                f"{existing.hard_rate}/{existing.dirty_rate}, generator "
                f"{existing.generator_version}); generate all its files or use another directory"
            )
        # A new dataset replaces the old one: remove the old files it listed.
        keep = {file_name(n, compress) for n in numbers}
        for f in existing.files:
            if f.name not in keep:
                (out / f.name).unlink(missing_ok=True)
    if existing is not None and existing.same_dataset(fresh):
        manifest.notes = existing.notes

    present = {f.number for f in manifest.files} if not force else set()
    skipped = [n for n in numbers if n in present]
    todo = [
        _Job(number=n, count=manifest.expected_docs(n), path=out / file_name(n, compress))
        for n in numbers
        if n not in present
    ]
    if skipped and not quiet:
        print(f"{len(skipped)} file(s) already generated, kept (force=True regenerates them)")
    total_docs = sum(j.count for j in todo)
    run = stats if stats is not None else RunStats()
    lock = threading.Lock()
    progress = _make_progress(total_docs, quiet) if todo else None
    task_id = None
    if progress is not None:
        progress.start()
        what = f"{len(todo)} file{'s' if len(todo) != 1 else ''}"
        task_id = progress.add_task(
            f"generating {what} ({jobs} job{'s' if jobs > 1 else ''})", total=total_docs
        )
    restore_sigterm = _sigterm_raises()
    started = time.perf_counter()
    pending = list(todo)
    running: list[_Job] = []
    finished_docs = 0

    def refresh() -> None:
        if progress is not None:
            with lock:
                done = finished_docs + sum(j.done_docs for j in running)
            progress.update(task_id, completed=done)

    try:
        while pending or running:
            while pending and len(running) < jobs:
                job = pending.pop(0)
                job.started = time.perf_counter()
                job.proc = subprocess.Popen(
                    _command(binary, job, seed, dpf, compress, hard_rate, dirty_rate),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
                job.reader = threading.Thread(target=_read_stderr, args=(job, lock), daemon=True)
                job.reader.start()
                job.stdout_reader = threading.Thread(target=_read_stdout, args=(job,), daemon=True)
                job.stdout_reader.start()
                running.append(job)
            # Wait for whichever child finishes first, refreshing the bar meanwhile.
            done_job = None
            while done_job is None:
                for job in running:
                    if _reap(job, block=False):
                        done_job = job
                        break
                if done_job is None:
                    refresh()
                    time.sleep(0.1)
            summary = _finish(done_job, run)
            running.remove(done_job)
            finished_docs += done_job.count
            entry, hard, dirty = _entry_from_summary(done_job, summary)
            manifest = _record_file(out, manifest, entry, hard, dirty)
            _remember_sha(done_job.path, entry.sha256)
            refresh()
    except BaseException:
        _abort(running, todo)
        raise
    finally:
        if progress is not None:
            progress.stop()
        restore_sigterm()

    run.seconds = time.perf_counter() - started
    run.files = len(todo)
    if todo:
        done_numbers = [j.number for j in todo]
        manifest = _record_file(
            out,
            manifest,
            None,
            [],
            [],
            notes={
                "last_run": {
                    "files": done_numbers if len(done_numbers) <= 50 else f"{len(done_numbers)} files",
                    "jobs": jobs,
                    "seconds": round(run.seconds, 3),
                    "docs_per_second": round(run.docs / run.seconds) if run.seconds else None,
                }
            },
        )
        if not quiet:
            rate = run.docs / run.seconds if run.seconds else 0
            print(
                f"{run.docs:,} documents, {run.bytes / 1e6:,.1f} MB in {run.seconds:.2f} s "
                f"({rate:,.0f} docs/s) -> {out}"
            )
    else:
        manifest = _record_file(out, manifest, None, [], [])
    if answers and manifest.is_complete():
        if todo or not (out / "answers.json").exists():
            _write_answers(out, jobs, quiet)
    elif answers and not quiet:
        print(
            f"dataset incomplete ({len(manifest.files)}/{manifest.files_total} files): "
            "answers.json not written"
        )
    return manifest


def _abort(running: list[_Job], todo: list[_Job]) -> None:
    """Kill the running children and remove partial outputs (best effort: a child may already
    be gone, e.g. when the whole process group got the signal)."""
    try:
        for job in running:
            if job.proc is None or job.exit_code is not None:
                continue
            with contextlib.suppress(ProcessLookupError):
                job.proc.kill()
            try:
                _reap(job, block=True)
            except ChildProcessError:
                job.exit_code = -1
    finally:
        for job in todo:
            for tmp in job.path.parent.glob(job.path.name + ".tmp*"):
                tmp.unlink(missing_ok=True)


def _sigterm_raises() -> Callable[[], None]:
    """While generating, turn SIGTERM into SystemExit so that children are killed and partial
    files removed (main thread only). Returns the function restoring the previous handler."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore


def _record_file(
    out: Path,
    manifest: Manifest,
    entry: FileEntry | None,
    hard: list[Marked],
    dirty: list[Marked],
    notes: dict | None = None,
) -> Manifest:
    """Add a finished file to ``dataset.json``: under a lock, re-read the manifest (another
    ``docbench generate --files`` may be filling the same directory), merge, write atomically."""
    import fcntl

    with open(out / ".dataset.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            current = read_manifest(out)
            if current is not None and current.same_dataset(manifest):
                current.keep_present(out)
                for f in manifest.files:  # what this run knows and the file does not (yet)
                    if f.number not in {c.number for c in current.files}:
                        current.put_file(
                            f,
                            [h for h in manifest.hard_documents if h.file == f.name],
                            [d for d in manifest.dirty_lines if d.file == f.name],
                        )
                manifest = current
            if entry is not None:
                manifest.put_file(entry, hard, dirty)
            if notes:
                manifest.notes.update(notes)
            write_manifest(out, manifest)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return manifest


def _finish(job: _Job, run: RunStats) -> dict:
    assert job.proc is not None
    _reap(job, block=True)
    code, rss = job.exit_code, job.peak_rss
    for reader in (job.stdout_reader, job.reader):
        if reader is not None:
            reader.join(timeout=30)
    stdout = job.stdout
    if code != 0:
        raise GeneratorError(
            f"docbench-gen failed on file {job.number} (exit {code}):\n" + "\n".join(job.stderr_tail)
        )
    try:
        summary = orjson.loads(stdout.strip().splitlines()[-1])
    except (IndexError, orjson.JSONDecodeError) as exc:
        raise GeneratorError(f"docbench-gen printed no summary for file {job.number}") from exc
    run.docs += summary["docs"]
    run.bytes += summary["bytes"]
    run.uncompressed_bytes += summary["uncompressed_bytes"]
    # The generator reports its own peak RSS (VmHWM); wait4's maxrss also counts the forked
    # Python before exec, so it is only the fallback.
    rss = summary.get("peak_rss_bytes") or rss
    run.peak_rss_bytes = max(run.peak_rss_bytes, rss)
    run.per_file.append(
        {
            "file": job.number,
            "seconds": summary.get("seconds"),
            "peak_rss_bytes": rss,
            "docs": summary["docs"],
        }
    )
    return summary


def _entry_from_summary(job: _Job, s: dict) -> tuple[FileEntry, list[Marked], list[Marked]]:
    name = job.path.name
    entry = FileEntry(
        number=job.number,
        name=name,
        bytes=s["bytes"],
        docs=s["docs"],
        lines=s["lines"],
        sha256=s["sha256"],
        uncompressed_bytes=s["uncompressed_bytes"],
        first_time_us=s["first_time_us"],
        last_time_us=s["last_time_us"],
    )
    hard = [Marked(file=name, line=h["line"], kind=h["kind"]) for h in s.get("hard", [])]
    dirty = [Marked(file=name, line=d["line"], kind=d["kind"]) for d in s.get("dirty", [])]
    return entry, hard, dirty


def _remember_sha(path: Path, sha: str) -> None:
    """Tell the dataset reader the file's sha256 so nothing hashes it again."""
    try:
        from docbench.dataset.reader import remember_sha256
    except ImportError:
        return
    remember_sha256(path, sha)


_ANSWERS_SNIPPET = (
    "import sys; from pathlib import Path; from docbench.dataset.oracle import write_answers; "
    "print(write_answers(Path(sys.argv[1]), jobs=int(sys.argv[2])))"
)


def _write_answers(out: Path, jobs: int, quiet: bool) -> None:
    """Write answers.json with the answer oracle, in a fresh interpreter: the oracle may fork
    worker processes, which is only safe from a process without other threads (this one ran
    reader threads and a progress bar)."""
    write: Callable | None
    try:
        from docbench.dataset import oracle
    except ImportError:
        write = None
    else:
        write = getattr(oracle, "write_answers", None)
    if write is None:
        if not quiet:
            print("answer oracle not available: answers.json not written")
        return
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _ANSWERS_SNIPPET, str(out), str(jobs)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise GeneratorError(
            f"the data was generated but computing answers.json failed:\n{proc.stderr[-3000:]}"
        )
    if not quiet:
        path = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else out / "answers.json"
        print(f"answers written to {path} in {time.perf_counter() - started:.1f} s")
