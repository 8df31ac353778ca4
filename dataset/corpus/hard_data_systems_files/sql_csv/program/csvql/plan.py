"""The nodes of a query plan. Each node produces rows (tuples) described by its ``scope``."""

from dataclasses import dataclass, field


@dataclass
class Scan:
    table: object
    """The catalog.Table."""
    scope: object


@dataclass
class HashJoin:
    left: object
    right: object
    kind: str
    """INNER or LEFT."""
    left_keys: list
    """Compiled key functions over left rows."""
    right_keys: list
    """Compiled key functions over right rows (same length as left_keys)."""
    scope: object
    residual: object = None
    """The rest of the ON condition (compiled, over the concatenated row), or None: a pair of rows joins only
    when it holds too. For a LEFT join it is part of the matching, never a filter after it."""


@dataclass
class NestedLoopJoin:
    left: object
    right: object
    kind: str
    condition: object
    """A compiled predicate over the concatenated row."""
    scope: object


@dataclass
class Filter:
    child: object
    predicate: object
    scope: object


@dataclass
class Aggregate:
    child: object
    group_keys: list
    """Compiled functions over child rows."""
    aggregates: list
    """[(ast.Call, compiled argument function or None for COUNT(*))]."""
    scope: object


@dataclass
class Sort:
    child: object
    keys: list
    """[(compiled function, descending)]."""
    scope: object


@dataclass
class Project:
    child: object
    outputs: list
    """Compiled functions, one per output column."""
    names: list
    scope: object


@dataclass
class Distinct:
    child: object
    scope: object


@dataclass
class Limit:
    child: object
    count: int | None
    offset: int
    scope: object


@dataclass
class QueryPlan:
    root: object
    column_names: list = field(default_factory=list)


def describe(node, depth=0):
    """An indented text outline of a plan (for --explain)."""
    pad = "  " * depth
    name = type(node).__name__
    if isinstance(node, Scan):
        lines = [f"{pad}Scan {node.table.name} ({len(node.table.rows)} rows)"]
    elif isinstance(node, (HashJoin, NestedLoopJoin)):
        lines = [f"{pad}{name} {node.kind}"]
        lines += describe(node.left, depth + 1)
        lines += describe(node.right, depth + 1)
        return lines
    else:
        extra = ""
        if isinstance(node, Aggregate):
            extra = f" {len(node.group_keys)} keys, {len(node.aggregates)} aggregates"
        elif isinstance(node, Limit):
            extra = f" {node.count} offset {node.offset}"
        lines = [f"{pad}{name}{extra}"]
    child = getattr(node, "child", None)
    if child is not None:
        lines += describe(child, depth + 1)
    return lines
