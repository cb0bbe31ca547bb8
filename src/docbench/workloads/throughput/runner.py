"""`docbench run throughput`: pgbench-style concurrent clients on every system.

Per system (its ``updates.py`` target, the same YCSB documents as the updates workload) and
variant: create, load ``docs`` documents, build the key index; then for each scenario, mix
and client count one *run*: the driver's clients for ``warmup + duration`` seconds
(see driver.py / clients.py), with

* the counts checked: operations done = values in the histograms; rows changed by updates =
  updates done (each update targets one loaded key); documents after = before + inserts;
* the driver's ceiling: the same clients, processes and mix against a target that does
  nothing (noop.py), measured once per (mix, clients, processes) and stored in every run;
* the system's native reference, when its folder has ``throughput.py`` with
  ``native_reference(target, run)`` (PostgreSQL: the real pgbench);
* the interval series and an HdrHistogram log of the response times beside the result.

Scenarios: ``cpu`` -- the data fits in the engine's cache, warmed by the run's warm-up;
``io`` -- the target's ``limit_cache(bytes)`` makes the engine's own cache small (PostgreSQL:
shared_buffers, with a restart) and a memory cgroup caps the page cache of the engine's
processes (memcap.py); the disk bytes read during the run are recorded as the proof.

Hooks of the updates contract (docbench.contracts.updates.UpdatesTarget, all with defaults):
``max_client_processes`` and ``concurrency_note`` (embedded engines: one process),
``release()`` (close the parent's own handle so client processes can open the database),
``server_pid()``, ``limit_cache(bytes) -> str`` (raises NotSupported when the engine cannot)
and ``restore_cache()``. A system's native reference is its ``throughput.py`` ADAPTER
(docbench.contracts.throughput.NativeReference).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from docbench import results
from docbench.contracts import ycsb
from docbench.contracts.common import NotSupported
from docbench.contracts.engine import main_pid
from docbench.contracts.mixes import READ_MODIFY_WRITE, UPDATE, mix_named
from docbench.contracts.throughput import NativeReference, ThroughputRun
from docbench.contracts.updates import UpdatesTarget
from docbench.core import iolimit, paths
from docbench.core.jsontypes import (
    JsonArray,
    JsonObject,
    JsonValue,
    as_array,
    as_float,
    as_int,
    as_object,
    as_str,
    object_or_empty,
)
from docbench.core.units import count_label
from docbench.systems import (
    REGISTERED,
    adapter_class,
    adapter_module,
    engine_class,
    open_engine,
    required_adapter_class,
)
from docbench.workloads import runloop
from docbench.workloads.throughput import memcap
from docbench.workloads.throughput.driver import DriveRequest, ServerDied, ServerWatch, drive
from docbench.workloads.throughput.report import final_report

WORKLOAD = "throughput"
NOOP_MODULE = "docbench.workloads.throughput.noop"
SCENARIOS = ("cpu", "io")
# The IO-bound scenario: engine cache and page-cache budget for the engine's processes.
IO_ENGINE_CACHE_BYTES = 16 << 20
IO_PAGE_CACHE_BYTES = 32 << 20
EMBEDDED_HEADROOM_BYTES = 48 << 20
# Per client: a server backend's or an embedded client's own memory (PostgreSQL backends were
# OOM-killed under the cap with 4 MB each when pgbench connected 8 new ones).
CLIENT_HEADROOM_BYTES = 8 << 20
SERVER_HEADROOM_BYTES = 32 << 20
CEILING_WARNING_FACTOR = 2.0
SERVER_RECOVERY_S = 120.0


@dataclasses.dataclass
class ThroughputRequest:
    system_names: list[str] | None = None
    variants: list[str] | None = None
    docs: int = 100_000
    clients: list[int] = dataclasses.field(default_factory=lambda: [1, 8, 32])
    processes: int | None = None
    duration_s: float = 30.0
    warmup_s: float = 5.0
    mixes: list[str] = dataclasses.field(default_factory=lambda: ["read-only", "read-write"])
    distribution: str = "uniform"
    rate: float | None = None
    interval_s: float = 5.0
    scenarios: list[str] = dataclasses.field(default_factory=lambda: ["cpu"])
    results_dir: Path = dataclasses.field(default_factory=paths.results_dir)
    urls: dict[str, str] = dataclasses.field(default_factory=dict)
    seed: int = 1
    ceiling: bool = True
    native: bool = True
    # "auto": compiled where the system offers it (compiled.py), else multiplexed where the
    # sessions can be (multiplexed.py), else threads; or one of those three, to compare.
    client_loop: str = "auto"
    # The native tool runs before docbench's clients instead of after them (bench rounds
    # alternate).
    native_first: bool = False
    # The native tool's own built-in workloads beside (pgbench's select-only / tpcb-like).
    native_builtin: bool = True
    resume: bool = False
    quiet: bool = False
    # --io-limit: the block-IO throttle on the engine's processes during each run (None: none).
    io_limit: iolimit.IoLimit | None = None


@dataclasses.dataclass
class Run:
    """One (scenario, mix, clients) measurement; also what a native reference receives."""

    scenario: str
    mix: str
    clients: int
    processes: int
    request: ThroughputRequest

    def contract(self) -> ThroughputRun:
        """What a native reference receives."""
        request = self.request
        return ThroughputRun(
            self.scenario,
            self.mix,
            self.clients,
            self.processes,
            request.duration_s,
            request.warmup_s,
            request.distribution,
            request.rate,
            request.docs,
            request.seed,
            request.native_builtin,
        )

    @property
    def run_id(self) -> str:
        rate = f"-r{self.request.rate:g}" if self.request.rate else ""
        return f"{self.scenario}-{self.mix}-{self.request.distribution}-c{self.clients}{rate}"


def _say(request: ThroughputRequest, text: str) -> None:
    if not request.quiet:
        print(text, file=sys.stderr, flush=True)


def default_processes(clients: int, limit: int | None) -> int:
    processes = min(clients, os.cpu_count() or 1)
    return max(1, min(processes, limit) if limit else processes)


# ----- checks --------------------------------------------------------------------------------


def _updates_figure(operations: JsonObject, key: str) -> int:
    """The sum of an operation figure over the update operations (0 where absent)."""
    return sum(
        as_int(object_or_empty(operations.get(name)).get(key, 0), f"{name}.{key}")
        for name in (UPDATE, READ_MODIFY_WRITE)
    )


def check_counts(summary: JsonObject, count_before: int, count_after: int) -> JsonObject:
    """Do the counts add up? operations = histogram values; rows changed = updates;
    documents after = before + inserts (warm-up inserts included)."""
    operations = as_object(summary["operations"], "summary.operations")
    recorded = sum(
        as_int(as_object(as_object(op)["service"])["count"], "service count") for op in operations.values()
    )
    updates = _updates_figure(operations, "ok")
    updates_found = updates - _updates_figure(operations, "not_found")
    rows_changed = _updates_figure(operations, "rows_changed")
    expected_after = count_before + as_int(summary["inserted_total"], "inserted_total")
    problems: JsonArray = []
    if recorded != summary["transactions"]:
        problems.append(f"histograms hold {recorded} values for {summary['transactions']} operations")
    if rows_changed != updates_found:
        problems.append(f"{rows_changed} rows changed by {updates_found} updates of found keys")
    if count_after != expected_after:
        problems.append(f"{count_after} documents after the run, expected {expected_after}")
    return {
        "verdict": "ok" if not problems else "wrong",
        "problems": problems,
        "operations": summary["transactions"],
        "histogram_values": recorded,
        "updates": updates,
        "rows_changed": rows_changed,
        "inserts": summary["inserted_total"],
        "count_before": count_before,
        "count_after": count_after,
    }


# ----- one run -------------------------------------------------------------------------------


class Ceilings:
    """The driver's own ceiling per (mix, clients, processes), measured once per invocation."""

    def __init__(self, request: ThroughputRequest) -> None:
        self.request = request
        self.measured: dict[tuple[str, int, int], JsonObject] = {}

    def get(self, run: Run) -> JsonObject | None:
        if not self.request.ceiling:
            return None
        key = (run.mix, run.clients, run.processes)
        if key not in self.measured:
            summary = drive(self._drive_request(run))
            self.measured[key] = {
                "tps": summary["tps"],
                "latency": summary["latency"],
                "clients": run.clients,
                "processes": run.processes,
                "duration_s": self.request.duration_s,
            }
        return self.measured[key]

    def _drive_request(self, run: Run) -> DriveRequest:
        request = self.request
        return DriveRequest(
            NOOP_MODULE,
            {},
            run.mix,
            request.distribution,
            request.docs,
            run.clients,
            run.processes,
            min(request.duration_s, 10.0),
            warmup_s=1.0,
            interval_s=request.interval_s,
            seed=request.seed,
            loop=request.client_loop,
        )


