"""The portable query spec: one file (YAML or JSON) holds a named set of queries over any JSON
documents, written once and compiled for every engine (docs/queries.md has the format and the
semantics every engine is judged by).

Parsing keeps the line of every mapping, so that an error names the file and the line.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from docbench.core.jsontypes import JsonObject

# A filter's comparison operators and the others that take one path.
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
PATH_OPERATORS = (*COMPARISONS, "in", "exists", "prefix", "contains", "array_contains")
COMBINATORS = ("and", "or", "not")
# span: the largest number less the smallest (JSONBench's Q5: a user's activity span).
AGGREGATES = ("count", "count_distinct", "sum", "min", "max", "avg", "span")
# A bucket's width in seconds; hour_of_day is the hour (0-23, UTC) whatever the day.
BUCKET_UNITS = {"minute": 60, "hour": 3600, "day": 86400, "hour_of_day": 3600}
BUCKET_CYCLES = {"hour_of_day": 24}
# How a time bucket reads its path: seconds, milliseconds or microseconds since the epoch, or
# ISO 8601 text (a zone offset or Z; without one, UTC).
BUCKET_FORMATS = ("epoch_s", "epoch_ms", "epoch_us", "iso8601")
EPOCH_DIVISORS = {"epoch_s": 1, "epoch_ms": 1_000, "epoch_us": 1_000_000}

Scalar = str | int | float | bool | None


class QuerySpecError(ValueError):
    """A query file that does not follow the spec: the message names the file and the line."""


@dataclass(frozen=True)
class Path_:
    """A path of object keys from the document's top, or from the unnested element when its
    first key is the unnest's alias (``element`` is then True and ``keys`` the rest)."""

    keys: tuple[str, ...]
    element: bool = False

    def text(self) -> str:
        return ".".join(self.keys)


@dataclass(frozen=True)
class Condition:
    """One operator on one path: ``value`` is the literal (a list for ``in``; a bool for
    ``exists``)."""

    path: Path_
    op: str
    value: Any


@dataclass(frozen=True)
class Combined:
    op: str  # and, or, not
    parts: tuple[Filter, ...]


Filter = Condition | Combined


@dataclass(frozen=True)
class GroupKey:
    """A group-by column: the value at a path, or its time bucket (``unit`` set): the start of
    the bucket in seconds since the epoch, UTC."""

    name: str
    path: Path_
    unit: str | None = None
    time_format: str | None = None


@dataclass(frozen=True)
class Aggregate:
    name: str
    fn: str
    path: Path_ | None = None


@dataclass(frozen=True)
class Unnest:
    path: Path_
    alias: str


@dataclass(frozen=True)
class OrderKey:
    column: str
    desc: bool = False


@dataclass(frozen=True)
class Query:
    name: str
    where: Filter | None = None
    unnest: Unnest | None = None
    group_by: tuple[GroupKey, ...] = ()
    aggregates: tuple[Aggregate, ...] = ()
    select: tuple[tuple[str, Path_], ...] = ()
    order_by: tuple[OrderKey, ...] = ()
    limit: int | None = None
    description: str = ""
    line: int = 0

    @property
    def columns(self) -> list[str]:
        if self.select:
            return [name for name, _ in self.select]
        return [k.name for k in self.group_by] + [a.name for a in self.aggregates]

    @property
    def global_aggregate(self) -> bool:
        """Aggregates over every matching row at once: one row, even when nothing matches."""
        return bool(self.aggregates) and not self.group_by

    def column_kind(self, column: str) -> str:
        """'key' (a JSON value), 'bucket' (seconds), or the aggregate's function."""
        for key in self.group_by:
            if key.name == column:
                return "bucket" if key.unit else "key"
        for aggregate in self.aggregates:
            if aggregate.name == column:
                return aggregate.fn
        return "key"


@dataclass(frozen=True)
class QuerySet:
    name: str
    queries: tuple[Query, ...]
    source: str = ""
    sha256: str = ""
    description: str = ""
    extra: JsonObject = field(default_factory=dict, compare=False)

    def named(self, name: str) -> Query:
        for query in self.queries:
            if query.name == name:
                return query
        raise KeyError(name)


# ----- reading ------------------------------------------------------------------------------


class _Node:
    """A parsed value with the line it starts on (1-based)."""

    __slots__ = ("value", "line")

    def __init__(self, value: Any, line: int) -> None:
        self.value = value
        self.line = line


_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def _plain_scalar(node: yaml.ScalarNode) -> Scalar:
    # YAML 1.1 reads yes/no/on/off as booleans: a country code "NO" must stay a string.
    if node.tag.endswith(":bool") and node.value.lower() not in ("true", "false"):
        return str(node.value)
    value = _CONSTRUCTOR.construct_object(node)
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(node.value)  # dates and the like stay text: JSON has no such type


