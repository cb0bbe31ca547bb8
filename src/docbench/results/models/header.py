"""What every result file of every workload says about its run: which system, variant and
data, on which machine, when, whether it finished. A workload's model extends ``RunHeader``."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, PrivateAttr

CLUSTER_DESCRIPTION = (
    "A distributed engine's shape and what it went through (null for systems that do not run as "
    "clusters): nodes, shards and replicas of docbench's indexes, every node's version, whether "
    "docbench started it; on a cluster the health changes (seconds yellow/red), requests failed "
    "over to another node, and injected faults (--kill-node)"
)


class Model(BaseModel):
    """A result model: fields it does not name are kept (results are read by later versions of
    docbench, and by tools that add their own fields), as the schemas always allowed."""

    model_config = ConfigDict(extra="allow")


class EngineMode(Enum):
    """imported: measured elsewhere (docbench import-jsonbench)"""

    embedded = "embedded"
    managed_server = "managed-server"
    url = "url"
    imported = "imported"


class Cluster(Model):
    nodes: Annotated[int, Field(ge=1)]
    shards: Annotated[int, Field(ge=1)]
    replicas: Annotated[int, Field(ge=0)]
    managed: bool
    node_versions: dict[str, str] | None = None
    health: dict[str, JsonValue] | None = None
    failovers: list[dict[str, JsonValue]] | None = None
    faults: dict[str, JsonValue] | None = None
    lost: dict[str, JsonValue] | None = None


class RunHeader(Model):
    format: Annotated[
        Literal[2], Field(description="Result format version (older files are upgraded on read)")
    ]
    workload: str
    system: Annotated[str, Field(description="Registry name (e.g. clickhouse)")]
    display_name: Annotated[
        str, Field(description="What people read (e.g. ClickHouse (chDB)); JSONBench's `system`")
    ]
    variant: str
    variant_role: str
    variant_description: str
    variant_settings: dict[str, JsonValue]
    dataset_label: str | None
    version: str | None
    engine_mode: Annotated[
        EngineMode, Field(description="imported: measured elsewhere (docbench import-jsonbench)")
    ]
    managed: bool | None = None
    url: Annotated[str | None, Field(description="The server's URL with its password redacted (***)")] = None
    os: str
    date: Annotated[str, Field(pattern="^\\d{4}-\\d{2}-\\d{2}$")]
    machine: str
    machine_slug: str
    environment: dict[str, JsonValue]
    started_at: str
    finished_at: str | None
    complete: bool
    cluster: Annotated[Cluster | None, Field(description=CLUSTER_DESCRIPTION)] = None
    # Where the result was read from, and the document as read (not part of the result).
    _path: str | None = PrivateAttr(default=None)
    _as_read: dict[str, JsonValue] | None = PrivateAttr(default=None)

    @property
    def path(self) -> str | None:
        """The file the result was read from (None: not read from a file)."""
        return self._path

    @property
    def as_read(self) -> dict[str, JsonValue]:
        """The document as its file holds it, for views that show the file itself (a result
        not read from a file: its fields as a file would hold them)."""
        if self._as_read is None:
            return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return self._as_read

    def read_from(self, path: str | None, document: dict[str, JsonValue]) -> None:
        self._path, self._as_read = path, document
