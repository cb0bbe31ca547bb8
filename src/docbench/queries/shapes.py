"""The shapes workload's four queries (and live ingest's marker lookup) as portable queries:
one definition, compiled for every engine like any query set (docs/queries.md).

- point: the value of a path in the document whose ``id`` is given;
- rare_aggregate: how many documents have a path, and the sum of its values;
- varying_filter: how many documents hold a number above a threshold at a path;
- presence: how many documents have a path.
"""

from __future__ import annotations

from typing import Any

from docbench.queries.spec import Aggregate, Condition, Path_, Query, QuerySet

SHAPE_QUERY_NAMES = ("point", "rare_aggregate", "varying_filter", "presence")


def point_lookup(keys: tuple[str, ...], point_id: Any, name: str = "point") -> Query:
    """The value at ``keys`` of the document whose top-level ``id`` is ``point_id``."""
    return Query(
        name=name,
        where=Condition(Path_(("id",)), "eq", point_id),
        select=(("value", Path_(keys)),),
    )


def shape_queries(paths: dict[str, tuple[str, ...] | None], point_id: Any, threshold: int) -> QuerySet:
    """The shape queries whose path the shape has (``paths[query]`` not None)."""
    queries: list[Query] = []
    for name in SHAPE_QUERY_NAMES:
        keys = paths.get(name)
        if keys is None or (name == "point" and point_id is None):
            continue
        path = Path_(keys)
        exists = Condition(path, "exists", True)
        count = Aggregate("documents", "count")
        if name == "point":
            queries.append(point_lookup(keys, point_id))
        elif name == "rare_aggregate":
            queries.append(Query(name, where=exists, aggregates=(count, Aggregate("total", "sum", path))))
        elif name == "varying_filter":
            queries.append(Query(name, where=Condition(path, "gt", threshold), aggregates=(count,)))
        else:
            queries.append(Query(name, where=exists, aggregates=(count,)))
    return QuerySet(name="shapes", queries=tuple(queries))