def _drive_request(run: Run, module_name: str, spec: JsonObject, cgroup_files: list[str]) -> DriveRequest:
    request = run.request
    return DriveRequest(
        module_name,
        spec,
        run.mix,
        request.distribution,
        request.docs,
        run.clients,
        run.processes,
        request.duration_s,
        warmup_s=request.warmup_s,
        interval_s=request.interval_s,
        rate=request.rate,
        seed=request.seed,
        cgroup_files=cgroup_files,
        loop=request.client_loop,
    )


@dataclasses.dataclass
class RunCgroups:
    """The cgroups of one run: the memory cap (io scenario) and the io limit's throttle (in
    the memory cap's blkio cgroup when there is one, else a cgroup of its own)."""

    cap: memcap.MemoryCap | None = None
    throttle: Any = None  # the directory (Path) whose throttle counters are the run's
    device: tuple[int, int] | None = None
    version: str | None = None
    files: list[str] = dataclasses.field(default_factory=list)

    def served(self) -> dict[str, int] | None:
        if self.throttle is None or self.device is None or self.version is None:
            return None
        return iolimit.served(self.throttle, self.version, self.device)


@contextlib.contextmanager
def _run_cgroups(target: Any, run: Run):
    """The run's cgroups (see RunCgroups), with the engine's server processes in them; the
    clients' worker processes join them by ``files`` (embedded engines). Everything moved
    back out and removed at the end, also on an exception or Ctrl-C (core/cgroups.py)."""
    limit = run.request.io_limit
    groups = RunCgroups()
    with contextlib.ExitStack() as stack:
        joined: list[Any] = []
        if run.scenario == "io":
            # No limit until the clients have connected; then what the engine's processes use
            # plus the page-cache budget (cap_page_cache, called by the driver before the start).
            groups.cap = stack.enter_context(memcap.MemoryCap(run.run_id, 1 << 50))
            joined.append(groups.cap)
        if limit is not None:
            groups.version = iolimit.cgroup_version()
            groups.device = iolimit.device_of(target.engine.workdir)
            if groups.version is None:
                raise RuntimeError(iolimit.refusal(target.engine.workdir) or "no block-IO throttle")
            if groups.cap is not None and groups.version == "v1":
                groups.throttle = groups.cap.dirs["blkio"]
                iolimit.apply(groups.throttle, limit, groups.device, groups.version)
            else:
                throttled = stack.enter_context(
                    iolimit.Throttled(run.run_id, limit, groups.device, groups.version)
                )
                groups.throttle = throttled.dirs[iolimit.hierarchy(groups.version)]
                joined.append(throttled)
        pid = main_pid(target.engine)
        for group in joined:
            if pid:
                group.add_tree(pid)
            groups.files.extend(group.procs_files())
        yield groups


