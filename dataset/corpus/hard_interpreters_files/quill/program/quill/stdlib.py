"""The builtin functions every program sees (docs/LANGUAGE.md lists them)."""

from quill.errors import QuillAssertionError, QuillRuntimeError
from quill.values import Builtin, to_display, to_repr, type_name, values_equal

BUILTINS = {}


def builtin(name, arity=None, needs_interpreter=False):
    """Register a Python function as the builtin ``name``."""
    def register(function):
        if name in BUILTINS:
            raise ValueError(f"builtin {name} registered twice")
        BUILTINS[name] = Builtin(name, function, arity, needs_interpreter)
        return function
    return register


def install_builtins(environment, interpreter):
    for name, value in BUILTINS.items():
        environment.define(name, value)


def expect(value, kind, function, position=1):
    if type_name(value) != kind:
        raise QuillRuntimeError(f"{function}() argument {position} must be a {kind}, not {type_name(value)}")
    return value


def expect_int(value, function, position=1):
    if isinstance(value, bool) or not isinstance(value, int):
        raise QuillRuntimeError(f"{function}() argument {position} must be an integer, not {type_name(value)}")
    return value


# -- output and conversion -------------------------------------------------------------------------
@builtin("print", needs_interpreter=True)
def _print(interpreter, line, *values):
    interpreter.write(" ".join(to_display(value) for value in values) + "\n")


@builtin("str", 1)
def _str(value):
    return to_display(value)


@builtin("repr", 1)
def _repr(value):
    return to_repr(value)


@builtin("type", 1)
def _type(value):
    return type_name(value)


@builtin("int", 1)
def _int(value):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise QuillRuntimeError(f"int() cannot read {to_repr(value)}") from None
    raise QuillRuntimeError(f"int() cannot convert a {type_name(value)}")


