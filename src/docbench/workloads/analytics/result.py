"""The analytics result as the runner builds it: its parts typed, the file unchanged.

These are TypedDicts, so at run time the result is the dict it always was (its keys in the
order the runner sets them); ``results/models/analytics.py`` is what reads it back. A part
another module builds has its TypedDict there (concurrency.py, ingest.py, portable.py).
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from docbench.core.jsontypes import (
    JsonArray,
    JsonMapping,
    JsonObject,
    JsonValue,
    as_int,
    as_object,
    as_str,
    optional_str,
)
from docbench.workloads.analytics.concurrency import ConcurrencyRecord
from docbench.workloads.analytics.ingest import IngestNotSupported, IngestRecord
from docbench.workloads.analytics.portable import PortableRecord
from docbench.workloads.runloop import RunRecord


class DatasetRecord(TypedDict):
    """The result's ``dataset``: what the data are and where they came from."""

    kind: str  # "bluesky" (Q1-Q5 find them) or "documents"
    label: str
    path: str
    files: list[str]
    fingerprint: str
    documents_by_oracle: JsonValue
    invalid_lines_by_oracle: JsonValue
    manifest: JsonObject | None  # the generator's provenance fields
    baselines: dict[str, int]


class LoadRecord(TypedDict):
    """The result's ``load``: the load driver's figures."""

    insert_seconds: float
    finish_seconds: float
    finish_steps: list[JsonObject]
    documents_per_second: float | None
    offered: int
    empty_lines: int
    batches: int
    retried_batches: int
    batch_size: int
    resumed_after_files: int


class LoadErrorsRecord(TypedDict):
    """The result's ``load_errors``: the documents the engine refused."""

    count: int
    not_objects: int
    first: list[JsonObject]  # the first ones listed (file, line, reason)
    log: str | None  # the refusal log beside the result


class StorageRecord(TypedDict):
    """The result's ``storage``: bytes by the system's own figures and on disk."""

    total: int | None
    data: int | None
    index: int | None
    on_disk: int | None
    detail: JsonObject


class AlternativeRecord(TypedDict):
    """An alternative form of a query: its seconds per try and its own answer check."""

    result: list[float | None]
    engine_time: list[float | None]
    status: str
    detail: str
    rows: JsonArray | None


class AnswerRecord(TypedDict):
    """One of ``answers``: Q1-Q5's answer checked against the oracle's."""

    query: int
    status: str
    detail: str
    rows: JsonArray | None
    alternatives: NotRequired[dict[str, AlternativeRecord]]
    crashed: NotRequired[bool]


class PerQueryRecords(TypedDict):
    """What the cold/hot queries add to the result, a list each with an entry per query."""

    answers: list[AnswerRecord]
    engine_time: list[list[float | None]]
    bytes_read: list[list[int | None]]
    plans: list[str | None]
    plan_warnings: list[str | None]
    query_errors: list[list[str | None]]
    query_extra: list[list[JsonObject]]


class AnalyticsDocument(RunRecord, total=False):
    """The whole result: the header every workload's result starts with (results.header),
    JSONBench's keys, then docbench's additions, each set as the run gets to it."""

    # the header (results.result_header), in its order
    format: int
    workload: str
    system: str
    display_name: str
    variant: str
    variant_role: str
    variant_description: str
    variant_settings: JsonObject
    dataset_label: str
    version: str
    engine_mode: str
    managed: bool
    url: str | None
    cluster: JsonObject | None
    os: str
    date: str
    machine: str
    machine_slug: str
    environment: JsonObject
    started_at: str
    # JSONBench's keys (its `system` is docbench's `display_name`)
    retains_structure: str
    representation: JsonObject
    tags: list[str]
    dataset_size: int | None
    num_loaded_documents: int | None
    total_size: int | None
    data_size: int | None
    index_size: int | None
    result: list[list[float | None]]
    memory_usage: list[list[int | None]]
    load_time: float | None
    comment: str
    # docbench's additions
    dataset_fingerprint: str
    dataset: DatasetRecord
    tries: int
    timeout_seconds: float
    load: LoadRecord
    load_errors: LoadErrorsRecord
    storage: StorageRecord
    answers_basis: str
    cold_method: str
    answers: list[AnswerRecord]
    engine_time: list[list[float | None]]
    bytes_read: list[list[int | None]]
    plans: list[str | None]
    plan_warnings: list[str | None]
    query_errors: list[list[str | None]]
    query_extra: list[list[JsonObject]]
    portable: PortableRecord
    concurrency: ConcurrencyRecord
    ingest: IngestRecord | IngestNotSupported
    docbench_peak_rss_bytes: int


def _flag(value: JsonValue, what: str) -> bool:
    if isinstance(value, bool):
        return value
    raise TypeError(f"{what}: expected true or false, got {type(value).__name__}")


def header_part(header: JsonMapping) -> AnalyticsDocument:
    """The result's header (``results.result_header``'s keys, in its order) as the start of
    an analytics result, each value narrowed to its type."""
    part: AnalyticsDocument = {
        "format": as_int(header["format"], "format"),
        "workload": as_str(header["workload"], "workload"),
        "system": as_str(header["system"], "system"),
        "display_name": as_str(header["display_name"], "display_name"),
        "variant": as_str(header["variant"], "variant"),
        "variant_role": as_str(header["variant_role"], "variant_role"),
        "variant_description": as_str(header["variant_description"], "variant_description"),
        "variant_settings": as_object(header["variant_settings"], "variant_settings"),
        "dataset_label": as_str(header["dataset_label"], "dataset_label"),
        "version": as_str(header["version"], "version"),
        "engine_mode": as_str(header["engine_mode"], "engine_mode"),
        "managed": _flag(header["managed"], "managed"),
        "url": optional_str(header["url"], "url"),
        "cluster": None if header["cluster"] is None else as_object(header["cluster"], "cluster"),
        "os": as_str(header["os"], "os"),
        "date": as_str(header["date"], "date"),
        "machine": as_str(header["machine"], "machine"),
        "machine_slug": as_str(header["machine_slug"], "machine_slug"),
        "environment": as_object(header["environment"], "environment"),
        "started_at": as_str(header["started_at"], "started_at"),
        "finished_at": optional_str(header["finished_at"], "finished_at"),
        "complete": _flag(header["complete"], "complete"),
    }
    # Every key of the header, in its order: a key added there must be added here.
    assert list(part) == list(header), f"the header's keys changed: {list(header)}"
    return part