def run_once(
    target: UpdatesTarget,
    module_name: str,
    run: Run,
    ceilings: Ceilings,
    native: NativeReference | None,
    out_stem: Path,
    watch: ServerWatch | None = None,
) -> JsonObject:
    """One run; ``watch``: the server's process (None: embedded), whose death ends the run
    at once (ServerDied)."""
    if watch is not None:
        watch.check()
    entry: JsonObject = {
        "run_id": run.run_id,
        "scenario": run.scenario,
        "mix": run.mix,
        "mix_description": mix_named(run.mix).description,
        "clients": run.clients,
        "processes": run.processes,
        "distribution": run.request.distribution,
        "rate": run.request.rate,
        "duration_s": run.request.duration_s,
        "warmup_s": run.request.warmup_s,
    }
    # No server process: the clients' worker processes are the engine (embedded).
    embedded_workers = watch is None
    with _run_cgroups(target, run) as groups:
        cap = groups.cap
        files = groups.files if embedded_workers else []
        budget = _budget(run, embedded=bool(files))
        tightened: list[bool] = []

        def after_warmup(seconds: float) -> None:
            if cap is not None and not tightened and seconds >= run.request.warmup_s * 0.8:
                tightened.append(cap.tighten(IO_PAGE_CACHE_BYTES))

        reference: JsonObject | None = None
        native_tool = native if run.request.native else None
        if native_tool is not None and run.request.native_first:
            # The native tool first (bench rounds alternate the order, so neither tool always
            # meets the server, its caches and its table as the other left them).
            reference = _native_under_cap(native_tool, run, cap, budget)
            if cap is not None:
                cap.lift()
        count_before = _count(target, watch)
        target.engine.release()
        served_before = groups.served()  # (after a native tool that ran first)
        started = time.perf_counter()
        summary = drive(
            _drive_request(run, module_name, target.session_spec(), files),
            on_progress=lambda line: _say(run.request, "  " + line),
            on_ready=(lambda: cap.cap_page_cache(budget)) if cap else None,
            during=after_warmup if cap else None,
            watch=watch,
        )
        entry["wall_seconds"] = time.perf_counter() - started
        served = groups.served()
        if served is not None and served_before is not None:
            entry["io_served"] = {key: served[key] - served_before[key] for key in served}
        if cap is not None:
            entry["memory_cap"] = cap.stats() | {"tightened_after_warmup": bool(tightened and tightened[0])}
        entry["check"] = check_counts(summary, count_before, _count(target, watch))
        if native_tool is not None and reference is None:
            reference = _native_under_cap(native_tool, run, cap, budget)
            after = groups.served()
            if served is not None and after is not None and "error" not in reference:
                reference["io_served"] = {key: after[key] - served[key] for key in after}
        if reference is not None:
            if reference.get("tps"):
                reference["ratio"] = as_float(summary["tps"], "tps") / as_float(
                    reference["tps"], "native tps"
                )
            reference["order"] = "native first" if run.request.native_first else "docbench first"
            entry["native_reference"] = reference
    _write_series(out_stem, run, summary)
    entry["summary"] = {k: v for k, v in summary.items() if k not in ("intervals", "interval_histograms")}
    ceiling = entry["ceiling"] = ceilings.get(run)
    if ceiling and as_float(ceiling["tps"], "ceiling tps") < CEILING_WARNING_FACTOR * as_float(
        summary["tps"], "tps"
    ):
        entry["ceiling_warning"] = (
            f"within {CEILING_WARNING_FACTOR:g}x of the driver's own "
            f"ceiling ({ceiling['tps']:,.0f} ops/s): the "
            "driver may be the bottleneck"
        )
    return entry


