"""The analytics workload's result file."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import Field, JsonValue

from docbench.results.models import common
from docbench.results.models.common import Latency, QueryOutcomes
from docbench.results.models.header import Model, RunHeader


class RetainsStructure(Enum):
    yes = "yes"
    no = "no"


class Representation(common.Representation):
    non_default: Annotated[
        str | None,
        Field(
            description="What the variant sets beyond the engine's defaults where it matters, with its measured cost (the reports mark the run)"
        ),
    ] = None


class Load(Model):
    insert_seconds: float
    finish_seconds: float
    offered: int
    empty_lines: int | None = None
    documents_per_second: float | None = None


class FirstItem(Model):
    file: str
    line: int
    reason: str


class LoadErrors(Model):
    count: Annotated[int, Field(ge=0)]
    first: list[FirstItem]


class Kind(Enum):
    """
    Bluesky events (generated or real) or other documents (since 2026-12-05)
    """

    bluesky = "bluesky"
    documents = "documents"


class Baselines(Model):
    """
    Bytes of the dataset's files as ndjson: raw and compressed (null: unknown, e.g. imported)
    """

    raw: int | None = None
    gzip: int | None = None
    zstd: int | None = None
    lz4: int | None = None

    def sizes(self) -> dict[str, int | None]:
        """Every baseline the file names, by name (later ones after these four)."""
        named = {
            name: getattr(self, name) for name in type(self).model_fields if name in self.model_fields_set
        }
        return named | (self.model_extra or {})


class Dataset(Model):
    label: Annotated[str | None, Field(description="The data's name in reports (1m, bluesky-real...)")] = None
    baselines: Baselines
    manifest: dict[str, JsonValue] | None = None
    kind: Annotated[
        Kind | None,
        Field(description="Bluesky events (generated or real) or other documents (since 2026-12-05)"),
    ] = None


class Mode(Enum):
    closed_loop = "closed loop"
    open_loop = "open loop"


class Engine(Model):
    """
    The engine's processes over the measured window (null: a server by URL)
    """

    cpu_seconds: float | None = None
    cores: Annotated[float | None, Field(description="CPU seconds per second of the window")] = None
    peak_pss_bytes: Annotated[
        int | None, Field(description="Peak proportional set size, sampled every interval_s")
    ] = None
    samples: int | None = None
    interval_s: float | None = None


class PerQueryItem(Model):
    query: Annotated[int, Field(ge=1, le=5)]
    queries: int
    qps: float | None
    error_ratio: float | None = None
    latency_ms: Latency
    first_problem: str | None = None
    outcomes: QueryOutcomes


class MeasuredLevel(Model):
    """What a level of clients measured, the engine's levels and the driver's ceiling alike."""

    clients: Annotated[int, Field(ge=1)]
    processes: Annotated[int, Field(ge=1)]
    error: Annotated[str | None, Field(description="Why the level was not (fully) measured")]
    error_ratio: float | None = None
    latency_ms: Latency
    histogram: Annotated[
        str | None,
        Field(
            description="The HdrHistogram of the correct answers' latencies (ns), encoded (empty when none)"
        ),
    ] = None
    warmup_queries: int | None = None
    client_cpu_seconds: float | None = None
    per_query: list[PerQueryItem]
    outcomes: QueryOutcomes


class Level(MeasuredLevel):
    queries: Annotated[
        int,
        Field(
            description="Queries whose (intended) start fell in the measured window: their outcomes and latencies",
            ge=0,
        ),
    ]
    qps: Annotated[
        float | None,
        Field(
            description="Correct answers that arrived within the measured window, per second (whenever they were sent); null when some client processes' queries are missing (partial)"
        ),
    ]
    engine: Annotated[
        Engine | None,
        Field(description="The engine's processes over the measured window (null: a server by URL)"),
    ] = None
    warning: Annotated[
        str | None,
        Field(
            description="Fewer than 3 answers per client in the window: QPS and percentiles count only the first answers (with a --duration hint)"
        ),
    ] = None
    partial: Annotated[
        bool | None,
        Field(description="Some client processes did not report: the counts are those of the others"),
    ] = None
    missed: Annotated[
        int | None,
        Field(
            description="Open loop: queries scheduled in the window that were not sent by its end (the engine fell behind the rate)",
            ge=0,
        ),
    ] = None


class CeilingItem(MeasuredLevel):
    queries: Annotated[
        int, Field(description="Queries whose (intended) start fell in the measured window", ge=0)
    ]
    qps: Annotated[float, Field(description="Correct answers per second of the measured window")]
    engine: Annotated[
        Engine | None,
        Field(
            description="The engine's processes over the level: CPU seconds, average cores, sampled peak RSS"
        ),
    ] = None


class Concurrency(Model):
    """
    Q1-Q5 from many clients at once after the cold/hot queries (--clients): per number of clients, the engine's figures, and the driver's own ceiling (the same clients against an echo of the oracle's answers)
    """

    mode: Mode
    rate: float | None = None
    duration_s: float
    warmup_s: float
    seed: int
    timeout_s: float | None = None
    ceiling_duration_s: Annotated[
        float | None,
        Field(
            description="The window of the driver's ceiling levels: the engine's, at most 10 s (absent in files written before it was shortened: the engine's)"
        ),
    ] = None
    ceiling_warmup_s: float | None = None
    clients_in: str | None = None
    engine_measured: str | None = None
    levels: list[Level]
    ceiling: list[CeilingItem]


class Method(Enum):
    markers = "markers"
    count = "count"


# [second, freshness ms]: a marker at the second it was acknowledged
Point = Annotated[list[float], Field(max_length=2, min_length=2)]


class FreshnessMs(Model):
    """
    method 'markers': a marker document a second, found by the system's point lookup (the figures below); method 'count': freshness_by_count_ms, for a representation with no point lookup
    """

    method: Method
    p50: float | None
    p99: float | None
    max: float | None = None
    markers: int | None = None
    seen: int | None = None
    unseen_markers: int | None = None
    lost_markers: int | None = None
    every_s: float | None = None
    poll_ms_p50: float | None = None
    error: str | None = None
    points: list[Point] | None = None
    batches: int | None = None
    unseen_batches: int | None = None
    probe_ms_p50: float | None = None


class QueriesIdle(Model):
    count: int | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    errors: int | None = None


class QueriesDuring(Model):
    count: int | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    errors: int | None = None


class Lag(Model):
    """
    How far the acknowledged documents fell behind the target rate (s): the most and at the end
    """

    max: float | None = None
    last: float | None = None


class Second(Model):
    """
    One second of the level: documents acknowledged, and the median freshness by count of the batches acknowledged in it
    """

    second: int
    acknowledged: int
    freshness_p50_ms: float | None = None


class FreshnessByCountMs(Model):
    """
    every batch's time from acknowledgement until a probe of the visible count (nothing forced) saw it
    """

    p50: float | None = None
    p99: float | None = None
    max: float | None = None
    batches: int | None = None
    unseen_batches: int | None = None
    probe_ms_p50: float | None = None


class IngestLevel(Model):
    target_rate: Annotated[
        float | None, Field(description="documents/s; null: as fast as the engine takes them")
    ]
    offered: int
    acknowledged: int
    refused: int
    refused_first: list[Any] | None = None
    sustained_rate: float | None = None
    lag_s: Lag | None = None
    freshness_ms: Annotated[
        FreshnessMs | None,
        Field(
            description="method 'markers': a marker document a second, found by the system's point lookup (the figures below); method 'count': freshness_by_count_ms, for a representation with no point lookup"
        ),
    ] = None
    count_before: int | None = None
    expected_count: int
    visible_before_settle_end: int | None = None
    final_count: Annotated[
        int | None, Field(description="the count after the level (null: the count failed, see error)")
    ]
    restarted: bool | None = None
    exact: Annotated[
        bool, Field(description="final count = count before + documents acknowledged (none lost, none twice)")
    ]
    elapsed_s: float | None = None
    timeline: list[Second] | None = None
    queries_idle: QueriesIdle | None = None
    queries_during: QueriesDuring | None = None
    error: str | None = None
    offered_rate: Annotated[
        float | None, Field(description="documents sent per second, refused ones included: the driver's pace")
    ] = None
    freshness_by_count_ms: Annotated[
        FreshnessByCountMs | None,
        Field(
            description="every batch's time from acknowledgement until a probe of the visible count (nothing forced) saw it"
        ),
    ] = None


class Ingest(Model):
    """
    Live ingest (--ingest-rates): documents arriving at target rates through the system's loader while query clients run; or not_supported with the reason
    """

    not_supported: str | None = None
    duration_s: float | None = None
    clients: int | None = None
    seed: int | None = None
    probe_interval_s: float | None = None
    settings: dict[str, JsonValue] | None = None
    source: str | None = None
    hard_rate: float | None = None
    levels: list[IngestLevel] | None = None


# Per query (Q1-Q5), a figure per try (null: the try failed)
PerQuery = Annotated[list[list[float | None]], Field(max_length=5, min_length=0)]
# Bytes per query and try: integers (docbench's) or numbers (JSONBench's published ones)
PerQueryBytes = Annotated[list[list[int | float | None]], Field(max_length=5, min_length=0)]


class Status(Enum):
    ok = "ok"
    precision = "precision"
    approximate = "approximate"
    wrong = "wrong"
    error = "error"


class Storage(common.StorageBytes):
    """
    Bytes by the system's own figures: total, data and indexes (JSONBench's total_size, data_size, index_size), its files on disk, and its own detail
    """

    on_disk: Annotated[int | None, Field(description="Bytes of the system's files on disk")] = None
    detail: Annotated[dict[str, JsonValue] | None, Field(description="The system's own storage figures")] = (
        None
    )


class PortableStatus(Enum):
    correct = "correct"
    wrong = "wrong"
    error = "error"
    not_expressible = "not_expressible"


class PortableQuery(Model):
    """
    One query of the set: its answer's check, and seconds per try (try 1 cold; null = failed)
    """

    name: str
    status: PortableStatus
    detail: str | None = None
    result: list[float | None] | None = None
    empty: Annotated[bool | None, Field(description="A correct answer with no row (it proves little)")] = None


class Portable(Model):
    """
    The user's query set (--queries): each query compiled for the system, run cold and hot, its answer checked
    """

    set: str | None = None
    queries: list[PortableQuery]
    correct: int | None = None
    all_empty: Annotated[bool | None, Field(description="Every correct answer is empty")] = None


class Imported(Model):
    """
    Measured elsewhere (docbench import-jsonbench): where from, the source file; its answers are unchecked
    """

    from_: Annotated[str | None, Field(alias="from")] = None
    source: str | None = None


class Answer(Model):
    query: Annotated[int, Field(ge=1, le=5)]
    status: Status
    detail: str | None = None
    rows: list[Any] | None = None


class AnalyticsResult(RunHeader):
    version: str
    retains_structure: RetainsStructure
    representation: Annotated[
        Representation | None,
        Field(
            description="How the documents were held: the engine's JSON type or another representation, whether the whole document can be read back, whether paths were given a type or column by hand (beyond JSONBench's rules)"
        ),
    ] = None
    tags: list[str]
    dataset_size: Annotated[int | None, Field(description="Non-empty lines offered")]
    num_loaded_documents: Annotated[int | None, Field(description="The system's own count")]
    total_size: int | None
    data_size: int | None
    index_size: int | None
    result: Annotated[PerQuery, Field(description="Seconds per try; try 1 cold; null = failed")]
    memory_usage: Annotated[PerQueryBytes | None, Field(description="Peak bytes per try")] = None
    load_time: float | None
    comment: str
    workload: Literal["analytics"]
    tries: Annotated[int, Field(ge=1)]
    timeout_seconds: float | None = None
    cold_method: str | None = None
    answers: Annotated[list[Answer] | None, Field(max_length=5)] = None
    engine_time: PerQuery | None = None
    bytes_read: PerQueryBytes | None = None
    plans: list[str | None] | None = None
    plan_warnings: list[str | None] | None = None
    query_errors: list[list[str | None]] | None = None
    load: Load | None = None
    load_errors: LoadErrors | None = None
    storage: Storage | None = None
    dataset: Dataset
    error: str | None = None
    warnings: list[str] | None = None
    dataset_fingerprint: Annotated[
        str | None, Field(description="Identity of the data (files and their SHA-256); null when imported")
    ]
    concurrency: Annotated[
        Concurrency | None,
        Field(
            description="Q1-Q5 from many clients at once after the cold/hot queries (--clients): per number of clients, the engine's figures, and the driver's own ceiling (the same clients against an echo of the oracle's answers)"
        ),
    ] = None
    ingest: Annotated[
        Ingest | None,
        Field(
            description="Live ingest (--ingest-rates): documents arriving at target rates through the system's loader while query clients run; or not_supported with the reason"
        ),
    ] = None
    portable: Annotated[
        Portable | None,
        Field(
            description="The user's query set (--queries): each query compiled for the system, run cold and hot, its answer checked"
        ),
    ] = None
    imported: Annotated[
        Imported | None,
        Field(
            description="Measured elsewhere (docbench import-jsonbench): where from, the source file; its answers are unchecked"
        ),
    ] = None
    answers_basis: Annotated[
        str | None, Field(description="Why the answers were judged on the documents the system loaded")
    ] = None