def _tree(node: yaml.Node) -> _Node:
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        items: dict[str, _Node] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str):
                raise QuerySpecError(f"line {key_node.start_mark.line + 1}: a key must be text")
            if key in items:
                raise QuerySpecError(f"line {key_node.start_mark.line + 1}: '{key}' given twice")
            items[key] = _tree(value_node)
        return _Node(items, line)
    if isinstance(node, yaml.SequenceNode):
        return _Node([_tree(item) for item in node.value], line)
    assert isinstance(node, yaml.ScalarNode)
    return _Node(_plain_scalar(node), line)


def _plain(node: _Node) -> Any:
    if isinstance(node.value, dict):
        return {k: _plain(v) for k, v in node.value.items()}
    if isinstance(node.value, list):
        return [_plain(v) for v in node.value]
    return node.value


def load_query_set(path: Path) -> QuerySet:
    """Read and check a query file; QuerySpecError names the file and line of what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise QuerySpecError(f"{path}: cannot read the query file: {error}") from None
    try:
        return parse_query_set(text, source=str(path))
    except QuerySpecError as error:
        raise QuerySpecError(f"{path}:{error}") from None


SHIPPED = Path(__file__).parent / "sets"


# The shipped set of JSONBench's Q1-Q5 in the spec: on Bluesky data it runs beside the
# hand-written queries (same load), so each compiled query has its twin.
JSONBENCH_SET = "jsonbench"


def shipped_query_set(name: str) -> QuerySet | None:
    """A query set docbench ships (``queries/sets/<name>.yaml``), or None."""
    path = SHIPPED / f"{name}.yaml"
    return load_query_set(path) if "/" not in name and path.is_file() else None


def parse_query_set(text: str, source: str = "<text>") -> QuerySet:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "line ?"
        raise QuerySpecError(f"{where}: not YAML or JSON: {getattr(error, 'problem', error)}") from None
    if root is None:
        raise QuerySpecError("line 1: the file is empty")
    tree = _tree(root)
    top = _mapping(tree, "the query file", ("name", "queries", "description"), required=("queries",))
    queries_node = top["queries"]
    if not isinstance(queries_node.value, list) or not queries_node.value:
        raise QuerySpecError(f"line {queries_node.line}: 'queries' must be a list of at least one query")
    queries = [_query(node, index) for index, node in enumerate(queries_node.value, start=1)]
    seen: dict[str, int] = {}
    for query in queries:
        if query.name in seen:
            raise QuerySpecError(
                f"line {query.line}: query name '{query.name}' already used on line {seen[query.name]}"
            )
        seen[query.name] = query.line
    name = _text(top["name"], "name") if "name" in top else Path(source).stem
    return QuerySet(
        name=name,
        queries=tuple(queries),
        source=source,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        description=_text(top["description"], "description") if "description" in top else "",
    )


def _mapping(
    node: _Node, what: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()
) -> dict[str, _Node]:
    if not isinstance(node.value, dict):
        raise QuerySpecError(f"line {node.line}: {what} must be a mapping, not {_kind(node.value)}")
    for key in node.value:
        if key not in allowed:
            raise QuerySpecError(
                f"line {node.value[key].line}: {what}: unknown key '{key}' (known: {', '.join(allowed)})"
            )
    for key in required:
        if key not in node.value:
            raise QuerySpecError(f"line {node.line}: {what}: '{key}' is missing")
    return dict(node.value)


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"the {type(value).__name__} {value!r}"


def _text(node: _Node, what: str) -> str:
    if not isinstance(node.value, str) or not node.value:
        raise QuerySpecError(f"line {node.line}: {what} must be non-empty text, not {_kind(node.value)}")
    return node.value


QUERY_KEYS = (
    "name",
    "description",
    "where",
    "unnest",
    "group_by",
    "aggregates",
    "select",
    "order_by",
    "limit",
)


def _query(node: _Node, index: int) -> Query:
    fields = _mapping(node, f"query {index}", QUERY_KEYS, required=("name",))
    name = _text(fields["name"], "a query's name")
    try:
        return _query_fields(fields, name, node.line)
    except QuerySpecError as error:
        where, _, why = str(error).partition(": ")
        raise QuerySpecError(f"{where}: query '{name}': {why}") from None


def _query_fields(fields: dict[str, _Node], name: str, line: int) -> Query:
    unnest = _unnest(fields["unnest"]) if "unnest" in fields else None
    alias = unnest.alias if unnest else None
    where = _filter(fields["where"], alias) if "where" in fields else None
    group_by = tuple(_group_key(n, alias) for n in _list(fields.get("group_by"), "group_by"))
    aggregates = tuple(_aggregate(n, alias) for n in _list(fields.get("aggregates"), "aggregates"))
    select = tuple(_selected(n, alias) for n in _list(fields.get("select"), "select"))
    if select and (group_by or aggregates):
        raise QuerySpecError(
            f"line {fields['select'].line}: 'select' is for point lookups: no group_by or aggregates"
        )
    if not select and not aggregates:
        raise QuerySpecError(f"line {line}: a query needs 'aggregates' or 'select'")
    columns = [n for n, _ in select] or [k.name for k in group_by] + [a.name for a in aggregates]
    doubled = sorted({c for c in columns if columns.count(c) > 1})
    if doubled:
        raise QuerySpecError(
            f"line {line}: column name(s) {', '.join(doubled)} used twice (name them with 'as')"
        )
    order_by = tuple(_order_key(n, columns) for n in _list(fields.get("order_by"), "order_by"))
    limit = None
    if "limit" in fields:
        limit = fields["limit"].value
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise QuerySpecError(f"line {fields['limit'].line}: limit must be a positive integer")
    description = _text(fields["description"], "description") if "description" in fields else ""
    return Query(name, where, unnest, group_by, aggregates, select, order_by, limit, description, line)


def _list(node: _Node | None, what: str) -> list[_Node]:
    if node is None:
        return []
    if not isinstance(node.value, list):
        return [node]  # one item given without a list
    return node.value


def parse_path(node: _Node, alias: str | None) -> Path_:
    """``a.b.c``, or a list of keys (for keys that hold a dot); a path that starts with the
    unnest's alias is read from the element."""
    value = node.value
    if isinstance(value, str):
        keys = value.split(".") if value else []
    elif isinstance(value, list) and all(isinstance(k.value, str) for k in value):
        keys = [k.value for k in value]
    else:
        raise QuerySpecError(
            f"line {node.line}: a path is 'a.b.c' or a list of keys, not {_kind(_plain(node))}"
        )
    if not keys or any(k == "" for k in keys):
        raise QuerySpecError(f"line {node.line}: the path {value!r} has an empty key")
    if alias is not None and keys[0] == alias:
        return Path_(tuple(keys[1:]), element=True)
    return Path_(tuple(keys))