def _count(target: Any, watch: ServerWatch | None = None, patience_s: float = SERVER_RECOVERY_S) -> int:
    """The target's count; again on a fresh connection while the server does not answer, for
    up to ``patience_s`` (a server restarting after a crash, e.g. a backend the io scenario's
    cap killed, refuses connections until its recovery ends; the crash itself shows in the
    run's failures and memory figures) -- but not once the server's process is gone."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            return target.count()
        except Exception:  # noqa: BLE001 - retried until the deadline, then it propagates
            if watch is not None:
                watch.check()
            if time.monotonic() > deadline:
                raise
            target.engine.release()
            time.sleep(1.0)


def _budget(run: Run, embedded: bool) -> int:
    """Memory allowed beside what the engine's processes use when the clients have connected:
    the page-cache budget plus headroom for what they still allocate while running (server
    backends: per client; embedded engines' worker processes: per process and client), or
    the cap would kill them. Unused headroom is page cache too: the cap is tightened after
    the warm-up (MemoryCap.tighten)."""
    headroom = SERVER_HEADROOM_BYTES + run.clients * CLIENT_HEADROOM_BYTES
    if embedded:
        headroom += run.processes * EMBEDDED_HEADROOM_BYTES
    return IO_PAGE_CACHE_BYTES + headroom


def _native_under_cap(
    native: NativeReference, run: Run, cap: memcap.MemoryCap | None, budget: int
) -> JsonObject:
    """The native tool's run, under the same cap as docbench's clients (page cache dropped
    again, capped, tightened at the same moment of its warm-up), so that both are IO-bound
    alike."""
    tightened: list[bool] = []
    timer = None
    if cap is not None:
        cap.reset(budget)
        timer = threading.Timer(
            run.request.warmup_s * 0.8, lambda: tightened.append(cap.tighten(IO_PAGE_CACHE_BYTES))
        )
        timer.start()
    try:
        reference: JsonObject = native.measure(run.contract())
    except Exception as error:  # noqa: BLE001 - a reference failure is recorded
        return {"error": f"{type(error).__name__}: {error}"}
    finally:
        if timer is not None:
            timer.cancel()
    if cap is not None:
        reference["memory_cap"] = cap.stats() | {"tightened_after_warmup": bool(tightened and tightened[0])}
    return reference


def _write_series(out_stem: Path, run: Run, summary: JsonObject) -> None:
    """The interval series (JSON) and an HdrHistogram interval log of response times."""
    from hdrh.log import HistogramLogWriter

    from docbench.core import histograms

    series = out_stem.with_name(f"{out_stem.name}.{run.run_id}.intervals.json")
    results.write_atomically(
        series,
        {"run_id": run.run_id, "interval_s": run.request.interval_s, "intervals": summary["intervals"]},
    )
    log_path = out_stem.with_name(f"{out_stem.name}.{run.run_id}.hlog")
    tmp = log_path.with_name("." + log_path.name + ".tmp")
    with tmp.open("w") as handle:
        writer = HistogramLogWriter(handle)
        writer.output_comment(f"docbench throughput {run.run_id}: response times in ns")
        # (hdrh's own output_start_time is broken: it calls datetime.iso_format.)
        handle.write("#[StartTime: 0.000 (seconds since the run's start)]\n")
        for number, encoded in enumerate(as_array(summary["interval_histograms"], "interval_histograms")):
            histogram = histograms.decode(as_str(encoded, "an interval histogram"))
            histogram.set_start_time_stamp(int(number * run.request.interval_s * 1000))
            histogram.set_end_time_stamp(int((number + 1) * run.request.interval_s * 1000))
            writer.output_interval_histogram(histogram)
    os.replace(tmp, log_path)


# ----- scenarios, systems --------------------------------------------------------------------


def scenario_problem(target: Any, scenario: str, url: str | None) -> str | None:
    """Why a scenario cannot run for this target here (None: it can)."""
    if scenario == "cpu":
        return None
    reason = memcap.availability()
    if reason:
        return reason
    if url:
        return "a server reached by URL: docbench cannot cap its memory or restart it"
    return None


@contextlib.contextmanager
def scenario_setup(target: Any, scenario: str):
    """The io scenario makes the engine's cache small for its runs, then restores it."""
    if scenario != "io":
        yield None
        return
    what = target.limit_cache(IO_ENGINE_CACHE_BYTES)
    try:
        yield what
    finally:
        target.restore_cache()


def _header(target: UpdatesTarget, request: ThroughputRequest, version: str | None) -> JsonObject:
    document = results.result_header(
        WORKLOAD, target.engine, target.variant, count_label(request.docs), version
    )
    return {
        **document,
        "dataset": {
            "kind": "ycsb",
            "docs": request.docs,
            "seed": request.seed,
            "fields": ycsb.FIELD_COUNT,
            "field_length": ycsb.FIELD_LENGTH,
        },
        "concurrency": target.concurrency_note
        or "one connection per client; clients spread over worker processes",
        "max_client_processes": target.max_client_processes,
        "client_loop": request.client_loop,
        "io_limit": iolimit.record(request.io_limit, target.engine.workdir),
        "io_method": {
            "engine_cache_bytes": IO_ENGINE_CACHE_BYTES,
            "page_cache_budget_bytes": IO_PAGE_CACHE_BYTES,
            "how": "engine cache made small by the target (limit_cache), page cache "
            "dropped, engine processes in a memory cgroup; disk reads counted "
            "by the blkio cgroup",
        },
        "runs": [],
        "skipped": [],
        "errors": [],
    }


def _plan(request: ThroughputRequest, target: UpdatesTarget) -> list[tuple[str, str, int, int]]:
    limit = target.max_client_processes
    return [
        (
            scenario,
            mix,
            clients,
            min(request.processes, clients, limit or clients)
            if request.processes
            else default_processes(clients, limit),
        )
        for scenario in request.scenarios
        for mix in request.mixes
        for clients in request.clients
    ]


def run_variant(
    name: str, variant: Any, request: ThroughputRequest, ceilings: Ceilings, version: str | None
) -> JsonObject:
    label = count_label(request.docs)
    previous: JsonObject | None = None
    path: Path | None = None
    if request.resume:
        latest = results.latest_run(request.results_dir, WORKLOAD, name, variant.name, label)
        if latest and latest[1].get("complete"):
            _say(request, f"skip {name}/{variant.name}: {latest[0].name} is complete")
            return {**latest[1], "_path": str(latest[0])}
        if latest:
            path, previous = latest
    workdir = runloop.claim_workdir(paths.work_dir() / WORKLOAD / f"{name}-{variant.name}", fresh=True)
    target: UpdatesTarget = required_adapter_class(name, "updates")(
        open_engine(name, workdir, request.urls.get(name)), variant
    )
    document = _header(target, request, version)
    done = _runs_by_id(previous)
    native_class = adapter_class(name, "throughput")
    native = native_class(target) if native_class is not None else None
    with runloop.result_slot(request.results_dir, WORKLOAD, name, variant.name, label, path) as reserved:
        return _measure_variant(name, target, request, ceilings, native, document, done, reserved)


def _measure_variant(
    name: str,
    target: UpdatesTarget,
    request: ThroughputRequest,
    ceilings: Ceilings,
    native: NativeReference | None,
    document: JsonObject,
    done: dict[str, JsonObject],
    path: Path,
) -> JsonObject:
    with runloop.engine_running(target.engine, document):
        try:
            document["engine"] = target.engine_info()
            started = time.perf_counter()
            target.create()
            target.load(ycsb.document_lines(request.docs, request.seed))
            target.create_key_index()
            document["load_seconds"] = time.perf_counter() - started
            _run_plan(name, target, request, ceilings, native, document, done, path)
        except Exception as error:  # noqa: BLE001 - recorded (this result's list); the next system runs
            as_array(document["errors"]).append(
                {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc(limit=8)}
            )
    document["complete"] = not as_array(document["errors"]) and all(
        _verdict(run) == "ok" for run in as_array(document["runs"])
    )
    document = results.scrub(document, target.engine.url)
    kept = runloop.save(path, document, target.engine.url)
    # A result kept elsewhere (the results directory failed: said on stderr) is a failure.
    document["complete"] = document["complete"] and kept == path
    document["_path"] = str(kept or path)
    return document


def _run_plan(
    name: str,
    target: UpdatesTarget,
    request: ThroughputRequest,
    ceilings: Ceilings,
    native: NativeReference | None,
    document: JsonObject,
    done: dict[str, JsonObject],
    path: Path,
) -> None:
    module_name = type(target).__module__
    plan = _plan(request, target)
    runs, skipped = as_array(document["runs"]), as_array(document["skipped"])
    for scenario in request.scenarios:
        problem = scenario_problem(target, scenario, request.urls.get(name))
        if problem:
            skipped.append({"scenario": scenario, "reason": problem})
            _say(request, f"  {scenario}: not run ({problem})")
            continue
        try:
            with scenario_setup(target, scenario) as what:
                if what:
                    document.setdefault("io_setup", what)
                watch = _watch(name, target)  # (the scenario's setup may have restarted it)
                for _, mix, clients, processes in (p for p in plan if p[0] == scenario):
                    run = Run(scenario, mix, clients, processes, request)
                    if run.run_id in done and _verdict(done[run.run_id]) == "ok":
                        runs.append(done[run.run_id])
                        continue
                    if runs and as_object(runs[-1]).get("server_died"):
                        target.engine.start()  # a new server (its data recovered) for this run
                        watch = _watch(name, target)
                    _say(
                        request,
                        f"{name} {run.run_id}: {clients} clients in {processes} processes, "
                        f"{request.warmup_s:g} s warm-up + {request.duration_s:g} s",
                    )
                    try:
                        entry = run_once(
                            target, module_name, run, ceilings, native, path.with_suffix(""), watch
                        )
                    except Exception as error:  # noqa: BLE001 - recorded; the next run goes on
                        entry = _failed_run(run, error)
                    runs.append(results.scrub(entry, target.engine.url))
                    for line in final_report(document, entry):
                        _say(request, "  " + line)
                    results.write_atomically(path, document)
        except NotSupported as reason:
            skipped.append({"scenario": scenario, "reason": str(reason)})
            _say(request, f"  {scenario}: not run ({reason})")


def _watch(name: str, target: UpdatesTarget) -> ServerWatch | None:
    """The watch of the server's process as it runs now (None: embedded, or by URL)."""
    return ServerWatch.of(name, main_pid(target.engine))


def _runs_by_id(previous: JsonObject | None) -> dict[str, JsonObject]:
    """The runs of the result being resumed, by their ``run_id``."""
    runs = (as_object(run, "a run") for run in as_array((previous or {}).get("runs", []), "runs"))
    return {as_str(run["run_id"], "run_id"): run for run in runs}


def _verdict(run: JsonValue) -> JsonValue:
    """The verdict of a run's count check (None: not checked)."""
    return object_or_empty(as_object(run, "a run").get("check")).get("verdict")


def _failed_run(run: Run, error: Exception) -> JsonObject:
    """The entry of a run that ended in ``error``; a server that died is said as it is."""
    entry: JsonObject = {
        "run_id": run.run_id,
        "scenario": run.scenario,
        "mix": run.mix,
        "clients": run.clients,
        "processes": run.processes,
    }
    if isinstance(error, ServerDied):
        return entry | {"error": str(error), "server_died": True}
    return entry | {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc(limit=8)}


def run_throughput(request: ThroughputRequest) -> int:
    """Run the workload; the exit code (0 = every run complete and its counts add up)."""
    results.check_writable(request.results_dir)
    refused = unserved_client_loop(request) + io_limit_refusals(request)
    if refused:
        for line in refused:
            _say(request, line)
        return 2
    ceilings = Ceilings(request)
    failures = 0
    written: list[Path] = []
    for name in request.system_names or REGISTERED:
        module = adapter_module(name, "updates")
        if module is None:
            _say(request, f"{name}: throughput workload not supported (no updates target)")
            continue
        availability = engine_class(name).availability(request.urls.get(name))
        if not availability.ok:
            _say(request, f"{name}: skipped ({availability.reason})")
            failures += 1 if request.system_names else 0
            continue
        variants = (
            [v for v in module.VARIANTS if v.name in request.variants]
            if request.variants
            else module.VARIANTS[:1]
        )
        for variant in variants:
            _say(request, f"{name}/{variant.name}: {request.docs:,} documents")
            document = run_variant(name, variant, request, ceilings, availability.version)
            written.append(Path(as_str(document["_path"], "_path")))
            failures += 0 if document["complete"] else 1
            for error in as_array(document["errors"]):
                _say(request, f"  error: {as_object(error)['error']}")
    written = [p for p in written if p.is_file()]
    if written:
        from docbench.workloads.throughput.report import print_throughput_report

        print_throughput_report(written)
    return 1 if failures else 0


def unserved_client_loop(request: ThroughputRequest) -> list[str]:
    """What refuses the requested --client-loop, said before anything is loaded: a system
    whose sessions cannot run in it (its target's client_loops), of those named."""
    if request.client_loop == "auto":
        return []
    refusals = []
    for name in request.system_names or []:
        module = adapter_module(name, "updates")
        if module is not None and request.client_loop not in module.ADAPTER.client_loops:
            refusals.append(
                f"{name}: the {request.client_loop} client loop cannot serve it "
                f"(its sessions run in: {', '.join(module.ADAPTER.client_loops)})"
            )
    return refusals


def io_limit_refusals(request: ThroughputRequest) -> list[str]:
    """Why --io-limit cannot apply, said before anything is loaded: not root, no block-IO
    throttle, no disk under the work directory, a server reached by URL (not docbench's
    processes)."""
    if request.io_limit is None:
        return []
    reason = iolimit.refusal(paths.work_dir())
    if reason:
        return [reason]
    return [
        f"{name}: --io-limit cannot throttle a server reached by URL (its processes are not docbench's)"
        for name in request.system_names or list(request.urls)
        if request.urls.get(name)
    ]
