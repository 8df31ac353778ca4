"""Expression compilation: an AST expression and a Scope -> a Python function of one row.

Rows are tuples. A Scope says which (table binding, column name) sits at each position of the rows it describes;
``slots`` maps whole expressions (GROUP BY expressions, aggregate calls) to positions, for the rows that come
out of an aggregation.
"""

from dataclasses import dataclass, field

from . import ast
from .errors import CatalogError, PlanError
from .functions import call_scalar, is_aggregate
from .values import arithmetic, compare, like, logical_and, logical_not, logical_or, negate


@dataclass
class Scope:
    columns: list
    """[(binding, column name)] per row position."""
    slots: dict = field(default_factory=dict)
    """{expression node: row position} for computed values (after an aggregation)."""
    grouped: bool = False
    """True for the rows of an aggregation: a bare column is only allowed through ``slots``."""

    def resolve(self, column):
        matches = [i for i, (binding, name) in enumerate(self.columns)
                   if name.lower() == column.name.lower()
                   and (column.table is None or binding.lower() == column.table.lower())]
        shown = f"{column.table}.{column.name}" if column.table else column.name
        if not matches:
            raise CatalogError(f"no column {shown}")
        if len(matches) > 1:
            raise PlanError(f"column {shown} is ambiguous")
        return matches[0]

    def bindings(self):
        return {binding.lower() for binding, _ in self.columns}

    def concat(self, other):
        return Scope(self.columns + other.columns)


def compile_expr(node, scope):
    """A function row -> value computing ``node`` over rows described by ``scope``."""
    if node in scope.slots:
        index = scope.slots[node]
        return lambda row: row[index]
    if isinstance(node, ast.Literal):
        value = node.value
        return lambda row: value
    if isinstance(node, ast.Column):
        if scope.grouped:
            raise PlanError(f"column {ast.render(node)} must appear in GROUP BY or inside an aggregate")
        index = scope.resolve(node)
        return lambda row: row[index]
    if isinstance(node, ast.Unary):
        operand = compile_expr(node.operand, scope)
        if node.op == "NOT":
            return lambda row: logical_not(operand(row))
        return lambda row: negate(operand(row))
    if isinstance(node, ast.Binary):
        left = compile_expr(node.left, scope)
        right = compile_expr(node.right, scope)
        op = node.op
        if op == "AND":
            return lambda row: logical_and(left(row), right(row))
        if op == "OR":
            return lambda row: logical_or(left(row), right(row))
        if op == "LIKE":
            return lambda row: like(left(row), right(row))
        if op in ("=", "<>", "<", "<=", ">", ">="):
            return lambda row: compare(op, left(row), right(row))
        return lambda row: arithmetic(op, left(row), right(row))
    if isinstance(node, ast.IsNull):
        operand = compile_expr(node.operand, scope)
        if node.negated:
            return lambda row: operand(row) is not None
        return lambda row: operand(row) is None
    if isinstance(node, ast.InList):
        operand = compile_expr(node.operand, scope)
        items = [compile_expr(item, scope) for item in node.items]
        negated = node.negated

        def in_list(row):
            value = operand(row)
            result = False
            for item in items:
                result = logical_or(result, compare("=", value, item(row)))
                if result is True:
                    break
            return logical_not(result) if negated else result
        return in_list
    if isinstance(node, ast.Between):
        operand = compile_expr(node.operand, scope)
        low = compile_expr(node.low, scope)
        high = compile_expr(node.high, scope)
        negated = node.negated

        def between(row):
            value = operand(row)
            result = logical_and(compare(">=", value, low(row)), compare("<=", value, high(row)))
            return logical_not(result) if negated else result
        return between
    if isinstance(node, ast.Call):
        if is_aggregate(node.name):
            raise PlanError(f"aggregate {ast.render(node)} is not allowed here")
        args = [compile_expr(arg, scope) for arg in node.args]
        name = node.name
        return lambda row: call_scalar(name, [arg(row) for arg in args])
    if isinstance(node, ast.Star):
        raise PlanError("* is only allowed as a select item or in COUNT(*)")
    raise PlanError(f"cannot evaluate {node!r}")


def collect_aggregates(nodes):
    """The aggregate calls inside ``nodes``, each once, in order of appearance (no nesting allowed)."""
    found = []
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and is_aggregate(sub.name):
                for arg in sub.args:
                    if any(isinstance(inner, ast.Call) and is_aggregate(inner.name) for inner in ast.walk(arg)):
                        raise PlanError(f"aggregate inside aggregate: {ast.render(sub)}")
                if sub not in found:
                    found.append(sub)
    return found


def referenced_bindings(node):
    """The table bindings (lower case) that the columns of ``node`` name explicitly; None if one is unqualified."""
    bindings = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Column):
            if sub.table is None:
                return None
            bindings.add(sub.table.lower())
    return bindings