def _literal(node: _Node, op: str) -> Scalar:
    if isinstance(node.value, dict | list):
        raise QuerySpecError(
            f"line {node.line}: '{op}' takes a string, number, boolean or null, not {_kind(_plain(node))}"
        )
    return node.value


def _filter(node: _Node, alias: str | None) -> Filter:
    if not isinstance(node.value, dict):
        raise QuerySpecError(f"line {node.line}: a filter must be a mapping, not {_kind(_plain(node))}")
    keys = set(node.value)
    combinator = keys & set(COMBINATORS)
    if combinator:
        if len(keys) != 1:
            raise QuerySpecError(f"line {node.line}: '{combinator.pop()}' must be alone in its mapping")
        op = combinator.pop()
        inner = node.value[op]
        if op == "not":
            return Combined("not", (_filter(inner, alias),))
        if not isinstance(inner.value, list) or not inner.value:
            raise QuerySpecError(f"line {inner.line}: '{op}' takes a list of filters")
        return Combined(op, tuple(_filter(n, alias) for n in inner.value))
    if "path" not in keys:
        raise QuerySpecError(
            f"line {node.line}: a filter is 'path' with one operator ({', '.join(PATH_OPERATORS)}) "
            f"or one of {', '.join(COMBINATORS)}; found {', '.join(sorted(keys))}"
        )
    ops = keys - {"path"}
    unknown = ops - set(PATH_OPERATORS)
    if unknown:
        bad = sorted(unknown)[0]
        raise QuerySpecError(
            f"line {node.value[bad].line}: unknown operator '{bad}' (known: {', '.join(PATH_OPERATORS)})"
        )
    if len(ops) != 1:
        raise QuerySpecError(f"line {node.line}: a filter has exactly one operator, found {len(ops)}")
    op = ops.pop()
    path = parse_path(node.value["path"], alias)
    operand = node.value[op]
    value: Any
    if op == "in":
        if not isinstance(operand.value, list) or not operand.value:
            raise QuerySpecError(f"line {operand.line}: 'in' takes a non-empty list of values")
        value = tuple(_literal(n, op) for n in operand.value)
    elif op == "exists":
        if not isinstance(operand.value, bool):
            raise QuerySpecError(f"line {operand.line}: 'exists' takes true or false")
        value = operand.value
    else:
        value = _literal(operand, op)
        if op in ("lt", "le", "gt", "ge") and (isinstance(value, bool) or value is None):
            raise QuerySpecError(f"line {operand.line}: '{op}' compares numbers or strings, not {value!r}")
        if op in ("prefix", "contains") and not isinstance(value, str):
            raise QuerySpecError(f"line {operand.line}: '{op}' takes a string")
    return Condition(path, op, value)


