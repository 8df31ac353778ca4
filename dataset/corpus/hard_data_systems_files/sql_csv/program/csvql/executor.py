"""The executor: runs a plan, producing rows (tuples)."""

from . import plan
from .functions import new_aggregate
from .values import sort_key


def execute(node):
    """Iterate the rows of the plan node ``node``."""
    if isinstance(node, plan.Scan):
        return iter(node.table.rows)
    if isinstance(node, plan.Filter):
        return (row for row in execute(node.child) if node.predicate(row))
    if isinstance(node, plan.HashJoin):
        return _hash_join(node)
    if isinstance(node, plan.NestedLoopJoin):
        return _nested_loop_join(node)
    if isinstance(node, plan.Aggregate):
        return _aggregate(node)
    if isinstance(node, plan.Sort):
        return _sort(node)
    if isinstance(node, plan.Project):
        return (tuple(output(row) for output in node.outputs) for row in execute(node.child))
    if isinstance(node, plan.Distinct):
        return _distinct(node)
    if isinstance(node, plan.Limit):
        return _limit(node)
    raise TypeError(f"unknown plan node {type(node).__name__}")


def _width(node):
    return len(node.scope.columns)


def _hash_join(node):
    table = {}
    for row in execute(node.right):
        key = tuple(function(row) for function in node.right_keys)
        if None in key:
            continue  # NULL equals nothing, not even NULL
        table.setdefault(_hashable(key), []).append(row)
    padding = (None,) * _width(node.right)
    for left_row in execute(node.left):
        key = tuple(function(left_row) for function in node.left_keys)
        matches = () if None in key else table.get(_hashable(key), ())
        matched = False
        for right_row in matches:
            row = left_row + right_row
            if node.residual is None or node.residual(row):
                matched = True
                yield row
        if not matched and node.kind == "LEFT":
            yield left_row + padding


def _hashable(key):
    """Join keys compare as SQL values: 1 and 1.0 are equal, text never equals a number."""
    return tuple((type(value) is str, value) for value in key)


def _nested_loop_join(node):
    right_rows = list(execute(node.right))
    padding = (None,) * _width(node.right)
    for left_row in execute(node.left):
        matched = False
        for right_row in right_rows:
            row = left_row + right_row
            if node.condition(row):
                matched = True
                yield row
        if not matched and node.kind == "LEFT":
            yield left_row + padding


def _aggregate(node):
    groups = {}
    order = []
    for row in execute(node.child):
        key = tuple(function(row) for function in node.group_keys)
        hashed = _hashable(key)
        state = groups.get(hashed)
        if state is None:
            state = (key, [new_aggregate(call) for call, _ in node.aggregates])
            groups[hashed] = state
            order.append(hashed)
        for (call, argument), running in zip(node.aggregates, state[1]):
            running.add(None if argument is None else argument(row))
    if not groups and not node.group_keys:
        # an aggregate over no rows at all still gives one row (COUNT(*) = 0, SUM = NULL)
        yield tuple(new_aggregate(call).result() for call, _ in node.aggregates)
        return
    for hashed in order:
        key, running = groups[hashed]
        yield key + tuple(aggregate.result() for aggregate in running)


def _sort(node):
    rows = list(execute(node.child))
    for function, descending in reversed(node.keys):
        rows.sort(key=lambda row: sort_key(function(row)), reverse=descending)
    return iter(rows)


def _distinct(node):
    seen = set()
    for row in execute(node.child):
        hashed = _hashable(row)
        if hashed not in seen:
            seen.add(hashed)
            yield row


def _limit(node):
    produced = 0
    for index, row in enumerate(execute(node.child)):
        if index < node.offset:
            continue
        if node.count is not None and produced >= node.count:
            return
        produced += 1
        yield row
