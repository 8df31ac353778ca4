"""The planner: ast.Select -> plan.QueryPlan.

Order of the steps: scan the FROM table, join the others (a hash join on the equality conditions of ON, a nested
loop otherwise), filter by WHERE, aggregate when the query groups or uses an aggregate, filter the groups by HAVING, sort, project the select
list, remove duplicates (DISTINCT), apply LIMIT/OFFSET.
"""

from . import ast, plan
from .errors import PlanError
from .expressions import Scope, collect_aggregates, compile_expr, referenced_bindings


def _conjuncts(node):
    if isinstance(node, ast.Binary) and node.op == "AND":
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def _conjoin(nodes):
    result = None
    for node in nodes:
        result = node if result is None else ast.Binary("AND", result, node)
    return result


def _predicate(node, scope):
    function = compile_expr(node, scope)
    from .values import truth

    return lambda row: truth(function(row)) is True


class Planner:
    def __init__(self, catalog):
        self.catalog = catalog

    def plan(self, select):
        node = self._scan(select.table)
        seen = {select.table.binding.lower()}
        for join in select.joins:
            if join.table.binding.lower() in seen:
                raise PlanError(f"table name {join.table.binding} is used twice; give one an alias")
            seen.add(join.table.binding.lower())
            node = self._join(node, join)
        if select.where is not None:
            if collect_aggregates([select.where]):
                raise PlanError("aggregates are not allowed in WHERE")
            node = plan.Filter(node, _predicate(select.where, node.scope), node.scope)

        items = self._expand_stars(select.items, node.scope)
        order_exprs = [self._order_expr(item.expr, items) for item in select.order_by]
        having = [select.having] if select.having is not None else []
        aggregates = collect_aggregates([item.expr for item in items] + order_exprs + having)
        if select.group_by or aggregates:
            node = self._aggregate(node, select.group_by, aggregates)
        elif having:
            raise PlanError("HAVING needs GROUP BY or an aggregate")
        if having:
            node = plan.Filter(node, _predicate(select.having, node.scope), node.scope)
        if order_exprs:
            keys = [(compile_expr(expr, node.scope), item.descending)
                    for expr, item in zip(order_exprs, select.order_by)]
            node = plan.Sort(node, keys, node.scope)
        outputs = [compile_expr(item.expr, node.scope) for item in items]
        names = [self._name(item) for item in items]
        node = plan.Project(node, outputs, names, Scope([("", name) for name in names]))
        if select.distinct:
            node = plan.Distinct(node, node.scope)
        if select.limit is not None or select.offset:
            node = plan.Limit(node, select.limit, select.offset, node.scope)
        return plan.QueryPlan(node, names)

    # -- FROM and JOIN ---------------------------------------------------------------------------------------
    def _scan(self, ref):
        table = self.catalog.table(ref.name)
        return plan.Scan(table, Scope([(ref.binding, column) for column in table.columns]))

    def _join(self, left, join):
        right = self._scan(join.table)
        scope = left.scope.concat(right.scope)
        left_bindings = left.scope.bindings()
        right_binding = join.table.binding.lower()
        left_keys, right_keys, residual = [], [], []
        for condition in _conjuncts(join.condition):
            pair = self._equi_pair(condition, left_bindings, right_binding)
            if pair is None:
                residual.append(condition)
            else:
                left_keys.append(compile_expr(pair[0], left.scope))
                right_keys.append(compile_expr(pair[1], right.scope))
        if not left_keys:
            return plan.NestedLoopJoin(left, right, join.kind, _predicate(join.condition, scope), scope)
        condition = _predicate(_conjoin(residual), scope) if residual else None
        return plan.HashJoin(left, right, join.kind, left_keys, right_keys, scope, condition)

    @staticmethod
    def _equi_pair(condition, left_bindings, right_binding):
        """(left expression, right expression) when ``condition`` is an equality between the two sides."""
        if not (isinstance(condition, ast.Binary) and condition.op == "="):
            return None
        a, b = referenced_bindings(condition.left), referenced_bindings(condition.right)
        if not a or not b:
            return None
        if a <= left_bindings and b == {right_binding}:
            return condition.left, condition.right
        if b <= left_bindings and a == {right_binding}:
            return condition.right, condition.left
        return None

    # -- select list, grouping, ordering ---------------------------------------------------------------------
    @staticmethod
    def _expand_stars(items, scope):
        expanded = []
        for item in items:
            if isinstance(item.expr, ast.Star):
                wanted = item.expr.table
                columns = [(binding, name) for binding, name in scope.columns
                           if wanted is None or binding.lower() == wanted.lower()]
                if not columns:
                    raise PlanError(f"no table {wanted} for {wanted}.*")
                expanded += [ast.SelectItem(ast.Column(name, binding)) for binding, name in columns]
            else:
                expanded.append(item)
        return expanded

    @staticmethod
    def _order_expr(expr, items):
        """ORDER BY may name a select item by position (1-based) or by alias."""
        if isinstance(expr, ast.Literal) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
            if not 1 <= expr.value <= len(items):
                raise PlanError(f"ORDER BY position {expr.value} is not in the select list")
            return items[expr.value - 1].expr
        if isinstance(expr, ast.Column) and expr.table is None:
            for item in items:
                if item.alias is not None and item.alias.lower() == expr.name.lower():
                    return item.expr
        return expr

    def _aggregate(self, node, group_by, aggregates):
        group_keys = [compile_expr(expr, node.scope) for expr in group_by]
        compiled = []
        for call in aggregates:
            argument = None if call.star else compile_expr(call.args[0], node.scope)
            compiled.append((call, argument))
        slots = {expr: i for i, expr in enumerate(group_by)}
        for i, call in enumerate(aggregates):
            slots[call] = len(group_by) + i
        # a grouped column may also be written qualified or not: map both spellings
        for expr, i in list(slots.items()):
            if isinstance(expr, ast.Column):
                position = node.scope.resolve(expr)
                binding, name = node.scope.columns[position]
                slots.setdefault(ast.Column(name), i)
                slots.setdefault(ast.Column(name, binding), i)
        scope = Scope([("", f"#{i}") for i in range(len(slots))], slots, grouped=True)
        return plan.Aggregate(node, group_keys, compiled, scope)

    @staticmethod
    def _name(item):
        if item.alias:
            return item.alias
        if isinstance(item.expr, ast.Column):
            return item.expr.name
        return ast.render(item.expr)


def plan_query(select, catalog):
    return Planner(catalog).plan(select)