@builtin("float", 1)
def _float(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise QuillRuntimeError(f"float() cannot read {to_repr(value)}") from None
    raise QuillRuntimeError(f"float() cannot convert a {type_name(value)}")


@builtin("format", (1, 32))
def _format(template, *values):
    expect(template, "string", "format")
    pieces = template.split("{}")
    if len(pieces) - 1 != len(values):
        raise QuillRuntimeError(f"format() has {len(pieces) - 1} placeholders and {len(values)} values")
    out = pieces[0]
    for value, piece in zip(values, pieces[1:]):
        out += to_display(value) + piece
    return out


# -- collections -----------------------------------------------------------------------------------
@builtin("len", 1)
def _len(value):
    if isinstance(value, (str, list, dict)):
        return len(value)
    raise QuillRuntimeError(f"len() of a {type_name(value)}")


@builtin("push", 2)
def _push(items, value):
    expect(items, "list", "push").append(value)
    return items


@builtin("pop", 1)
def _pop(items):
    if not expect(items, "list", "pop"):
        raise QuillRuntimeError("pop() from an empty list")
    return items.pop()


@builtin("keys", 1)
def _keys(mapping):
    return list(expect(mapping, "map", "keys").keys())


@builtin("values", 1)
def _values(mapping):
    return list(expect(mapping, "map", "values").values())


@builtin("has", 2)
def _has(mapping, key):
    return key in expect(mapping, "map", "has")


@builtin("contains", 2)
def _contains(container, value):
    if isinstance(container, str):
        return expect(value, "string", "contains", 2) in container
    if isinstance(container, list):
        return any(values_equal(item, value) for item in container)
    if isinstance(container, dict):
        return value in container
    raise QuillRuntimeError(f"contains() on a {type_name(container)}")


@builtin("range", (1, 3))
def _range(*bounds):
    for position, bound in enumerate(bounds, 1):
        expect_int(bound, "range", position)
    if len(bounds) == 3 and bounds[2] == 0:
        raise QuillRuntimeError("range() step must not be zero")
    return list(range(*bounds))


@builtin("reverse", 1)
def _reverse(value):
    if isinstance(value, str):
        return value[::-1]
    return list(reversed(expect(value, "list", "reverse")))


@builtin("slice", (2, 3))
def _slice(value, start, end=None):
    if not isinstance(value, (str, list)):
        raise QuillRuntimeError(f"slice() of a {type_name(value)}")
    expect_int(start, "slice", 2)
    if end is not None:
        expect_int(end, "slice", 3)
    return value[start:end]


@builtin("sum", 1)
def _sum(items):
    total = 0
    for item in expect(items, "list", "sum"):
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise QuillRuntimeError(f"sum() of a list holding a {type_name(item)}")
        total += item
    return total


@builtin("min", (1, 32))
def _min(*values):
    items = values[0] if len(values) == 1 and isinstance(values[0], list) else list(values)
    if not items:
        raise QuillRuntimeError("min() of nothing")
    return min(items)


@builtin("max", (1, 32))
def _max(*values):
    items = values[0] if len(values) == 1 and isinstance(values[0], list) else list(values)
    if not items:
        raise QuillRuntimeError("max() of nothing")
    return max(items)


@builtin("abs", 1)
def _abs(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise QuillRuntimeError(f"abs() of a {type_name(value)}")
    return abs(value)


# -- functions over collections ----------------------------------------------------------------------
@builtin("map", 2, needs_interpreter=True)
def _map(interpreter, line, function, items):
    return [interpreter.call(function, [item], line) for item in expect(items, "list", "map", 2)]


@builtin("filter", 2, needs_interpreter=True)
def _filter(interpreter, line, function, items):
    from quill.values import is_truthy
    return [item for item in expect(items, "list", "filter", 2) if is_truthy(interpreter.call(function, [item], line))]


@builtin("reduce", 3, needs_interpreter=True)
def _reduce(interpreter, line, function, items, initial):
    accumulator = initial
    for item in expect(items, "list", "reduce", 2):
        accumulator = interpreter.call(function, [accumulator, item], line)
    return accumulator


@builtin("sort", (1, 2), needs_interpreter=True)
def _sort(interpreter, line, items, key=None):
    expect(items, "list", "sort")
    if key is None:
        keyed = [(item, item) for item in items]
    else:
        keyed = [(interpreter.call(key, [item], line), item) for item in items]
    kinds = {type_name(k) for k, _ in keyed}
    if len(kinds) > 1 or (kinds and kinds.pop() not in ("number", "string")):
        raise QuillRuntimeError("sort() needs all numbers or all strings")
    return [item for _, item in sorted(keyed, key=lambda pair: pair[0])]


# -- strings -----------------------------------------------------------------------------------------
@builtin("split", (1, 2))
def _split(text, separator=None):
    expect(text, "string", "split")
    if separator is None:
        return text.split()
    if expect(separator, "string", "split", 2) == "":
        return list(text)
    return text.split(separator)


@builtin("join", 2)
def _join(items, separator):
    expect(items, "list", "join")
    return expect(separator, "string", "join", 2).join(to_display(item) for item in items)


@builtin("upper", 1)
def _upper(text):
    return expect(text, "string", "upper").upper()


@builtin("lower", 1)
def _lower(text):
    return expect(text, "string", "lower").lower()


@builtin("trim", 1)
def _trim(text):
    return expect(text, "string", "trim").strip()


@builtin("replace", 3)
def _replace(text, old, new):
    return expect(text, "string", "replace").replace(expect(old, "string", "replace", 2), expect(new, "string", "replace", 3))


@builtin("ord", 1)
def _ord(text):
    if len(expect(text, "string", "ord")) != 1:
        raise QuillRuntimeError("ord() needs a one-character string")
    return ord(text)


@builtin("chr", 1)
def _chr(code):
    expect_int(code, "chr")
    if not 0 <= code <= 0x10FFFF:
        raise QuillRuntimeError(f"chr() code {code} out of range")
    return chr(code)


# -- errors --------------------------------------------------------------------------------------------
@builtin("assert", (1, 2))
def _assert(condition, message="assertion failed"):
    from quill.values import is_truthy
    if not is_truthy(condition):
        raise QuillAssertionError(to_display(message))
    return None


@builtin("error", 1)
def _error(message):
    raise QuillRuntimeError(to_display(message))