def _unnest(node: _Node) -> Unnest:
    fields = _mapping(node, "unnest", ("path", "as"), required=("path", "as"))
    alias = _text(fields["as"], "unnest's 'as'")
    if "." in alias:
        raise QuerySpecError(f"line {fields['as'].line}: unnest's alias cannot hold a dot")
    return Unnest(parse_path(fields["path"], None), alias)


def _group_key(node: _Node, alias: str | None) -> GroupKey:
    if isinstance(node.value, str | list):
        path = parse_path(node, alias)
        prefix = f"{alias}." if path.element and alias else ""
        return GroupKey(prefix + path.text() if path.keys else alias or "", path)
    fields = _mapping(node, "a group_by item", ("path", "as", "bucket", "unit", "format"))
    if "bucket" in fields:
        path = parse_path(fields["bucket"], alias)
        unit = _choice(fields.get("unit"), BUCKET_UNITS, "unit", node.line)
        time_format = _choice(fields.get("format"), BUCKET_FORMATS, "format", node.line)
        name = _text(fields["as"], "'as'") if "as" in fields else f"{path.text()}_{unit}"
        return GroupKey(name, path, unit, time_format)
    if "path" not in fields:
        raise QuerySpecError(f"line {node.line}: a group_by item needs 'path' or 'bucket'")
    if "unit" in fields or "format" in fields:
        raise QuerySpecError(f"line {node.line}: 'unit' and 'format' belong to a 'bucket'")
    path = parse_path(fields["path"], alias)
    return GroupKey(_text(fields["as"], "'as'") if "as" in fields else path.text(), path)


def _choice(node: _Node | None, known: Any, what: str, line: int) -> str:
    if node is None:
        raise QuerySpecError(f"line {line}: a bucket needs '{what}' ({', '.join(known)})")
    if node.value not in known:
        raise QuerySpecError(f"line {node.line}: unknown {what} {node.value!r} (known: {', '.join(known)})")
    return str(node.value)


def _aggregate(node: _Node, alias: str | None) -> Aggregate:
    fields = _mapping(node, "an aggregate", ("fn", "path", "as"), required=("fn",))
    fn = fields["fn"].value
    if fn not in AGGREGATES:
        raise QuerySpecError(
            f"line {fields['fn'].line}: unknown aggregate {fn!r} (known: {', '.join(AGGREGATES)})"
        )
    if fn == "count":
        if "path" in fields:
            raise QuerySpecError(
                f"line {node.line}: 'count' counts rows; for values of a path use count_distinct"
            )
        path = None
    else:
        if "path" not in fields:
            raise QuerySpecError(f"line {node.line}: '{fn}' needs a 'path'")
        path = parse_path(fields["path"], alias)
    default = fn if path is None else f"{fn}_{path.text()}"
    name = _text(fields["as"], "'as'") if "as" in fields else default
    return Aggregate(name, fn, path)


def _selected(node: _Node, alias: str | None) -> tuple[str, Path_]:
    if isinstance(node.value, dict):
        fields = _mapping(node, "a select item", ("path", "as"), required=("path",))
        path = parse_path(fields["path"], alias)
        return (_text(fields["as"], "'as'") if "as" in fields else path.text(), path)
    path = parse_path(node, alias)
    return (path.text(), path)


def _order_key(node: _Node, columns: list[str]) -> OrderKey:
    if isinstance(node.value, str):
        words = node.value.split()
        column, desc = words[0], len(words) > 1 and words[1].lower() == "desc"
        if len(words) > 2 or (len(words) == 2 and words[1].lower() not in ("asc", "desc")):
            raise QuerySpecError(
                f"line {node.line}: order_by item is 'column', 'column asc' or 'column desc'"
            )
    else:
        fields = _mapping(node, "an order_by item", ("column", "desc"), required=("column",))
        column = _text(fields["column"], "'column'")
        desc = bool(fields["desc"].value) if "desc" in fields else False
    if column not in columns:
        raise QuerySpecError(
            f"line {node.line}: order_by names '{column}', not a column (columns: {', '.join(columns)})"
        )
    return OrderKey(column, desc)
