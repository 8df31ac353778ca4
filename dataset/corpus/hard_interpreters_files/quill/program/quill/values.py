"""Runtime values. Quill numbers, strings, booleans, lists and maps are the Python ones (``nil`` is None);
functions are :class:`Function` (written in Quill) or :class:`Builtin` (written in Python)."""

from quill.errors import QuillRuntimeError


class Function:
    """A function written in Quill: its parameters, body and the scope it was defined in."""

    def __init__(self, name, params, body, closure):
        self.name = name
        self.params = params
        self.body = body
        self.closure = closure

    def __repr__(self):
        return f"<fn {self.name}>"


class Builtin:
    """A function of the standard library. ``arity`` is an exact count, a (min, max) pair, or None (any)."""

    def __init__(self, name, function, arity=None, needs_interpreter=False):
        self.name = name
        self.function = function
        self.arity = arity
        self.needs_interpreter = needs_interpreter

    def check_arity(self, count, line):
        if self.arity is None:
            return
        low, high = (self.arity, self.arity) if isinstance(self.arity, int) else self.arity
        if not low <= count <= high:
            expected = str(low) if low == high else f"{low} to {high}"
            raise QuillRuntimeError(f"{self.name}() takes {expected} arguments, got {count}", line)

    def __repr__(self):
        return f"<builtin {self.name}>"


def type_name(value):
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    if isinstance(value, (Function, Builtin)):
        return "function"
    raise TypeError(f"not a Quill value: {value!r}")


def is_truthy(value):
    """false, nil, 0, "", [] and {} are false; everything else is true."""
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0
    if isinstance(value, (str, list, dict)):
        return len(value) > 0
    return True


def values_equal(left, right):
    """Structural equality; a boolean never equals a number (Python's True == 1 does not hold here)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(values_equal(a, b) for a, b in zip(left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(values_equal(left[k], right[k]) for k in left)
    if type_name(left) != type_name(right):
        return False
    return left == right


def quote(text):
    """A string literal that reads back as ``text``: the inverse of the lexer."""
    out = ['"']
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char == '"':
            out.append('\\"')
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif char == "\0":
            out.append("\\0")
        elif ord(char) < 32:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def format_number(value):
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return {True: "nan"}.get(value != value, "inf" if value > 0 else "-inf")
        return repr(value)
    return str(value)


def to_display(value):
    """How ``print`` and ``str`` show a value: strings bare, everything inside a container in its repr form."""
    if isinstance(value, str):
        return value
    return to_repr(value)


def to_repr(value):
    """The literal form of a value (strings quoted and escaped), as the REPL and ``repr`` show it."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return format_number(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, list):
        return "[" + ", ".join(to_repr(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{to_repr(k)}: {to_repr(v)}" for k, v in value.items()) + "}"
    return repr(value)
