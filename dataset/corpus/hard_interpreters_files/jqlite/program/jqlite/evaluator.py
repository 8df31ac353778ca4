"""The evaluator: runs a compiled filter over one input and yields its outputs, lazily.

Every filter maps one input to a stream of zero or more outputs. Binary operators combine every output of
the right side with every output of the left side (right side outer). ``a // b`` gives the outputs of ``a``
that are neither ``false`` nor ``null``; when there are none (or ``a`` fails), the outputs of ``b``.
Variables live in ``env``, a dict from name to value that a binding extends for its body only.
"""

from jqlite import nodes
from jqlite.builtins import BUILTINS
from jqlite.errors import FilterRuntimeError
from jqlite.values import compare, describe, equal, is_true, type_of


class Evaluator:
    def __init__(self, variables=None):
        self.globals = dict(variables or {})

    def outputs(self, program, value):
        """Every output of ``program`` for the input ``value``."""
        return self.evaluate(program, value, self.globals)

    def evaluate(self, node, value, env):
        method = getattr(self, "eval_" + type(node).__name__)
        return method(node, value, env)

    # -- paths -------------------------------------------------------------------------------------
    def eval_Identity(self, node, value, env):
        yield value

    def eval_RecurseAll(self, node, value, env):
        stack = [value]
        while stack:
            current = stack.pop()
            yield current
            if isinstance(current, list):
                stack.extend(reversed(current))
            elif isinstance(current, dict):
                stack.extend(reversed(list(current.values())))

    def eval_Literal(self, node, value, env):
        yield node.value

    def eval_Variable(self, node, value, env):
        if node.name not in env:
            raise FilterRuntimeError(f"${node.name} is not defined")
        yield env[node.name]

    def eval_Field(self, node, value, env):
        for target in self.evaluate(node.target, value, env):
            for name in self.evaluate(node.name, value, env):
                try:
                    yield self.field(target, name)
                except FilterRuntimeError:
                    if not node.optional:
                        raise

    def field(self, target, name):
        if target is None:
            return None
        if isinstance(target, dict) and isinstance(name, str):
            return target.get(name)
        raise FilterRuntimeError(f"cannot index {describe(target)} with {describe(name)}")

    def eval_Index(self, node, value, env):
        for target in self.evaluate(node.target, value, env):
            for index in self.evaluate(node.index, value, env):
                try:
                    yield self.index(target, index)
                except FilterRuntimeError:
                    if not node.optional:
                        raise

    def index(self, target, index):
        if isinstance(index, str):
            return self.field(target, index)
        if target is None:
            return None
        if isinstance(target, list) and type_of(index) == "number":
            position = int(index // 1)
            if position < 0:
                position += len(target)
            return target[position] if 0 <= position < len(target) else None
        raise FilterRuntimeError(f"cannot index {describe(target)} with {describe(index)}")

    def eval_Slice(self, node, value, env):
        for target in self.evaluate(node.target, value, env):
            starts = [None] if node.start is None else list(self.evaluate(node.start, value, env))
            stops = [None] if node.stop is None else list(self.evaluate(node.stop, value, env))
            for stop in stops:
                for start in starts:
                    try:
                        yield self.slice(target, start, stop)
                    except FilterRuntimeError:
                        if not node.optional:
                            raise

    def slice(self, target, start, stop):
        if target is None:
            return None
        if not isinstance(target, (list, str)):
            raise FilterRuntimeError(f"cannot slice {describe(target)}")
        for bound in (start, stop):
            if bound is not None and type_of(bound) != "number":
                raise FilterRuntimeError(f"slice bounds must be numbers, not {describe(bound)}")
        length = len(target)
        begin = 0 if start is None else clamp(int(start // 1), length)
        end = length if stop is None else clamp(int(-(-stop // 1)), length)
        return target[begin:max(begin, end)]

    def eval_Iterate(self, node, value, env):
        for target in self.evaluate(node.target, value, env):
            if isinstance(target, list):
                yield from target
            elif isinstance(target, dict):
                yield from target.values()
            elif not node.optional:
                raise FilterRuntimeError(f"cannot iterate over {describe(target)}")

    # -- combinators -------------------------------------------------------------------------------
    def eval_Pipe(self, node, value, env):
        for middle in self.evaluate(node.left, value, env):
            yield from self.evaluate(node.right, middle, env)

    def eval_Comma(self, node, value, env):
        yield from self.evaluate(node.left, value, env)
        yield from self.evaluate(node.right, value, env)

    def eval_Binding(self, node, value, env):
        for bound in self.evaluate(node.source, value, env):
            yield from self.evaluate(node.body, value, {**env, node.name: bound})

    def eval_Alternative(self, node, value, env):
        found = False
        try:
            for output in self.evaluate(node.left, value, env):
                if is_true(output):
                    found = True
                    yield output
        except FilterRuntimeError:
            pass
        if not found:
            yield from self.evaluate(node.right, value, env)

    def eval_Logical(self, node, value, env):
        for left in self.evaluate(node.left, value, env):
            if node.operator == "and" and not is_true(left):
                yield False
                continue
            if node.operator == "or" and is_true(left):
                yield True
                continue
            for right in self.evaluate(node.right, value, env):
                yield is_true(right)

    def eval_Negate(self, node, value, env):
        for operand in self.evaluate(node.operand, value, env):
            if type_of(operand) != "number":
                raise FilterRuntimeError(f"{describe(operand)} cannot be negated")
            yield -operand

    def eval_Binary(self, node, value, env):
        for right in self.evaluate(node.right, value, env):
            for left in self.evaluate(node.left, value, env):
                yield self.binary(node.operator, left, right)

    def binary(self, operator, left, right):
        if operator == "==":
            return equal(left, right)
        if operator == "!=":
            return not equal(left, right)
        if operator in ("<", "<=", ">", ">="):
            order = compare(left, right)
            return {"<": order < 0, "<=": order <= 0, ">": order > 0, ">=": order >= 0}[operator]
        return self.arithmetic(operator, left, right)

    def arithmetic(self, operator, left, right):
        left_type, right_type = type_of(left), type_of(right)
        if operator == "+":
            if left is None:
                return right
            if right is None:
                return left
            if left_type == right_type == "number":
                return normalize(left + right)
            if left_type == right_type and left_type in ("string", "array"):
                return left + right
            if left_type == right_type == "object":
                return {**left, **right}
        elif operator == "-":
            if left_type == right_type == "number":
                return normalize(left - right)
            if left_type == right_type == "array":
                return [item for item in left if not any(equal(item, other) for other in right)]
        elif operator == "*":
            if left_type == right_type == "number":
                return normalize(left * right)
            if left_type == "string" and right_type == "number":
                return left * int(right) if right > 0 else None
        elif operator == "/":
            if left_type == right_type == "number":
                if right == 0:
                    raise FilterRuntimeError(f"{describe(left)} and {describe(right)} cannot be divided because the divisor is zero")
                return normalize(left / right)
            if left_type == right_type == "string":
                return left.split(right) if right else list(left)
        elif operator == "%":
            if left_type == right_type == "number":
                if int(right) == 0:
                    raise FilterRuntimeError(f"{describe(left)} and {describe(right)} cannot be divided because the divisor is zero")
                quotient = abs(int(left)) % abs(int(right))
                return -quotient if int(left) < 0 else quotient
        raise FilterRuntimeError(f"{describe(left)} and {describe(right)} cannot be combined with {operator}")

    # -- construction ------------------------------------------------------------------------------
    def eval_ArrayConstruction(self, node, value, env):
        yield [] if node.body is None else list(self.evaluate(node.body, value, env))

    def eval_ObjectConstruction(self, node, value, env):
        partials = [{}]
        for key_node, value_node in node.entries:
            extended = []
            for partial in partials:
                for key in self.evaluate(key_node, value, env):
                    if not isinstance(key, str):
                        raise FilterRuntimeError(f"object keys must be strings, not {describe(key)}")
                    for item in self.evaluate(value_node, value, env):
                        extended.append({**partial, key: item})
            partials = extended
        yield from partials

    def eval_Conditional(self, node, value, env):
        yield from self.branch(node.branches, node.otherwise, value, env)

    def branch(self, branches, otherwise, value, env):
        if not branches:
            yield from self.evaluate(otherwise, value, env)
            return
        (condition, body), rest = branches[0], branches[1:]
        for test in self.evaluate(condition, value, env):
            if is_true(test):
                yield from self.evaluate(body, value, env)
            else:
                yield from self.branch(rest, otherwise, value, env)

    def eval_FunctionCall(self, node, value, env):
        function = BUILTINS.get((node.name, len(node.arguments)))
        if function is None:
            raise FilterRuntimeError(f"{node.name}/{len(node.arguments)} is not defined")
        yield from function(self, value, node.arguments, env)


def clamp(index, length):
    """A slice bound: negative counts from the end, then limited to 0..length."""
    if index < 0:
        index += length
    return min(max(index, 0), length)


def normalize(number):
    """Integral floats become ints, so 1.5 + 1.5 prints as 3."""
    if isinstance(number, float) and number.is_integer() and abs(number) < 2 ** 53:
        return int(number)
    return number
