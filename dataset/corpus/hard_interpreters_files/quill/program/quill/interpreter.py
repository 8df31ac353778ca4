"""The tree-walking evaluator.

Scoping is lexical: a function sees the variables of the scope it was *defined* in (its closure), never those of
its caller. Every block opens a scope; every turn of a ``for`` loop opens a fresh one holding the loop variable,
so a closure made in the loop keeps the value of its own turn. ``return`` leaves the function from any depth of
loops; ``break`` and ``continue`` act on the innermost loop.
"""

import math
import sys

from quill import nodes
from quill.environment import Environment
from quill.errors import QuillRuntimeError
from quill.stdlib import install_builtins
from quill.values import Builtin, Function, is_truthy, to_display, type_name, values_equal

MAX_CALL_DEPTH = 400


class ControlSignal(Exception):
    """Unwinds the Python stack for break, continue and return (never reaches a user)."""


class BreakSignal(ControlSignal):
    pass


class ContinueSignal(ControlSignal):
    pass


class ReturnSignal(ControlSignal):
    def __init__(self, value):
        super().__init__()
        self.value = value


class Interpreter:
    """Runs programs against one global scope (the REPL keeps it between inputs)."""

    def __init__(self, out=None, argv=()):
        self.out = out if out is not None else sys.stdout
        self.globals = Environment()
        install_builtins(self.globals, self)
        self.globals.define("args", list(argv))
        self.environment = self.globals
        self.call_depth = 0

    # -- entry points ------------------------------------------------------------------------------
    def run(self, program):
        """Execute a Program; the value of its last expression statement (or nil)."""
        last = None
        for statement in program.statements:
            last = self.execute(statement, self.globals)
        return last

    def evaluate_in_globals(self, expression):
        return self.evaluate(expression, self.globals)

    def write(self, text):
        self.out.write(text)

    # -- statements --------------------------------------------------------------------------------
    def execute_block(self, statements, environment):
        previous = self.environment
        self.environment = environment
        try:
            for statement in statements:
                self.execute(statement, environment)
        finally:
            self.environment = previous

    def execute(self, statement, env):
        method = getattr(self, "exec_" + type(statement).__name__, None)
        if method is None:
            raise QuillRuntimeError(f"cannot execute {type(statement).__name__}", statement.line)
        return method(statement, env)

    def exec_ExpressionStatement(self, statement, env):
        return self.evaluate(statement.expression, env)

    def exec_Let(self, statement, env):
        env.define(statement.name, self.evaluate(statement.value, env))

    def exec_FunctionDef(self, statement, env):
        env.define(statement.name, Function(statement.name, statement.params, statement.body, env))

    def exec_Assign(self, statement, env):
        value = self.evaluate(statement.value, env)
        target = statement.target
        if statement.operator != "=":
            current = self.evaluate(target, env)
            value = self.arithmetic(statement.operator[0], current, value, statement.line)
        if isinstance(target, nodes.Name):
            env.assign(target.name, value, statement.line)
            return
        container = self.evaluate(target.target, env)
        key = self.evaluate(target.index, env)
        if isinstance(container, list):
            container[self.list_position(container, key, statement.line)] = value
        elif isinstance(container, dict):
            container[self.map_key(key, statement.line)] = value
        else:
            raise QuillRuntimeError(f"cannot assign into a {type_name(container)}", statement.line)

    def exec_Return(self, statement, env):
        if self.call_depth == 0:
            raise QuillRuntimeError("return outside a function", statement.line)
        value = None if statement.value is None else self.evaluate(statement.value, env)
        raise ReturnSignal(value)

    def exec_Break(self, statement, env):
        raise BreakSignal()

    def exec_Continue(self, statement, env):
        raise ContinueSignal()

    def exec_If(self, statement, env):
        if is_truthy(self.evaluate(statement.condition, env)):
            self.execute_block(statement.then_body, Environment(env))
        elif statement.else_body is not None:
            self.execute_block(statement.else_body, Environment(env))

    def exec_While(self, statement, env):
        while is_truthy(self.evaluate(statement.condition, env)):
            try:
                self.execute_block(statement.body, Environment(env))
            except BreakSignal:
                break
            except ContinueSignal:
                continue

    def exec_For(self, statement, env):
        iterable = self.evaluate(statement.iterable, env)
        if isinstance(iterable, dict):
            items = list(iterable.keys())
        elif isinstance(iterable, str):
            items = list(iterable)
        elif isinstance(iterable, list):
            items = list(iterable)
        else:
            raise QuillRuntimeError(f"cannot loop over a {type_name(iterable)}", statement.line)
        for item in items:
            scope = Environment(env)
            scope.define(statement.name, item)
            try:
                self.execute_block(statement.body, scope)
            except BreakSignal:
                break
            except ContinueSignal:
                continue

    # -- expressions -------------------------------------------------------------------------------
    def evaluate(self, expression, env):
        method = getattr(self, "eval_" + type(expression).__name__, None)
        if method is None:
            raise QuillRuntimeError(f"cannot evaluate {type(expression).__name__}", expression.line)
        return method(expression, env)

    def eval_Number(self, expression, env):
        return expression.value

    def eval_String(self, expression, env):
        return expression.value

    def eval_Boolean(self, expression, env):
        return expression.value

    def eval_Nil(self, expression, env):
        return None

    def eval_Name(self, expression, env):
        return env.lookup(expression.name, expression.line)

    def eval_ListLiteral(self, expression, env):
        return [self.evaluate(item, env) for item in expression.items]

    def eval_MapLiteral(self, expression, env):
        result = {}
        for key_node, value_node in expression.pairs:
            key = self.map_key(self.evaluate(key_node, env), key_node.line)
            result[key] = self.evaluate(value_node, env)
        return result

    def eval_Lambda(self, expression, env):
        return Function("<lambda>", expression.params, expression.body, env)

    def eval_Index(self, expression, env):
        container = self.evaluate(expression.target, env)
        key = self.evaluate(expression.index, env)
        if isinstance(container, (list, str)):
            return container[self.list_position(container, key, expression.line)]
        if isinstance(container, dict):
            key = self.map_key(key, expression.line)
            if key not in container:
                raise QuillRuntimeError(f"key {to_display(key)!r} not in map", expression.line)
            return container[key]
        raise QuillRuntimeError(f"cannot index a {type_name(container)}", expression.line)

    def eval_Call(self, expression, env):
        callee = self.evaluate(expression.callee, env)
        arguments = [self.evaluate(argument, env) for argument in expression.arguments]
        return self.call(callee, arguments, expression.line)

    def eval_Unary(self, expression, env):
        operand = self.evaluate(expression.operand, env)
        if expression.operator == "not":
            return not is_truthy(operand)
        if not is_number(operand):
            raise QuillRuntimeError(f"cannot negate a {type_name(operand)}", expression.line)
        return -operand

    def eval_Logical(self, expression, env):
        left = self.evaluate(expression.left, env)
        if expression.operator == "and":
            return self.evaluate(expression.right, env) if is_truthy(left) else left
        return left if is_truthy(left) else self.evaluate(expression.right, env)

    def eval_Binary(self, expression, env):
        left = self.evaluate(expression.left, env)
        right = self.evaluate(expression.right, env)
        operator = expression.operator
        if operator == "==":
            return values_equal(left, right)
        if operator == "!=":
            return not values_equal(left, right)
        if operator in ("<", "<=", ">", ">="):
            return self.compare(operator, left, right, expression.line)
        return self.arithmetic(operator, left, right, expression.line)

    # -- calls -------------------------------------------------------------------------------------
    def call(self, callee, arguments, line=None):
        """Call a Quill or builtin function with evaluated ``arguments`` (the stdlib's callbacks use this)."""
        if isinstance(callee, Builtin):
            callee.check_arity(len(arguments), line)
            try:
                if callee.needs_interpreter:
                    return callee.function(self, line, *arguments)
                return callee.function(*arguments)
            except QuillRuntimeError as error:
                if error.line is None:
                    error.line = line
                raise
        if not isinstance(callee, Function):
            raise QuillRuntimeError(f"cannot call a {type_name(callee)}", line)
        if len(arguments) != len(callee.params):
            raise QuillRuntimeError(
                f"{callee.name}() takes {len(callee.params)} arguments, got {len(arguments)}", line)
        if self.call_depth >= MAX_CALL_DEPTH:
            raise QuillRuntimeError(f"call depth over {MAX_CALL_DEPTH} (runaway recursion?)", line)
        scope = Environment(callee.closure)
        for name, value in zip(callee.params, arguments):
            scope.define(name, value)
        self.call_depth += 1
        try:
            self.execute_block(callee.body, scope)
        except ReturnSignal as signal:
            return signal.value
        except (BreakSignal, ContinueSignal):
            raise QuillRuntimeError("break or continue outside a loop", line) from None
        finally:
            self.call_depth -= 1
        return None

    # -- operators ---------------------------------------------------------------------------------
    def compare(self, operator, left, right, line):
        if not ((is_number(left) and is_number(right)) or (isinstance(left, str) and isinstance(right, str))):
            raise QuillRuntimeError(f"cannot compare {type_name(left)} and {type_name(right)}", line)
        if operator == "<":
            return left < right
        if operator == "<=":
            return left <= right
        if operator == ">":
            return left > right
        return left >= right

    def arithmetic(self, operator, left, right, line):
        if operator == "+":
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(left, list) and isinstance(right, list):
                return left + right
        if operator == "*" and isinstance(left, str) and is_number(right) and isinstance(right, int):
            return left * right
        if not (is_number(left) and is_number(right)):
            raise QuillRuntimeError(
                f"unsupported operand types for {operator}: {type_name(left)} and {type_name(right)}", line)
        if operator == "+":
            return left + right
        if operator == "-":
            return left - right
        if operator == "*":
            return left * right
        if operator in ("/", "//", "%") and right == 0:
            raise QuillRuntimeError("division by zero", line)
        if operator == "/":
            return left / right
        if operator == "//":
            return left // right
        if operator == "%":
            return left % right
        if operator == "**":
            if left == 0 and right < 0:
                raise QuillRuntimeError("zero to a negative power", line)
            result = left ** right
            if isinstance(result, complex) or (isinstance(result, float) and math.isnan(result)):
                raise QuillRuntimeError("power has no real result", line)
            return result
        raise QuillRuntimeError(f"unknown operator {operator}", line)

    # -- helpers -----------------------------------------------------------------------------------
    def list_position(self, container, key, line):
        if not (is_number(key) and isinstance(key, int)):
            raise QuillRuntimeError(f"index must be an integer, not {type_name(key)}", line)
        position = key + len(container) if key < 0 else key
        if not 0 <= position < len(container):
            raise QuillRuntimeError(f"index {key} out of range (length {len(container)})", line)
        return position

    def map_key(self, key, line):
        if isinstance(key, bool) or not isinstance(key, (str, int, float)):
            raise QuillRuntimeError(f"map keys are strings or numbers, not {type_name(key)}", line)
        return key


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)
