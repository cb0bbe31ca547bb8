"""Older result documents read as the current format, so earlier results/ directories still
report. Format 1 (docbench before the redesign): analytics ``system`` was the display name
(registry name in ``system_name``); storage said ``settings``/``started``/``finished``;
updates ``finished``; no ``dataset_label``."""

from __future__ import annotations

from docbench.core.jsontypes import (
    JsonMapping,
    JsonObject,
    JsonValue,
    as_array,
    as_float,
    as_object,
    as_str,
    optional_str,
)


def upgrade(document: JsonObject) -> JsonObject:
    if as_float(document.get("format", 1), "format") >= 2 or "system" not in document:
        return document
    workload = document.setdefault("workload", "analytics")
    if workload == "analytics" and document.get("system_name"):
        document.setdefault("display_name", document["system"])
        document["system"] = document["system_name"]
    for old, new in (
        ("settings", "variant_settings"),
        ("started", "started_at"),
        ("finished", "finished_at"),
    ):
        if old in document and new not in document:
            document[new] = document.pop(old)
    if "dataset_label" not in document:
        document["dataset_label"] = _label(workload, document)
    document.setdefault("display_name", document.get("system"))
    hostname = as_object(document.get("environment") or {}, "environment").get("hostname")
    if hostname and "machine_slug" not in document:
        from docbench.results.environment import slug

        document["machine_slug"] = slug(as_str(hostname, "environment.hostname"))
    document["format_read_from"] = document.get("format", 1)
    return document


def _label(workload: JsonValue, document: JsonObject) -> str | None:
    dataset = as_object(document.get("dataset") or {}, "dataset")
    if workload == "analytics":
        return optional_str(dataset.get("label"), "dataset.label")
    if workload == "storage":
        return f"r{document.get('rows')}"
    docs = dataset.get("docs")
    if isinstance(docs, int):
        from docbench.core.units import count_label

        return count_label(docs)
    return None


def upgrade_copy(document: JsonObject) -> JsonObject:
    """The current-format reading of a document, leaving the given one as it is."""
    import copy

    return upgrade(copy.deepcopy(document))


def model_body(document: JsonMapping) -> JsonObject:
    """The fields a result model reads from an (upgraded) document: without the keys a reader
    added (``_path``); a format-1 document given neutral values for what that format did not
    record (no settings, not fingerprinted, no end time...)."""
    body: JsonObject = {key: value for key, value in document.items() if not key.startswith("_")}
    if body.get("format", 1) != 1:
        return body
    embedded = "embedded" in as_array(body.get("tags") or [], "tags")
    recorded_then: tuple[tuple[str, JsonValue], ...] = (
        ("variant_role", ""),
        ("variant_description", ""),
        ("variant_settings", {}),
        ("engine_mode", "embedded" if embedded else "managed-server"),
        ("os", ""),
        ("machine", ""),
        ("machine_slug", ""),
        ("environment", {}),
        ("started_at", str(body.get("date") or "")),
        ("finished_at", None),
        ("dataset_fingerprint", None),
    )
    for key, value in recorded_then:
        body.setdefault(key, value)
    return body | {"format": 2}
